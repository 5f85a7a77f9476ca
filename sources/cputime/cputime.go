// Package cputime reads the CPU time this process has used, for the
// benchmarks that report work per CPU-second: on a machine shared with
// other work, CPU time says what wall time cannot (it does not count the
// time other programs held the core).
package cputime
