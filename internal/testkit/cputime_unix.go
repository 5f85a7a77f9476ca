//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user + system) this process has used so far;
// ok is false where it cannot be read. Benchmarks that report work per
// CPU-second use it: on a machine shared with other work, CPU time says
// what wall time cannot (it does not count the time other programs held
// the core).
func ProcessCPU() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
