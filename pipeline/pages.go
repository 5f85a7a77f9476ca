package pipeline

import (
	"cmp"
	"context"
	"net/http"
	"sync"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
)

// pageMemory keeps the bytes of the pages read recently, as served, with
// their HTTP response headers, so a case can store a snapshot of each
// evidence page with its raw HTML and headers without fetching it again. It
// is bounded by total size: the oldest pages go first. The Check does not
// carry raw pages (it would grow by megabytes and every event copies it).
type pageMemory struct {
	mu    sync.Mutex
	max   int
	size  int
	order []string
	pages map[string]servedPage // canonical URL (as asked and final) → page
}

// servedPage is a page's bytes and response headers as served.
type servedPage struct {
	raw    []byte
	header http.Header
}

// pageMemoryBytes holds the pages of a few checks running at once (a
// batch of 4 reading 30 pages of ~300 KB each).
const pageMemoryBytes = 64 << 20

func newPageMemory(max int) *pageMemory {
	return &pageMemory{max: max, pages: map[string]servedPage{}}
}

func (m *pageMemory) put(p servedPage, urls ...string) {
	if m == nil || len(p.raw) == 0 || len(p.raw) > m.max {
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
			m.size -= len(old.raw)
		} else {
			m.order = append(m.order, k)
		}
		m.pages[k] = p
		m.size += len(p.raw)
	}
	for m.size > m.max && len(m.order) > 0 {
		k := m.order[0]
		m.order = m.order[1:]
		m.size -= len(m.pages[k].raw)
		delete(m.pages, k)
	}
}

func (m *pageMemory) get(u string) (servedPage, bool) {
	if m == nil {
		return servedPage{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pages[sources.Key(u)]
	return p, ok
}

// RawPager is a Fetcher that also hands back the bytes and response
// headers of pages it read recently.
type RawPager interface {
	RawPage(u string) ([]byte, bool)
	PageHeader(u string) (http.Header, bool)
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

// PageHeader returns the HTTP response headers of a page this engine read
// recently, as received; false when the fetcher does not keep pages, has
// let this one go, or read it from its cache (no headers).
func (e *Engine) PageHeader(u string) (http.Header, bool) {
	if p, ok := e.deps.Fetcher.(RawPager); ok {
		return p.PageHeader(u)
	}
	return nil, false
}

// PageFetcher is what RememberingFetcher wraps: sources/fetch's Fetcher.
type PageFetcher interface {
	Fetch(ctx context.Context, u string) (*fetch.Page, error)
}

// RememberingFetcher is the engine's Fetcher over f, keeping the bytes and
// headers of the pages it read recently (up to 64 MiB) for Engine.RawPage
// and Engine.PageHeader.
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
	p, err := a.f.Fetch(ctx, u)
	if err != nil {
		return nil, "", err
	}
	final := cmp.Or(p.FinalURL, u)
	raw := p.Raw
	if len(raw) == 0 {
		raw = p.Body
	}
	var header http.Header
	if !p.FromCache {
		header = p.Header
	}
	a.pages.put(servedPage{raw: raw, header: header}, u, final)
	return p.Body, final, nil
}

func (a *fetcherAdapter) RawPage(u string) ([]byte, bool) {
	p, ok := a.pages.get(u)
	return p.raw, ok
}

func (a *fetcherAdapter) PageHeader(u string) (http.Header, bool) {
	p, ok := a.pages.get(u)
	return p.header, ok && p.header != nil
}
