package archive

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serverCPU is the CPU time (user + system) the PostgreSQL backends
// connected to s's database have used, read from /proc (the test cluster
// runs on this machine); 0 where /proc cannot tell. Background processes
// (autovacuum, checkpointer, WAL writer) are not in it.
func serverCPU(tb testing.TB, s *Store) time.Duration {
	tb.Helper()
	rows, err := s.db.QueryContext(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var total time.Duration
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			tb.Fatal(err)
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0
		}
		// After the command's ")": state is field 3, utime 14, stime 15,
		// in clock ticks (100 a second on Linux).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		for _, i := range []int{11, 12} {
			ticks, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return 0
			}
			total += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return total
}
