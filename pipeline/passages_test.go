package pipeline

import (
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources/lang"
)

// rulingPair is a tweet and the PolitiFact article that debunks it, with
// the index of the article's "Our ruling" heading: the paragraphs after it
// are where PolitiFact says why the claim is wrong, the evidence a check
// needs from that page.
type rulingPair struct {
	post, article string
	paras         []string
	ruling        int
}

// loadRulingPairs reads the tweet/fact-check pairs of the PolitiFact part
// of factcheck-tweets-vo-lee-2020 (voLee: the tweet with its images' OCR
// text) whose article has a ruling section with at least two paragraphs
// after its heading.
func loadRulingPairs(t *testing.T) []rulingPair {
	t.Helper()
	tweets, articles := voLee(t)
	var pairs []rulingPair
	for _, tw := range tweets {
		p := rulingPair{post: tw.Post, article: tw.URL, paras: articles[tw.URL].Body, ruling: -1}
		for i, para := range p.paras {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(para)), "our ruling") {
				p.ruling = i
			}
		}
		if p.ruling < 0 || p.ruling >= len(p.paras)-2 || strings.TrimSpace(p.post) == "" {
			continue // no ruling section to look for
		}
		pairs = append(pairs, p)
	}
	if len(pairs) < 500 {
		t.Fatalf("only %d pairs with a ruling section", len(pairs))
	}
	return pairs
}

// query is what the page's paragraphs are ranked by: the tweet, in
// English like the page.
func (p rulingPair) query() paraQuery { return newParaQuery(Text{Text: p.post}, nil, "") }

// half is the pair's side of the split: by a hash of the article's name,
// so that the tweets of one fact-check never straddle the two halves.
func (p rulingPair) half() int {
	h := sha256.Sum256([]byte(p.article))
	return int(h[0]) & 1
}

// passageChoice is one way of choosing page text: a rule and a budget.
type passageChoice struct {
	rule   passageRule
	budget int
}

func (c passageChoice) String() string {
	return fmt.Sprintf("%d tokens, cue weight %.2f, a paragraph at most 1/%d", c.budget, c.rule.cue, c.rule.parts)
}

// formerPassages is how page text was chosen before (the baseline): BM25
// alone on whole paragraphs, 300 tokens, a paragraph at most half of them
// and cut to its prefix. former marks it for scorePassages.
var formerPassages = passageChoice{passageRule{cue: 0, parts: 2}, 300}

// formerSelect is that former selection, kept here to measure against:
// each paragraph cut to its first half of the budget, ranked by BM25.
func formerSelect(q paraQuery, paras []string, budget int) []string {
	cut := make([]string, len(paras))
	for i, p := range paras {
		cut[i] = cutAtSentence(p, budget*4/2)
	}
	return fill(cut, rankParagraphs(q, paras), budget)
}

