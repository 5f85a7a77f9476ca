package setup

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// reSecretKey is a configuration line that holds a secret: an API key, a
// token, a password, or a database URL with one.
var reSecretKey = regexp.MustCompile(`(?im)^\s*"?[a-z0-9_.-]*(?:key|token|password|secret)[a-z0-9_-]*"?\s*=\s*['"][^'"\s]+|^\s*database_url\s*=\s*['"][^'"]*:[^'"@/]+@`)

// doctorFiles warns of files others may read: a configuration file that
// holds a key, and the stores (cases, archive, cache, spend ledger, with
// SQLite's -wal and -shm) when they are files.
func doctorFiles(cfg *Config) DoctorItem {
	it := DoctorItem{Name: "file permissions", Status: DoctorOK, Detail: "the configuration and the stores are readable by you alone"}
	var open []string
	if cfg.File != "" {
		if st, err := os.Stat(cfg.File); err == nil && st.Mode().Perm()&0o077 != 0 {
			if b, err := os.ReadFile(cfg.File); err == nil && reSecretKey.Match(b) {
				open = append(open, fmt.Sprintf("%s (%o, holds a key)", cfg.File, st.Mode().Perm()))
			}
		}
	}
	var fix []string
	if len(open) > 0 {
		fix = append(fix, cfg.File)
	}
	if cfg.DatabaseURL == "" {
		for _, p := range []string{cfg.CasesPath(), cfg.ArchivePath(), cfg.CachePath(), cfg.LedgerPath()} {
			for _, f := range []string{p, p + "-wal", p + "-shm"} {
				st, err := os.Stat(f)
				if err != nil || !st.Mode().IsRegular() {
					continue
				}
				if m := st.Mode().Perm(); m&0o077 != 0 {
					open = append(open, fmt.Sprintf("%s (%o)", f, m))
					fix = append(fix, f)
				}
			}
		}
	}
	if len(open) == 0 {
		return it
	}
	it.Status = DoctorWarn
	it.Detail = "others on this machine can read " + strings.Join(open, ", ")
	it.Fix = "chmod 600 " + strings.Join(fix, " ")
	return it
}
