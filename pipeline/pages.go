package pipeline

import (
	"context"
	"sync"

	"github.com/musecheck/muse/sources"
)

// pageMemory keeps the bytes of the pages read recently, as served, so a
// case can store a snapshot of each evidence page with its raw HTML without
// fetching it again. It is bounded by total size: the oldest pages go first.
// The Check does not carry raw pages (it would grow by megabytes and every
// event copies it).
type pageMemory struct {
	mu    sync.Mutex
	max   int
	size  int
	order []string
	pages map[string][]byte // canonical URL (as asked and final) → bytes
}

// pageMemoryBytes holds the pages of a few checks running at once (a
// batch of 4 reading 30 pages of ~300 KB each).
const pageMemoryBytes = 64 << 20

func newPageMemory(max int) *pageMemory {
	return &pageMemory{max: max, pages: map[string][]byte{}}
}

func (m *pageMemory) put(raw []byte, urls ...string) {
	if m == nil || len(raw) == 0 || len(raw) > m.max {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range urls {
		k := sources.Key(u)
		if k == "" {
			continue
		}
		if old, ok := m.pages[k]; ok {
			m.size -= len(old)
		} else {
			m.order = append(m.order, k)
		}
		m.pages[k] = raw
		m.size += len(raw)
	}
	for m.size > m.max && len(m.order) > 0 {
		k := m.order[0]
		m.order = m.order[1:]
		m.size -= len(m.pages[k])
		delete(m.pages, k)
	}
}

func (m *pageMemory) get(u string) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.pages[sources.Key(u)]
	return b, ok
}

// RawPager is a Fetcher that also hands back the bytes of pages it read
// recently.
type RawPager interface {
	RawPage(u string) ([]byte, bool)
}

// RawPage returns the bytes of a page this engine read recently, as served
// (before charset conversion), by the URL asked for or the final one; false
// when the fetcher does not keep pages or has let this one go.
func (e *Engine) RawPage(u string) ([]byte, bool) {
	if p, ok := e.deps.Fetcher.(RawPager); ok {
		return p.RawPage(u)
	}
	return nil, false
}

// PageFetcher is what RememberingFetcher wraps: a fetch that also returns
// the page's bytes as served (raw) beside the body converted to UTF-8.
type PageFetcher interface {
	FetchPage(ctx context.Context, u string) (raw, body []byte, final string, err error)
}

// RememberingFetcher is the engine's Fetcher over f, keeping the bytes of
// the pages it read recently (up to 64 MiB) for Engine.RawPage.
func RememberingFetcher(f PageFetcher) Fetcher {
	return &fetcherAdapter{f: f, pages: newPageMemory(pageMemoryBytes)}
}

// fetcherAdapter is the Fetcher over sources/fetch, remembering the pages
// it read.
type fetcherAdapter struct {
	f     PageFetcher
	pages *pageMemory
}

func (a *fetcherAdapter) Fetch(ctx context.Context, u string) ([]byte, string, error) {
	raw, body, final, err := a.f.FetchPage(ctx, u)
	if err != nil {
		return nil, "", err
	}
	a.pages.put(raw, u, final)
	return body, final, nil
}

func (a *fetcherAdapter) RawPage(u string) ([]byte, bool) { return a.pages.get(u) }
