package testkit

// What a piece of work costs the process in memory, for the benchmarks
// that report it: the highest live heap and goroutine count sampled while
// the work runs, and the process's peak resident set, which also counts
// memory outside Go's heap (the SQLite driver's page cache).

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MemSampler samples the live heap, the goroutine count and the process's
// anonymous resident memory until Stop.
type MemSampler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak MemPeak
}

// MemPeak is the highest of each figure a MemSampler saw.
type MemPeak struct {
	Heap       uint64 // live heap objects, bytes
	Goroutines int    // the sampler's own included
	// AnonRSS is the resident memory not backed by a file (RssAnon, 0
	// where /proc is absent): Go's heap and stacks and what C-style
	// allocators took (the SQLite driver's page cache), but not a
	// database file's pages mapped in to read, which the kernel can drop.
	AnonRSS uint64
}

// SampleMemory samples every interval, and once at once.
func SampleMemory(every time.Duration) *MemSampler {
	s := &MemSampler{stop: make(chan struct{})}
	s.wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(sample)
			s.peak.Heap = max(s.peak.Heap, sample[0].Value.Uint64())
			s.peak.Goroutines = max(s.peak.Goroutines, runtime.NumGoroutine())
			s.peak.AnonRSS = max(s.peak.AnonRSS, AnonRSS())
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	})
	return s
}

// Stop ends the sampling and returns the highest figures seen.
func (s *MemSampler) Stop() MemPeak {
	close(s.stop)
	s.wg.Wait()
	return s.peak
}

// AnonRSS is the process's anonymous resident memory now, in bytes (see
// MemPeak.AnonRSS), 0 where /proc is absent.
func AnonRSS() uint64 { return uint64(status("RssAnon:")) << 10 }

// PeakRSS is the process's peak resident set in KiB since it started or
// since the last ResetPeakRSS, 0 where /proc is absent. It counts the
// pages of files mapped in (see MemPeak.AnonRSS).
func PeakRSS() float64 { return status("VmHWM:") }

// status reads a figure in kB from /proc/self/status, 0 where it is
// absent.
func status(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return v
		}
	}
	return 0
}

// ResetPeakRSS sets the peak resident set back to the current one (Linux
// 4.0 and later), so that PeakRSS then tells what the work that follows
// needed. It reports whether it could.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