// passageCandidates are the choices compared, cheapest budget first.
func passageCandidates() []passageChoice {
	var out []passageChoice
	for _, budget := range []int{100, 125, 150, 175, 200, 250, 300} {
		for _, cue := range []float64{0, 0.25, 0.5, 1, 2} {
			for _, parts := range []int{2, 3, 4} {
				if c := (passageChoice{passageRule{cue: cue, parts: parts}, budget}); c != formerPassages {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// passageScore is how often the text chosen includes a ruling paragraph
// (whole, or some of its sentences), and what share of the paper's text
// (the page's first 20,000 characters) it is.
type passageScore struct{ recall, share float64 }

// passageKey names a page's passages ranked one way: the cue weight, the
// longest run of sentences and the longest sentence, in tokens.
type passageKey struct {
	cue         float64
	limit, most int
}

type rankedPassages struct {
	ps    []string
	order []int
}

// scorePassages scores choice c on pairs; ranked caches each pair's
// passages and their order by passageKey.
func scorePassages(pairs []rulingPair, ranked []map[passageKey]rankedPassages, c passageChoice) passageScore {
	var s passageScore
	for i, p := range pairs {
		var sel []string
		if c == formerPassages {
			sel = formerSelect(p.query(), p.paras, c.budget)
		} else {
			k := passageKey{c.rule.cue, c.rule.limit(c.budget), c.budget}
			rp, ok := ranked[i][k]
			if !ok {
				rp.ps = splitPassages(p.paras, k.limit, c.budget)
				rp.order = c.rule.rank(p.query(), rp.ps)
				ranked[i][k] = rp
			}
			sel = fill(rp.ps, rp.order, c.budget)
		}
		sent, found := 0, false
		for _, chosen := range sel {
			sent += len(chosen)
			for _, r := range p.paras[p.ruling+1:] {
				found = found || strings.TrimSpace(chosen) != "" && strings.Contains(r, chosen)
			}
		}
		if found {
			s.recall++
		}
		s.share += float64(sent) / float64(min(20000, len(strings.Join(p.paras, "\n\n"))))
	}
	n := float64(max(1, len(pairs)))
	return passageScore{s.recall / n, s.share / n}
}

// choosePassages is, of the candidates whose ruling recall on pairs is at
// least the former choice's, the one sending least text (the smallest
// budget), the best recall among those (ties: the lower cue weight, the
// longer passages); the former choice when none is.
func choosePassages(pairs []rulingPair, ranked []map[passageKey]rankedPassages) passageChoice {
	floor := scorePassages(pairs, ranked, formerPassages).recall
	best, bestRecall := formerPassages, -1.0
	for _, c := range passageCandidates() {
		s := scorePassages(pairs, ranked, c)
		switch {
		case s.recall < floor:
		case bestRecall < 0 || c.budget < best.budget || c.budget == best.budget && s.recall > bestRecall+1e-9:
			best, bestRecall = c, s.recall
		}
	}
	return best
}

// TestPassagesOnRealPairs chooses how page text is chosen for the evidence
// calls (cue weight, budget, longest passage) on one half of real
// tweet/PolitiFact pairs, the rule being the least text that finds the
// ruling at least as often as the former BM25-only 300-token choice, and
// measures the choice on the other half, beside the former choice on the
// same half. It checks that the engine's defaults are what the split
// chose and that held-out recall did not fall.
func TestPassagesOnRealPairs(t *testing.T) {
	testkit.Tuning(t)
	if testing.Short() {
		t.Skip("scores 105 ways of choosing page text on 677 pairs")
	}
	all := loadRulingPairs(t)
	var train, test []rulingPair
	for _, p := range all {
		if p.half() == 0 {
			train = append(train, p)
		} else {
			test = append(test, p)
		}
	}
	orders := func(n int) []map[passageKey]rankedPassages {
		m := make([]map[passageKey]rankedPassages, n)
		for i := range m {
			m[i] = map[passageKey]rankedPassages{}
		}
		return m
	}
	trainOrders, testOrders := orders(len(train)), orders(len(test))
	chosen := choosePassages(train, trainOrders)
	onTrain := scorePassages(train, trainOrders, chosen)
	held := scorePassages(test, testOrders, chosen)
	former := scorePassages(test, testOrders, formerPassages)
	t.Logf("chosen on %d training pairs: %s (recall %.3f, %.3f of the paper's text; the former %.3f)",
		len(train), chosen, onTrain.recall, onTrain.share, scorePassages(train, trainOrders, formerPassages).recall)
	t.Logf("held out, %d pairs: ruling recall %.3f with %.3f of the paper's page text; the former choice %.3f with %.3f",
		len(test), held.recall, held.share, former.recall, former.share)
	if os.Getenv("MUSE_PASSAGES_GRID") != "" {
		for _, c := range passageCandidates() {
			s := scorePassages(test, testOrders, c)
			t.Logf("  held out: %-45s recall %.3f share %.3f", c, s.recall, s.share)
		}
	}
	// The engine sends pages whole up to its cap (sent.go); this rule
	// ranks the passages of a page past it, the budget being the cap.
	engine := passageChoice{chosenPassages, chosen.budget}
	if engine != chosen {
		t.Errorf("the engine chooses page text with %s; the split chose %s", engine, chosen)
	}
	if held.recall < former.recall {
		t.Errorf("held-out ruling recall %.3f is below the former choice's %.3f", held.recall, former.recall)
	}
}

// TestPassagesDefaultsOnRealPairs measures the engine's way of choosing
// page text on the held-out half of the real pairs, without choosing it
// (TestPassagesOnRealPairs does): it finds the ruling at least as often as
// the former choice there.
func TestPassagesDefaultsOnRealPairs(t *testing.T) {
	var test []rulingPair
	for _, p := range loadRulingPairs(t) {
		if p.half() == 1 {
			test = append(test, p)
		}
	}
	ranked := make([]map[passageKey]rankedPassages, len(test))
	for i := range ranked {
		ranked[i] = map[passageKey]rankedPassages{}
	}
	engine := passageChoice{chosenPassages, (Options{}).withDefaults().EvidenceTokens}
	held, former := scorePassages(test, ranked, engine), scorePassages(test, ranked, formerPassages)
	t.Logf("held out, %d pairs: %s ruling recall %.3f with %.3f of the paper's page text; the former choice %.3f with %.3f",
		len(test), engine, held.recall, held.share, former.recall, former.share)
	if held.recall < former.recall {
		t.Errorf("held-out ruling recall %.3f is below the former choice's %.3f", held.recall, former.recall)
	}
}

func TestSplitPassagesKeepsSentencesVerbatim(t *testing.T) {
	long := "The council met on Monday. It did not ban bicycles from Main Street! Officials said the rumour was false? " +
		"A spokesperson added that no such order exists."
	got := splitPassages([]string{"Short paragraph.", long}, 16, 16)
	want := []string{"Short paragraph.", "The council met on Monday. It did not ban bicycles from Main Street!",
		"Officials said the rumour was false?", "A spokesperson added that no such order exists."}
	if !slices.Equal(got, want) {
		t.Fatalf("passages %q, want %q", got, want)
	}
	for _, p := range got[1:] {
		if !strings.Contains(long, p) || pageTokens(p) > 16 {
			t.Errorf("passage %q is not verbatim or over 16 tokens", p)
		}
	}
	word := splitPassages([]string{strings.Repeat("word ", 40)}, 12, 12)
	if len(word) != 1 || pageTokens(word[0]) > 12 || strings.HasSuffix(word[0], " ") || strings.HasSuffix(word[0], "wor") {
		t.Fatalf("an over-long sentence is not cut at a word: %q", word)
	}
	whole := "यह वाक्य दो सौ बाइट से लंबा है, फिर भी इसे पूरा भेजा जाना चाहिए क्योंकि यह बजट में आता है।"
	if got := splitPassages([]string{whole}, 10, 250); len(got) != 1 || got[0] != whole {
		t.Fatalf("a sentence within the budget was cut: %q", got)
	}
}

func TestRankPrefersRefutationWording(t *testing.T) {
	post := "The mayor banned bicycles on Main Street"
	paras := []string{
		"The mayor rode bicycles down Main Street.",
		"The mayor did not ban bicycles on Main Street, her office said; the claim is false.",
	}
	q := newParaQuery(Text{Text: post}, nil, "")
	if got := (passageRule{cue: 0}).rank(q, paras); got[0] != 0 {
		t.Fatalf("BM25 alone should rank the shorter paragraph with the same words first, got %v", got)
	}
	if got := chosenPassages.rank(q, paras); got[0] != 1 {
		t.Fatalf("the refutation should rank first with cue weight %.2f, got %v", chosenPassages.cue, got)
	}
	if n := cueCount("No, it’s not true: the claim is false and there is no evidence."); n != maxCues {
		t.Fatalf("cueCount %d, want the cap %d", n, maxCues)
	}
}

// Paragraphs sharing the same words of the post score exactly the same,
// every time, and so keep their page order: summed in map order, such
// scores came out a few ulps apart at random and the passages sent for a
// page changed from one run of a check to the next.
func TestRankTiesKeepPageOrder(t *testing.T) {
	post := "BREAKING: Springfield city council banned all bicycles from Main Street starting Monday! The mayor signed the order in secret."
	paras := []string{
		"Reporters spoke to the chamber of commerce about traffic on Main Street in Springfield, where 1274 people ride to work each day according to the latest count.",
		"Reporters spoke to delivery companies about traffic on Main Street in Springfield, where 1422 people ride to work each day according to the latest count.",
		"Reporters spoke to the parks department about traffic on Main Street in Springfield, where 1533 people ride to work each day according to the latest count.",
		"Reporters spoke to the fire brigade about traffic on Main Street in Springfield, where 1611 people ride to work each day according to the latest count.",
		"A street festival will close one block of Main Street to traffic for a weekend, organisers said.",
		"The council's agenda for Monday shows no vote on bicycles.",
	}
	q := newParaQuery(Text{Text: post}, nil, "")
	for range 200 {
		scores := bm25(q, paras)
		for i := range 4 {
			if scores[i] != scores[0] {
				t.Fatalf("paragraphs with the same words of the post score %v", scores)
			}
		}
		got := chosenPassages.rank(q, paras)
		tied := slices.DeleteFunc(slices.Clone(got), func(i int) bool { return i >= 4 })
		if !slices.Equal(tied, []int{0, 1, 2, 3}) {
			t.Fatalf("tied paragraphs out of page order: %v", got)
		}
	}
}

// A long paragraph in any script is cut at its own sentence ends: the
// danda, the ideographic full stop, the Arabic question mark.
func TestSplitPassagesEveryScript(t *testing.T) {
	for _, p := range []string{
		"स्वास्थ्य मंत्रालय ने मंगलवार को कहा कि यह दावा ग़लत है। वीडियो 2018 का है और इटली में फिल्माया गया था। पुलिस ने भी इसकी पुष्टि की।",
		"厚生労働省は5日、この投稿は誤りだと発表した。動画は2018年にイタリアで撮影されたものだった。警察もこれを確認している。",
		"هل الفيديو حديث؟ لا، فقد صُوّر في إيطاليا عام 2018. وأكدت الشرطة ذلك يوم الثلاثاء.",
	} {
		got := splitPassages([]string{p}, 20, 250)
		if len(got) < 2 {
			t.Errorf("not cut at its sentence ends: %q", got)
		}
		for _, s := range got {
			last, _ := utf8.DecodeLastRuneInString(s)
			if !strings.Contains(p, s) || pageTokens(s) > 20 && len(lang.Sentences(s)) > 1 || !unicode.Is(unicode.Sentence_Terminal, last) {
				t.Errorf("passage %q is not whole sentences of the paragraph within 20 tokens (or one longer one)", s)
			}
		}
	}
}
