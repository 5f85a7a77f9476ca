package search

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Provider names of the reverse image searchers, as they appear in
// Hit.Provider.
const (
	NameSerpAPILens         = "serpapi-lens"
	NameSerpAPIReverseImage = "serpapi-reverse-image"
)

// ImageSearcher finds pages that show an image. The image must be at a
// public URL: the search service downloads it itself.
type ImageSearcher interface {
	Name() string
	ReverseImage(ctx context.Context, imageURL string) ([]Hit, error)
}

// ImageSearchers returns the reverse image searchers opts configure:
// Google Lens through SerpAPI when SerpAPIKey is set, none otherwise.
func ImageSearchers(opts Options) []ImageSearcher {
	if l := NewLens(opts); l != nil {
		return []ImageSearcher{l}
	}
	return nil
}

// Lens searches Google Lens through SerpAPI (engine=google_lens). Its hits
// are the pages Lens shows: exact matches (pages carrying the same image)
// first when the answer has them, then visual matches.
type Lens struct {
	endpoint
	base, key string
	// Type is SerpAPI's type parameter: "" (all), "exact_matches" or
	// "visual_matches". Exact matches suit fact-checking best, finding
	// where a picture appeared before, but cost a search of their own.
	Type string
}

// NewLens returns the Google Lens searcher, or nil when opts has no
// SerpAPIKey. It uses opts.Client, opts.Retry and opts.SerpAPIURL like the
// text providers.
func NewLens(opts Options) *Lens {
	if opts.SerpAPIKey == "" {
		return nil
	}
	return &Lens{endpoint: serpEndpoint(opts), base: or(opts.SerpAPIURL, DefaultSerpAPIURL), key: opts.SerpAPIKey}
}

func (l *Lens) Name() string { return NameSerpAPILens }

// lensMatch is one entry of visual_matches or exact_matches.
type lensMatch struct {
	Position int    `json:"position"`
	Title    string `json:"title"`
	Link     string `json:"link"`
	Source   string `json:"source"`
	Date     string `json:"date"`
	Snippet  string `json:"snippet"`
}

type lensAnswer struct {
	Error         string      `json:"error"`
	ExactMatches  []lensMatch `json:"exact_matches"`
	VisualMatches []lensMatch `json:"visual_matches"`
}

// ReverseImage asks Lens about the image at imageURL. Each hit's Query is
// imageURL.
func (l *Lens) ReverseImage(ctx context.Context, imageURL string) ([]Hit, error) {
	if err := checkImageURL(imageURL); err != nil {
		return nil, err
	}
	params := url.Values{"engine": {"google_lens"}, "url": {imageURL}, "api_key": {l.key}}
	if l.Type != "" {
		params.Set("type", l.Type)
	}
	var ans lensAnswer
	if err := l.serpGet(ctx, l.base, params, &ans); err != nil {
		return nil, err
	}
	if ans.Error != "" {
		return nil, serpError(ans.Error)
	}
	return imageHits(NameSerpAPILens, imageURL, ans.ExactMatches, ans.VisualMatches), nil
}

// ReverseImage searches Google's older reverse image search through SerpAPI
// (engine=google_reverse_image), whose hits are ordinary result pages
// with snippets. Lens finds more; this is the fallback for accounts or
// regions where Lens answers nothing.
type ReverseImage struct {
	endpoint
	base, key string
}

// NewReverseImage returns the reverse image searcher, or nil when opts has
// no SerpAPIKey.
func NewReverseImage(opts Options) *ReverseImage {
	if opts.SerpAPIKey == "" {
		return nil
	}
	return &ReverseImage{endpoint: serpEndpoint(opts), base: or(opts.SerpAPIURL, DefaultSerpAPIURL), key: opts.SerpAPIKey}
}

func (r *ReverseImage) Name() string { return NameSerpAPIReverseImage }

// ReverseImage asks Google about the image at imageURL.
func (r *ReverseImage) ReverseImage(ctx context.Context, imageURL string) ([]Hit, error) {
	if err := checkImageURL(imageURL); err != nil {
		return nil, err
	}
	params := url.Values{"engine": {"google_reverse_image"}, "image_url": {imageURL}, "api_key": {r.key}}
	var ans struct {
		Error        string      `json:"error"`
		ImageResults []lensMatch `json:"image_results"`
	}
	if err := r.serpGet(ctx, r.base, params, &ans); err != nil {
		return nil, err
	}
	if ans.Error != "" {
		return nil, serpError(ans.Error)
	}
	return imageHits(NameSerpAPIReverseImage, imageURL, ans.ImageResults), nil
}

func serpEndpoint(opts Options) endpoint {
	client := opts.Client
	if client == nil {
		client = defaultClient()
	}
	return endpoint{client: client, retry: opts.Retry, advice: keyAdvice("SERPAPI_API_KEY")}
}

func (e *endpoint) serpGet(ctx context.Context, base string, params url.Values, out any) error {
	return e.get(ctx, join(base, "/search.json")+"?"+params.Encode(), out)
}

// serpError turns SerpAPI's error field into an error; an empty result
// page is reported there too, and is no failure.
func serpError(msg string) error {
	if strings.Contains(msg, "hasn't returned any results") {
		return nil
	}
	return fmt.Errorf("SerpAPI: %s", msg)
}

// checkImageURL refuses what SerpAPI cannot fetch, before spending a
// search on it: the service downloads the image from the public web.
func checkImageURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("reverse image search needs the image's public http(s) URL, not %q", clip(raw, 80))
	}
	return nil
}

// imageHits turns match lists, in order of preference, into hits ranked
// 1, 2, … without repeating a page.
func imageHits(provider, imageURL string, lists ...[]lensMatch) []Hit {
	now := time.Now()
	seen := map[string]bool{}
	var hits []Hit
	for _, list := range lists {
		for _, m := range list {
			if m.Link == "" || seen[m.Link] {
				continue
			}
			seen[m.Link] = true
			hits = append(hits, Hit{URL: m.Link, Title: clean(m.Title), Snippet: clean(m.Snippet),
				Published: parseDate(m.Date, now), Provider: provider, Query: imageURL, Rank: len(hits) + 1})
		}
	}
	return hits
}

// imageAsText lets Run send image URLs, given as Query.Text, to an
// ImageSearcher.
type imageAsText struct{ ImageSearcher }

func (s imageAsText) Search(ctx context.Context, q Query) ([]Hit, error) {
	return s.ReverseImage(ctx, q.Text)
}

// RunImages sends every image URL to every image searcher concurrently and
// merges the hits as Run does (by canonical URL, best rank first); each
// hit's Query is the image URL that found it. Hits dated at or after
// before are dropped when before is not zero.
func RunImages(ctx context.Context, searchers []ImageSearcher, imageURLs []string, before time.Time) ([]Hit, []ProviderError) {
	ss := make([]Searcher, len(searchers))
	for i, s := range searchers {
		ss[i] = imageAsText{s}
	}
	qs := make([]Query, len(imageURLs))
	for i, u := range imageURLs {
		qs[i] = Query{Text: u, Before: before}
	}
	return Run(ctx, ss, qs)
}
