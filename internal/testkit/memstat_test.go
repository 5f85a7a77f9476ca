package testkit

import (
	"runtime"
	"testing"
	"time"
)

var keep [][]byte

// A 64 MiB allocation held while sampling shows in the peak heap, and in
// the peak resident set once written to.
func TestSamplerSeesAnAllocation(t *testing.T) {
	runtime.GC()
	reset := ResetPeakRSS()
	before := PeakRSS()
	s := SampleMemory(time.Millisecond)
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	keep = append(keep, b)
	time.Sleep(20 * time.Millisecond)
	p := s.Stop()
	if p.Heap < 64<<20 {
		t.Errorf("peak heap %d MiB while 64 MiB were held", p.Heap>>20)
	}
	if p.Goroutines < 2 {
		t.Errorf("peak goroutines %d: the test's and the sampler's at least", p.Goroutines)
	}
	if runtime.GOOS == "linux" && p.AnonRSS < 64<<20 {
		t.Errorf("peak anonymous RSS %d MiB while 64 MiB were written", p.AnonRSS>>20)
	}
	if after := PeakRSS(); reset && after-before < 60<<10 {
		t.Errorf("peak RSS grew %.0f KiB after writing 64 MiB", after-before)
	}
	keep = nil
}
