package archive

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources"
)

// The claim-match threshold is chosen on half of the benchmark's real
// tweet↔fact-check pairs and measured on the other half. Fact-checks are
// cut by group (factCheckGroups) into two halves: claims of one half are
// archived, of the other not, so the tweets answered by an unarchived
// fact-check are the posts a match must not fire on. Groups are also cut,
// independently, into tuning and test halves.

// politifactClaims reads each fact-check's claim and its rating, which the
// data set gives only as the meter image's file name.
func politifactClaims(tb testing.TB) []sources.ClaimReview {
	tb.Helper()
	dir := filepath.Join(testkit.SharedData(tb, "factcheck-tweets-vo-lee-2020"), "politifact")
	var articles map[string]struct {
		Claim  string  `json:"claim"`
		Rating [][]any `json:"rating"`
	}
	readJSON(tb, filepath.Join(dir, "articles_content.json"), &articles)
	var out []sources.ClaimReview
	for u, a := range articles {
		rating := ""
		if len(a.Rating) > 0 && len(a.Rating[0]) > 0 {
			rating = meterRating(fmt.Sprint(a.Rating[0][0]))
		}
		out = append(out, sources.ClaimReview{Claim: a.Claim, Rating: rating, Reviewer: "PolitiFact", ReviewURL: u,
			ReviewDate: publishedFromURL(u)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ReviewURL < out[j].ReviewURL })
	return out
}

var meterRe = regexp.MustCompile(`[tf]om-([a-z-]+)\.`)

var meterNames = map[string]string{"true": "True", "mostlytrue": "Mostly True", "halftrue": "Half True",
	"mostlyfalse": "Mostly False", "false": "False", "pantsonfire": "Pants on Fire", "fullflop": "Full Flop",
	"halfflip": "Half Flip", "noflip": "No Flip"}

func meterRating(img string) string {
	m := meterRe.FindStringSubmatch(strings.ToLower(img))
	if m == nil {
		return ""
	}
	return meterNames[strings.ReplaceAll(m[1], "-", "")]
}

// claimCase is one tweet's best match.
type claimCase struct {
	score    float64
	lead     float64 // the best match's ClaimMatch.Lead (asked whatever its score)
	correct  bool    // the best match is a fact-check that answers the tweet
	positive bool    // a fact-check that answers it is archived
	tune     bool
	key      string // the best match's canonical review URL
}

type matchFigures struct{ precision, recall float64 }

func (m matchFigures) String() string {
	return fmt.Sprintf("precision %.3f, recall %.3f", m.precision, m.recall)
}

// matchCounts are the counts figures are made of, so that several test
// halves can be pooled.
type matchCounts struct{ tp, fired, pos float64 }

func (c matchCounts) add(d matchCounts) matchCounts {
	return matchCounts{c.tp + d.tp, c.fired + d.fired, c.pos + d.pos}
}

func (c matchCounts) figures() matchFigures {
	var f matchFigures
	if c.fired > 0 {
		f.precision = c.tp / c.fired
	}
	if c.pos > 0 {
		f.recall = c.tp / c.pos
	}
	return f
}

// countsBy counts the cases of one half that fire.
func countsBy(cs []claimCase, tune bool, fires func(claimCase) bool) matchCounts {
	var c matchCounts
	for _, x := range cs {
		if x.tune != tune {
			continue
		}
		if x.positive {
			c.pos++
		}
		if fires(x) {
			c.fired++
			if x.correct {
				c.tp++
			}
		}
	}
	return c
}

func figuresAt(cs []claimCase, tune bool, threshold float64) matchFigures {
	return countsBy(cs, tune, func(c claimCase) bool { return c.score >= threshold }).figures()
}

// repeatRule is the whole decision (ClaimMatch.repeats) at a lead path's
// coverage and lead, the lexical threshold being ClaimMatchThreshold.
func repeatRule(coverage, lead float64) func(claimCase) bool {
	return func(c claimCase) bool {
		return ClaimMatch{Score: c.score, Lead: c.lead}.repeats(coverage, lead)
	}
}

// claimPrecision is what a match must reach on the tuning half: a wrong
// "already checked" misleads, a missed one only costs a search.
const claimPrecision = 0.9

// repeatPrecision is what the whole decision, the lead path added to the
// lexical threshold, must reach on the tuning half.
const repeatPrecision = 0.95

// chooseThreshold picks, on the tuning half, the threshold with the best
// recall among those whose precision reaches claimPrecision (else the most
// precise), and returns its figures there.
func chooseThreshold(cs []claimCase) (float64, matchFigures) {
	best, bestF := 1.0, matchFigures{}
	for i := 0; i <= 14; i++ {
		t := float64(6+i) / 20 // 0.30 to 1.00
		if f := figuresAt(cs, true, t); f.better(bestF, claimPrecision) {
			best, bestF = t, f
		}
	}
	return best, bestF
}

// chooseLead picks, on the tuning half (tune: which half that is), the
// lead path's coverage and lead with the best recall among those whose
// precision reaches repeatPrecision (else the most precise); ties go to
// the stricter.
func chooseLead(cs []claimCase, tune bool) (coverage, lead float64, f matchFigures) {
	coverage, lead = 1, 1
	for i := 20; i >= 0; i-- {
		for j := 19; j >= 0; j-- {
			c, l := float64(i)/20, float64(j)/20
			if g := countsBy(cs, tune, repeatRule(c, l)).figures(); g.better(f, repeatPrecision) {
				coverage, lead, f = c, l, g
			}
		}
	}
	return coverage, lead, f
}

// better: reaching the precision wanted first, then recall; short of it,
// precision.
func (m matchFigures) better(than matchFigures, want float64) bool {
	ok, thanOK := m.precision >= want, than.precision >= want
	if ok != thanOK {
		return ok
	}
	if ok {
		return m.recall > than.recall+1e-9
	}
	return m.precision > than.precision+1e-9
}

// claimSplit says of a group of fact-checks whether its claims and pages
// are archived and whether its tweets are in the tuning half. The first
// split is the one muse's constants are chosen on; the others only
// measure how much the out-of-sample figure varies with the cut.
type claimSplit func(name string) (archived, tune bool)

func fnvSplit(name string) (archived, tune bool) {
	h := fnv.New32a()
	h.Write([]byte("claim-match " + name))
	x := h.Sum32()
	return x%2 == 0, x/2%2 == 0
}

// shaSplit is another cut (FNV-1a's low bits cannot make one: a prefix
// only permutes them).
func shaSplit(salt string) claimSplit {
	return func(name string) (archived, tune bool) {
		x := sha256.Sum256([]byte(salt + name))
		return x[0]%2 == 0, x[0]/2%2 == 0
	}
}

// claimMatchWorld archives the claims and the pages of one half of the
// fact-check groups (split) on s.
type claimMatchWorld struct {
	s     *Store
	fc    factChecks
	half  func(i int) (archived, tune bool) // of tweet i
	kept  int
	total int
}

func newClaimMatchWorld(t *testing.T, s *Store, split claimSplit) *claimMatchWorld {
	t.Helper()
	fc := loadFactChecks(t)
	claims := politifactClaims(t)
	groups := factCheckGroups(fc)
	name := map[int]string{}
	for i, g := range groups {
		for u := range fc.relevant[i] {
			if n, ok := name[g]; !ok || u < n {
				name[g] = u
			}
		}
	}
	left := map[string]bool{} // fact-checks kept out of the archive
	for i, g := range groups {
		if archived, _ := split(name[g]); !archived {
			for u := range fc.relevant[i] {
				left[u] = true
			}
		}
	}
	var kept []sources.ClaimReview
	for _, cr := range claims {
		if key, _ := sources.Canonical(cr.ReviewURL); !left[key] {
			kept = append(kept, cr)
		}
	}
	var docs []Doc
	for _, d := range fc.docs {
		if key, _ := sources.Canonical(d.URL); !left[key] {
			docs = append(docs, d)
		}
	}
	ctx := context.Background()
	if err := s.AddClaimReviews(ctx, kept, "en"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAll(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return &claimMatchWorld{s: s, fc: fc, half: func(i int) (bool, bool) { return split(name[groups[i]]) },
		kept: len(kept), total: len(claims)}
}

// lexical is each tweet's best match by its lexical score alone, at a
// saturation.
func (w *claimMatchWorld) lexical(t *testing.T, saturation float64) []claimCase {
	var cs []claimCase
	for i, q := range w.fc.queries {
		archived, tune := w.half(i)
		c := claimCase{positive: archived, tune: tune}
		ms, err := w.s.matchClaims(context.Background(), q, "en", 1, saturation)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			key, _ := sources.Canonical(ms[0].ReviewURL)
			c.score, c.correct = ms[0].Score, w.fc.relevant[i][key]
		}
		cs = append(cs, c)
	}
	return cs
}

// repeats is each tweet's best match as MatchingFactChecks weighs it, its
// lead asked whatever its score; every step-th tweet (1: all). With dated,
// the tweet's time is given, as triage gives a post's.
func (w *claimMatchWorld) repeats(t *testing.T, dated bool, step int) []claimCase {
	var cs []claimCase
	for i := 0; i < len(w.fc.queries); i += step {
		archived, tune := w.half(i)
		c := claimCase{positive: archived, tune: tune}
		var posted time.Time
		if dated {
			posted = w.fc.posted[i]
		}
		ms, err := w.s.repeatCandidates(context.Background(), w.fc.queries[i], "en", posted, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			key, _ := sources.Canonical(ms[0].ReviewURL)
			c.score, c.lead, c.correct, c.key = ms[0].Score, ms[0].Lead, w.fc.relevant[i][key], key
		}
		cs = append(cs, c)
	}
	return cs
}

// TestClaimMatchThreshold chooses, on the tuning half, the lexical
// threshold and saturation, then the lead path's coverage and lead, and
// checks that muse's are the ones chosen and that the decision keeps its
// precision on the test half. It then measures, without choosing muse's
// constants, the same procedure on three other cuts of the fact-checks,
// each half tuning for the other, both pooled.
func TestClaimMatchThreshold(t *testing.T) {
	testkit.Tuning(t)
	if testing.Short() {
		t.Skip("matches 1,013 tweets many times; skipped with -short")
	}
	s, _ := openTemp(t)
	w := newClaimMatchWorld(t, s, fnvSplit)
	var best []claimCase
	var chosen, chosenSat float64
	var tuneFig matchFigures
	for _, sat := range []float64{1, 2, 3, 4, 5} {
		cs := w.lexical(t, sat)
		th, f := chooseThreshold(cs)
		t.Logf("saturation %g: threshold %.2f, tuning half %v", sat, th, f)
		if best == nil || f.better(tuneFig, claimPrecision) {
			best, chosen, chosenSat, tuneFig = cs, th, sat, f
		}
	}
	t.Logf("%d claims and their pages archived of %d; %d tweets", w.kept, w.total, len(best))
	lexTest := figuresAt(best, false, chosen)
	t.Logf("lexical: chosen on the tuning half: saturation %g, threshold %.2f (%v); test half, out of sample: %v",
		chosenSat, chosen, tuneFig, lexTest)
	if chosen != ClaimMatchThreshold || chosenSat != claimSaturation {
		t.Errorf("ClaimMatchThreshold, claimSaturation = %.2f, %g; the tuning half picks %.2f, %g",
			ClaimMatchThreshold, claimSaturation, chosen, chosenSat)
	}
	cs := w.repeats(t, false, 1)
	cov, lead, f := chooseLead(cs, true)
	test := countsBy(cs, false, repeatRule(cov, lead)).figures()
	t.Logf("with the lead path: chosen on the tuning half: coverage %.2f, lead %.2f (%v); test half, out of sample: %v", cov, lead, f, test)
	if cov != ClaimLeadCoverage || lead != ClaimLeadThreshold {
		t.Errorf("ClaimLeadCoverage, ClaimLeadThreshold = %.2f, %.2f; the tuning half picks %.2f, %.2f",
			ClaimLeadCoverage, ClaimLeadThreshold, cov, lead)
	}
	if test.precision < repeatPrecision || test.recall <= lexTest.recall {
		t.Errorf("out of sample, %v with the lead path, %v without: the lead path must keep precision ≥ %.2f and add recall",
			test, lexTest, repeatPrecision)
	}
	dated := countsBy(w.repeats(t, true, 1), false, repeatRule(ClaimLeadCoverage, ClaimLeadThreshold)).figures()
	t.Logf("test half, each tweet's time given (as triage gives a post's): %v", dated)

	// Other cuts: each half chooses for the other, lexical threshold
	// (saturation as muse's) and lead path alike.
	var lexPool, leadPool matchCounts
	for _, salt := range []string{"a ", "b ", "c "} {
		s, _ := openTemp(t)
		w := newClaimMatchWorld(t, s, shaSplit(salt))
		lex, rep := w.lexical(t, claimSaturation), w.repeats(t, false, 1)
		for _, tune := range []bool{true, false} {
			th, _ := 1.0, matchFigures{}
			var bestF matchFigures
			for i := 0; i <= 14; i++ {
				x := float64(6+i) / 20
				if g := figuresAt(lex, tune, x); g.better(bestF, claimPrecision) {
					th, bestF = x, g
				}
			}
			lexPool = lexPool.add(countsBy(lex, !tune, func(c claimCase) bool { return c.score >= th }))
			c, l, _ := chooseLead(rep, tune)
			leadPool = leadPool.add(countsBy(rep, !tune, repeatRule(c, l)))
		}
	}
	t.Logf("three other cuts, six test halves pooled, out of sample: lexical %v; with the lead path %v",
		lexPool.figures(), leadPool.figures())
}

// TestClaimMatchOnRealTweets measures muse's decision (MatchingFactChecks'
// constants) on the test half, without choosing them
// (TestClaimMatchThreshold does): it must keep its precision, and the lead
// path must add recall to the lexical threshold's.
func TestClaimMatchOnRealTweets(t *testing.T) {
	s, _ := openTemp(t)
	w := newClaimMatchWorld(t, s, fnvSplit)
	cs := w.repeats(t, false, 1)
	lex := figuresAt(cs, false, ClaimMatchThreshold)
	test := countsBy(cs, false, repeatRule(ClaimLeadCoverage, ClaimLeadThreshold)).figures()
	t.Logf("test half: lexical threshold alone %v; with the lead path %v", lex, test)
	if test.precision < repeatPrecision || test.recall <= lex.recall {
		t.Errorf("out of sample, %v with the lead path, %v without: want precision ≥ %.2f and more recall",
			test, lex, repeatPrecision)
	}
	dated := countsBy(w.repeats(t, true, 1), false, repeatRule(ClaimLeadCoverage, ClaimLeadThreshold)).figures()
	t.Logf("test half, each tweet's time given (as triage gives a post's): %v", dated)
	if dated.precision < repeatPrecision {
		t.Errorf("out of sample, with the tweets' times, %v: want precision ≥ %.2f", dated, repeatPrecision)
	}
}

// TestRepeatDecisionOnPostgres: one threshold means the same on both
// engines. The same half of the fact-checks, claims and pages, archived on
// SQLite and on PostgreSQL, gives every seventh benchmark tweet the same
// decision, and the same score and lead whenever both engines' best match
// is the same claim (each engine's full-text index picks the candidates
// that are scored, so a weak best match may differ).
func TestRepeatDecisionOnPostgres(t *testing.T) {
	pg := openPostgresTemp(t)
	lite, _ := openTemp(t)
	onPG := newClaimMatchWorld(t, pg, fnvSplit).repeats(t, false, 7)
	onLite := newClaimMatchWorld(t, lite, fnvSplit).repeats(t, false, 7)
	leads, fired, other := 0, 0, 0
	rule := repeatRule(ClaimLeadCoverage, ClaimLeadThreshold)
	for i := range onLite {
		a, b := onLite[i], onPG[i]
		if rule(a) != rule(b) {
			t.Errorf("tweet %d: a repeat on one engine only: SQLite %s score %.4f lead %.4f; PostgreSQL %s %.4f, %.4f",
				i*7, a.key, a.score, a.lead, b.key, b.score, b.lead)
		}
		if a.key != b.key {
			other++
			continue
		}
		if math.Abs(a.score-b.score) > 1e-9 || math.Abs(a.lead-b.lead) > 1e-9 {
			t.Errorf("tweet %d, %s: SQLite score %.4f lead %.4f; PostgreSQL %.4f, %.4f", i*7, a.key, a.score, a.lead, b.score, b.lead)
		}
		if a.lead > 0 {
			leads++
		}
		if rule(a) {
			fired++
		}
	}
	t.Logf("%d tweets: %d with another best match on PostgreSQL; of the rest %d with a lead, %d taken as repeats on both",
		len(onLite), other, leads, fired)
	if leads == 0 || fired == 0 {
		t.Errorf("%d leads, %d repeats: the comparison compared nothing", leads, fired)
	}
}
