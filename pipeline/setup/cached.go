package setup

import (
	"context"
	"net/http"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/spend"
)

// NewCachedLLMClient is NewLLMClient for a model called outside the engine
// (muse eval's judge and model-alone baseline): its calls go through the
// response cache, so a request made before is answered from it at no cost
// (--no-cache asks again), and the configuration's per-day spend cap holds
// them. close closes the cache and the ledger. When the cache cannot be
// opened the client works without it.
func NewCachedLLMClient(ctx context.Context, cfg *Config, opts pipeline.Options) (client *llm.Client, close func() error, err error) {
	var closers []func() error
	close = func() error {
		for _, c := range closers {
			c()
		}
		return nil
	}
	cache, cerr := openCache(ctx, cfg)
	if cerr == nil {
		closers = append(closers, cache.Close)
	} else {
		cache = nil
	}
	var guard llm.SpendGuard
	if cfg.SpendCapDayUSD > 0 {
		ledger, err := spend.Open(ctx, cfg.LedgerPath())
		if err != nil {
			close()
			return nil, nil, err
		}
		closers = append(closers, ledger.Close)
		guard = ledger.DayGuard(cfg.SpendCapDayUSD)
	}
	tr := newTransport()
	closers = append(closers, func() error { tr.CloseIdleConnections(); return nil })
	client, err = newLLMClient(ctx, cfg, opts, cachedClient(cache, &http.Client{Transport: tr}),
		&http.Client{Timeout: ollamaDetectTimeout, Transport: tr}, guard, cache)
	if err != nil {
		close()
		return nil, nil, err
	}
	return client, close, nil
}
