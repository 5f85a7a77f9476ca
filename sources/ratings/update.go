package ratings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultUpdateURL is where the MBFC browser extension publishes its data.
const DefaultUpdateURL = "https://drmikecrowe.github.io/mbfcext/v5/data/combined.json"

// UpdateOptions configures Update.
type UpdateOptions struct {
	// URL to download combined.json from; empty: DefaultUpdateURL.
	URL string
	// DataDir is muse's data folder; the file goes to InstalledPath(DataDir).
	DataDir string
	// Client makes the request; nil: a client with a 2-minute timeout that
	// honours HTTP(S)_PROXY.
	Client *http.Client
	// MaxBytes caps the download; zero: 64 MiB (the file is about 3 MB).
	MaxBytes int64
	// MinSources is the fewest publishers a good file has; zero: 1,000
	// (the real file has nearly 10,000, so fewer means a broken export).
	MinSources int
}

// UpdateResult says what Update installed.
type UpdateResult struct {
	Path     string // the installed file
	Count    int    // publishers in it
	Date     string // its export date, YYYY-MM-DD
	Previous int    // publishers in the file it replaced; 0 when there was none
}

// Update downloads the MBFC extension's combined.json, checks that it
// parses, rates at least MinSources publishers and is not less than half
// the size of the installed file (a sign of a truncated export), and only
// then replaces the installed file atomically. On any failure the previous
// file stays in place and the error says why.
func Update(ctx context.Context, opts UpdateOptions) (UpdateResult, error) {
	if opts.DataDir == "" {
		return UpdateResult{}, errors.New("update ratings: no data folder configured")
	}
	u := opts.URL
	if u == "" {
		u = DefaultUpdateURL
	}
	data, err := download(ctx, opts, u)
	if err != nil {
		return UpdateResult{}, fmt.Errorf("update ratings from %s: %w (kept the previous file)", u, err)
	}
	rf, err := parseMBFC(data)
	if err != nil {
		return UpdateResult{}, fmt.Errorf("update ratings from %s: downloaded file is bad: %w (kept the previous file)", u, err)
	}
	res := UpdateResult{Path: InstalledPath(opts.DataDir), Count: rf.t.len(), Date: rf.date}
	minSources := opts.MinSources
	if minSources == 0 {
		minSources = 1000
	}
	if res.Count < minSources {
		return UpdateResult{}, fmt.Errorf("update ratings from %s: downloaded file rates only %d publishers, want at least %d (kept the previous file)", u, res.Count, minSources)
	}
	if old, err := loadRatingsFile(res.Path); err == nil {
		res.Previous = old.t.len()
		if res.Count*2 < res.Previous {
			return UpdateResult{}, fmt.Errorf("update ratings from %s: downloaded file rates %d publishers, under half of the %d installed (kept the previous file)", u, res.Count, res.Previous)
		}
	} // a missing or broken installed file is simply replaced
	if err := writeFileAtomic(res.Path, data); err != nil {
		return UpdateResult{}, fmt.Errorf("update ratings: install %s: %w", res.Path, err)
	}
	return res, nil
}

func download(ctx context.Context, opts UpdateOptions, u string) ([]byte, error) {
	client := opts.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	maxBytes := opts.MaxBytes
	if maxBytes == 0 {
		maxBytes = 64 << 20
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("file larger than %d bytes", maxBytes)
	}
	return data, nil
}
