package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// profiled runs main, the muse command in a process a test started, and
// with MUSE_TEST_PROFILE set to a directory writes the process's CPU,
// block and mutex profiles there (cpu-PID.pprof, block-PID.pprof,
// mutex-PID.pprof) when it returns: how BenchmarkQueueThroughput's
// workers are profiled.
func profiled(main func() int) int {
	dir := os.Getenv("MUSE_TEST_PROFILE")
	if dir == "" {
		return main()
	}
	name := func(kind string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", kind, os.Getpid())) }
	f, err := os.Create(name("cpu"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return main()
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return main()
	}
	runtime.SetBlockProfileRate(int(1e5)) // an event every 100 µs blocked
	runtime.SetMutexProfileFraction(5)
	code := main()
	pprof.StopCPUProfile()
	for _, kind := range []string{"block", "mutex"} {
		if w, err := os.Create(name(kind)); err == nil {
			pprof.Lookup(kind).WriteTo(w, 0)
			w.Close()
		}
	}
	return code
}
