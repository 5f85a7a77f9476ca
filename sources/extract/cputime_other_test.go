//go:build !unix

package extract

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
