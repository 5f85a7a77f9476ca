//go:build !unix

package testkit

import "time"

// ProcessCPU cannot read CPU time on this system: ok is false.
func ProcessCPU() (d time.Duration, ok bool) { return 0, false }
