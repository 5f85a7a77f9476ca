package testkit

import (
	"runtime"
	"testing"
	"time"
)

// Busy work shows as CPU time; sleeping does not.
func TestProcessCPU(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage")
	}
	c0, ok := ProcessCPU()
	if !ok {
		t.Fatal("CPU time not read")
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	c1, _ := ProcessCPU()
	if c1-c0 < 10*time.Millisecond {
		t.Errorf("50 ms of busy work used %v of CPU", c1-c0)
	}
	time.Sleep(100 * time.Millisecond)
	c2, _ := ProcessCPU()
	if c2-c1 > 50*time.Millisecond {
		t.Errorf("100 ms of sleep used %v of CPU (%d)", c2-c1, x)
	}
}
