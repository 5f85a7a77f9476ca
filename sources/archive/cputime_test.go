package archive

import (
	"time"

	"github.com/musecheck/muse/internal/testkit"
)

// cpuNow is this process's CPU time so far (0 where it cannot be read).
func cpuNow() time.Duration {
	d, _ := testkit.ProcessCPU()
	return d
}
