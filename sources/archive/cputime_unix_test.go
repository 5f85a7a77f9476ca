//go:build unix

package archive

import (
	"syscall"
	"time"
)

// cpuNow is this process's CPU time (user + system): on a machine shared
// with other work, a benchmark's CPU time says what its wall time cannot.
// (sources/extract's tests keep the same helper; a shared test-helper
// package would hold one.)
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
