package watch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// On real post and claim texts: every repost form of a text (a retweet
// prefix, another short link, other case and punctuation) falls in the
// text's cluster, and distinct texts seldom share one.
func TestClustersOnRealTexts(t *testing.T) {
	texts := realPostTexts(t)
	ix := newIndex(1 << 20)
	merged, same := 0, 0
	var examples []string
	for i, s := range texts {
		sk := sketchOf(s)
		if !sk.ok {
			continue
		}
		if c, found := ix.find(sk, nil); found {
			if slices.Equal(words(s), words(texts[c])) {
				same++ // the same words, other handles or links: a copy
				continue
			}
			merged++
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("%q ~ %q", s, texts[c]))
			}
			continue
		}
		ix.add(int64(i), sk, nil)
	}
	rate := float64(merged) / float64(len(texts))
	t.Logf("%d distinct real texts: %d copies (the same words, other handles or links) clustered; %d (%.2f%%) reworded ones fell in another's cluster, e.g. %s",
		len(texts), same, merged, 100*rate, strings.Join(examples, "; "))
	if rate > 0.01 {
		t.Errorf("%.2f%% of distinct texts merged, want at most 1%%", 100*rate)
	}
	missed := 0
	for _, s := range texts {
		sk := sketchOf(s)
		if !sk.ok || sk.exact {
			continue
		}
		for _, v := range []string{"RT @newsdesk: " + s, s + " https://t.co/Xy12AbC9", strings.ToUpper(s), strings.TrimRight(s, ".!?") + "!!!"} {
			vs := sketchOf(v)
			if vs.exact || similarity(&sk.sig, &vs.sig) < MinSimilarity {
				missed++
				if missed <= 3 {
					t.Errorf("%q is not a near-duplicate of %q", v, s)
				}
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d repost forms missed", missed)
	}
	// A repost that adds words of its own ("Wow." before, a hashtag after).
	n, kept := 0, 0
	for _, s := range texts {
		sk := sketchOf(s)
		if !sk.ok || sk.exact {
			continue
		}
		n++
		if v := sketchOf("Wow. " + s + " #news"); similarity(&sk.sig, &v.sig) >= MinSimilarity {
			kept++
		}
	}
	t.Logf("a repost adding two words stays in its text's cluster for %d of %d texts (%.1f%%)", kept, n, 100*float64(kept)/float64(n))
	if float64(kept) < 0.95*float64(n) {
		t.Errorf("a repost adding two words kept for %d of %d texts, want 95%%", kept, n)
	}
}

func TestShortTextsMatchExactly(t *testing.T) {
	a, b, c := sketchOf("Good morning!"), sketchOf("good MORNING"), sketchOf("Good evening")
	if !a.exact || !b.exact || a.key != b.key || a.key == c.key {
		t.Errorf("short texts: %+v, %+v, %+v", a, b, c)
	}
	if sketchOf("https://t.co/x @someone").ok {
		t.Error("a post of a link and a handle has no words to cluster by")
	}
}
