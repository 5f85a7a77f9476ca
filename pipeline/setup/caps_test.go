package setup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCacheAndSpendSettings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	os.WriteFile(file, []byte("cache_ttl = \"2h\"\nspend_cap_check_usd = 0.5\nspend_cap_day_usd = 5\nopenai_api_key = \"sk-file\"\n"), 0o644)
	env := map[string]string{"HOME": dir, "MUSE_SPEND_CAP_DAY_USD": "$2.25", "MUSE_NO_CACHE": "1", "BRAVE_API_KEY": "brave-key"}
	c, err := Load(file, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.CacheTTL != 2*time.Hour || c.SpendCapCheckUSD != 0.5 || c.SpendCapDayUSD != 2.25 || !c.NoCache {
		t.Errorf("got ttl %v, caps %v/%v, no cache %v", c.CacheTTL, c.SpendCapCheckUSD, c.SpendCapDayUSD, c.NoCache)
	}
	if got := c.Secrets(); !slices.Equal(got, []string{"sk-file", "brave-key"}) {
		t.Errorf("Secrets() = %q", got)
	}
	for k, v := range map[string]string{"MUSE_SPEND_CAP_CHECK_USD": "lots", "MUSE_CACHE_TTL": "a day"} {
		_, err := Load(file, func(n string) string {
			if n == k {
				return v
			}
			return env[n]
		})
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%q: error %v, want one naming the variable", k, v, err)
		}
	}
}
