package pipeline

import (
	"testing"
)

// TestLexicalThresholdOnRealPairs measures the lexical relevance threshold
// on real data: tweets paired with the PolitiFact fact-checks that debunk
// them (Vo & Lee 2020). A fact-check should clear the threshold for its own
// tweet (recall) and not for a fact-check about something else (false
// positives: each tweet against the fact-check paired with the tweet 500
// places further on, skipped when it happens to be a pair too).
func TestLexicalThresholdOnRealPairs(t *testing.T) {
	tps, articles := voLee(t)
	type pair struct{ post, url string }
	var pairs []pair
	paired := map[pair]bool{}
	for _, p := range tps {
		pairs = append(pairs, pair{p.Post, p.URL})
		paired[pair{p.Post, p.URL}] = true
	}
	score := func(post, u string) float64 {
		a := articles[u]
		return LexicalRelevance(post, a.Title, a.Text())
	}
	threshold := Options{}.withDefaults().LexicalThreshold
	var hits, fps, negs int
	for i, p := range pairs {
		if score(p.post, p.url) >= threshold {
			hits++
		}
		other := pairs[(i+500)%len(pairs)].url
		if paired[pair{p.post, other}] {
			continue
		}
		negs++
		if score(p.post, other) >= threshold {
			fps++
		}
	}
	recall, fpr := float64(hits)/float64(len(pairs)), float64(fps)/float64(negs)
	if testing.Verbose() {
		for _, th := range []float64{0.15, 0.2, 0.25, 0.3, 0.35, 0.4} {
			var h, fp int
			for i, p := range pairs {
				if score(p.post, p.url) >= th {
					h++
				}
				if o := pairs[(i+500)%len(pairs)].url; !paired[pair{p.post, o}] && score(p.post, o) >= th {
					fp++
				}
			}
			t.Logf("  at %.2f: recall %.3f, false positives %.3f", th, float64(h)/float64(len(pairs)), float64(fp)/float64(negs))
		}
	}
	t.Logf("threshold %.2f on %d tweet/fact-check pairs: recall %.3f, false positives %.3f", threshold, len(pairs), recall, fpr)
	// The floors are the figures measured when the threshold was set, less
	// a margin: a change to the tokeniser or the weights that makes the
	// filter clearly worse fails here.
	if recall < 0.80 || fpr > 0.15 {
		t.Errorf("recall %.3f (want ≥ 0.80), false positives %.3f (want ≤ 0.15)", recall, fpr)
	}
}
