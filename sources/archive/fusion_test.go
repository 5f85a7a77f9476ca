package archive

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func urls(hs []Hit) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.URL)
	}
	return strings.Join(out, " ")
}

func TestFuse(t *testing.T) {
	a, b, c, d := Hit{URL: "https://x.example/a"}, Hit{URL: "https://x.example/b"}, Hit{URL: "https://x.example/c"}, Hit{URL: "https://www.x.example/d"}
	lex := []Hit{a, b, c}
	if got := Fuse(lex, nil); urls(got) != urls(lex) {
		t.Errorf("Fuse without a dense ranking = %s; want the lexical order", urls(got))
	}
	// a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62 + 1/63, d: 1/64.
	got := Fuse(lex, []Hit{c, a, b, {URL: "https://x.example/d?utm_source=feed"}})
	if want := urls([]Hit{a, c, b, {URL: "https://x.example/d?utm_source=feed"}}); urls(got) != want {
		t.Errorf("Fuse = %s; want %s", urls(got), want)
	}
	if want := 1.0/61 + 1.0/62; math.Abs(got[0].Score-want) > 1e-12 {
		t.Errorf("fused score %v; want %v", got[0].Score, want)
	}
	// The same page under another form of its URL is one page.
	if got := Fuse([]Hit{d}, []Hit{{URL: "https://x.example/d"}}); len(got) != 1 {
		t.Errorf("Fuse kept %d copies of one page", len(got))
	}
}

// conceptEmbedder is a deterministic in-process embedder: each dimension
// is a concept, several words share one, so it finds what shares no word.
type conceptEmbedder struct{ fail bool }

var concepts = [][]string{
	{"vaccine", "vaccines", "jab", "jabs", "shot", "shots", "vaccination"},
	{"autism", "autistic"},
	{"tax", "levy", "levies"},
	{"soda", "beverage", "drinks"},
	{"crime", "violence", "violent"},
}

func (e conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.fail {
		return nil, errors.New("embeddings server: 503")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts))
		for _, w := range strings.Fields(strings.ToLower(t)) {
			w = strings.Trim(w, ".,!?:;'\"")
			for k, c := range concepts {
				for _, x := range c {
					if w == x {
						v[k]++
					}
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestHybridSearch(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	if err := s.AddAll(ctx, sample); err != nil {
		t.Fatal(err)
	}
	// Lexically the soda words win; "jabs", "autistic" and "violence"
	// share no stem with the vaccine or crime pages and count only densely,
	// which puts the vaccine page first and the soda page last.
	const q = "jabs make children autistic, studies found, violence and soda prices rose"
	lex, err := s.Search(ctx, q, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hyb, err := s.HybridSearch(ctx, q, SearchOptions{}, conceptEmbedder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lex) == 0 || lex[0].URL == sample[2].URL {
		t.Fatalf("lexical search already ranks the vaccine page first (%s): the test shows nothing", urls(lex))
	}
	if len(hyb) == 0 || hyb[0].URL != sample[2].URL {
		t.Errorf("hybrid = %s; want the vaccine page first (lexical: %s)", urls(hyb), urls(lex))
	}
	plain, err := s.HybridSearch(ctx, q, SearchOptions{}, nil)
	if err != nil || urls(plain) != urls(lex) {
		t.Errorf("HybridSearch without an embedder = %s, %v; want Search's %s", urls(plain), err, urls(lex))
	}
	got, err := s.HybridSearch(ctx, q, SearchOptions{Limit: 1}, conceptEmbedder{fail: true})
	if err == nil || !strings.Contains(err.Error(), "503") || len(got) != 1 || got[0].URL != lex[0].URL {
		t.Errorf("failing embedder: %s, %v; want the lexical best with the error", urls(got), err)
	}
}
