package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartup runs the built muse binary (go build, not this test
// binary, whose own packages would be counted) for commands that touch no
// network, each run a fresh process with its own XDG folders. Reported per
// run:
//
//	ms/run              wall-clock milliseconds from exec to exit
//	cpu_ms/run          CPU milliseconds the process used (user + system),
//	                    steadier than wall-clock on a busy machine
//	init_ms             package initialisation (GODEBUG=inittrace=1: the
//	                    clock time of every package's init, summed)
//	dateparser_init_ms  the part of it in go-dateparser's packages, which
//	                    build the date data of every locale at init
//	gcs/run             garbage collections in the whole run
//	                    (GODEBUG=gctrace=1)
//
// Run: go test -run '^$' -bench Startup -benchtime 20x ./cli
func BenchmarkStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "muse")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/musecheck/muse").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"sources", "rate", "reuters.com"}, {"cases"}} {
		b.Run(strings.Join(args, "_"), func(b *testing.B) {
			dir := b.TempDir()
			env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
				"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
				"MUSE_DATABASE_URL=", "GODEBUG=inittrace=1,gctrace=1")
			var wall, cpu time.Duration
			var initMS, dpMS, gcs float64
			b.ResetTimer()
			for range b.N {
				cmd := exec.Command(bin, args...)
				var stderr bytes.Buffer
				cmd.Env, cmd.Stdout, cmd.Stderr = env, nil, &stderr
				t0 := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("muse %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				wall += time.Since(t0)
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				all, dp := initTrace(stderr.Bytes())
				initMS += all
				dpMS += dp
				for line := range bytes.Lines(stderr.Bytes()) {
					if bytes.HasPrefix(line, []byte("gc ")) {
						gcs++
					}
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(wall.Milliseconds())/n, "ms/run")
			b.ReportMetric(float64(cpu.Milliseconds())/n, "cpu_ms/run")
			b.ReportMetric(initMS/n, "init_ms")
			b.ReportMetric(dpMS/n, "dateparser_init_ms")
			b.ReportMetric(gcs/n, "gcs/run")
		})
	}
}

// initTrace sums the clock milliseconds of the package inits in a
// GODEBUG=inittrace=1 report ("init PKG @0.5 ms, 2.1 ms clock, …"), and
// those of go-dateparser's packages.
func initTrace(stderr []byte) (all, dateparser float64) {
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		all += ms
		if strings.HasPrefix(f[1], "github.com/markusmobius/go-dateparser") {
			dateparser += ms
		}
	}
	return all, dateparser
}
