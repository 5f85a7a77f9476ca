//go:build !unix

package cputime

import "time"

// Process cannot read CPU time on this system: ok is false.
func Process() (d time.Duration, ok bool) { return 0, false }
