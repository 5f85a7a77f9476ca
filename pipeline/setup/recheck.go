package setup

import (
	"context"

	"github.com/musecheck/muse/sources/fetch"
)

// RecheckFetcher is the fetcher a recheck of saved cases reads pages with
// (muse cases recheck, the worker's scheduled recheck): the safe fetcher
// as a check uses it, with the archive as its store, so that each page is
// asked for with the ETag and Last-Modified the archive kept and an
// unchanged page costs a 304. When the archive cannot be opened the pages
// are read whole, and warn says why. close releases the archive and idle
// connections.
func RecheckFetcher(ctx context.Context, cfg *Config) (f *fetch.Fetcher, close func() error, warn error) {
	fo := FetchOptions(cfg)
	store, err := openArchive(ctx, cfg)
	if err == nil {
		fo.Store = store
	}
	f = fetch.New(fo)
	return f, func() error {
		f.CloseIdleConnections()
		if store != nil {
			return store.Close()
		}
		return nil
	}, err
}
