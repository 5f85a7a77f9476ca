package archive

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

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
	correct  bool // the best match is a fact-check that answers the tweet
	positive bool // a fact-check that answers it is archived
	tune     bool
}

type matchFigures struct{ precision, recall float64 }

func (m matchFigures) String() string {
	return fmt.Sprintf("precision %.3f, recall %.3f", m.precision, m.recall)
}

func figuresAt(cs []claimCase, tune bool, threshold float64) matchFigures {
	var tp, fired, pos float64
	for _, c := range cs {
		if c.tune != tune {
			continue
		}
		if c.positive {
			pos++
		}
		if c.score >= threshold {
			fired++
			if c.correct {
				tp++
			}
		}
	}
	var f matchFigures
	if fired > 0 {
		f.precision = tp / fired
	}
	if pos > 0 {
		f.recall = tp / pos
	}
	return f
}

// claimPrecision is what a match must reach on the tuning half: a wrong
// "already checked" misleads, a missed one only costs a search.
const claimPrecision = 0.9

// chooseThreshold picks, on the tuning half, the threshold with the best
// recall among those whose precision reaches claimPrecision (else the most
// precise), and returns its figures there.
func chooseThreshold(cs []claimCase) (float64, matchFigures) {
	best, bestF := 1.0, matchFigures{}
	for i := 0; i <= 14; i++ {
		t := float64(6+i) / 20 // 0.30 to 1.00
		if f := figuresAt(cs, true, t); f.better(bestF) {
			best, bestF = t, f
		}
	}
	return best, bestF
}

// better: reaching claimPrecision first, then recall; short of it, precision.
func (m matchFigures) better(than matchFigures) bool {
	ok, thanOK := m.precision >= claimPrecision, than.precision >= claimPrecision
	if ok != thanOK {
		return ok
	}
	if ok {
		return m.recall > than.recall+1e-9
	}
	return m.precision > than.precision+1e-9
}

// claimMatchCases archives the claims of one half of the fact-check groups
// and returns, for a saturation, each tweet's best match, marked with its
// halves.
func claimMatchCases(t *testing.T) (cases func(saturation float64) []claimCase, nKept, nClaims int) {
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
	half := func(g int) (archived, tune bool) {
		h := fnv.New32a()
		h.Write([]byte("claim-match " + name[g]))
		x := h.Sum32()
		return x%2 == 0, x/2%2 == 0
	}
	left := map[string]bool{} // fact-checks kept out of the archive
	for i, g := range groups {
		if archived, _ := half(g); !archived {
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
	s, _ := openTemp(t)
	ctx := context.Background()
	if err := s.AddClaimReviews(ctx, kept, "en"); err != nil {
		t.Fatal(err)
	}
	return func(saturation float64) []claimCase {
		var cs []claimCase
		for i, q := range fc.queries {
			archived, tune := half(groups[i])
			c := claimCase{positive: archived, tune: tune}
			ms, err := s.matchClaims(ctx, q, "en", 1, saturation)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) > 0 {
				key, _ := sources.Canonical(ms[0].ReviewURL)
				c.score, c.correct = ms[0].Score, fc.relevant[i][key]
			}
			cs = append(cs, c)
		}
		return cs
	}, len(kept), len(claims)
}

// TestClaimMatchThreshold chooses the threshold and the saturation on the
// tuning half and checks that muse's are the ones chosen and that they
// keep their precision on the test half.
func TestClaimMatchThreshold(t *testing.T) {
	testkit.Tuning(t)
	if testing.Short() {
		t.Skip("matches 1,013 tweets five times; skipped with -short")
	}
	cases, kept, claims := claimMatchCases(t)
	var best []claimCase
	var chosen, chosenSat float64
	var tuneFig matchFigures
	for _, sat := range []float64{1, 2, 3, 4, 5} {
		cs := cases(sat)
		th, f := chooseThreshold(cs)
		t.Logf("saturation %g: threshold %.2f, tuning half %v", sat, th, f)
		if best == nil || f.better(tuneFig) {
			best, chosen, chosenSat, tuneFig = cs, th, sat, f
		}
	}
	t.Logf("%d claims archived of %d; %d tweets", kept, claims, len(best))
	test := figuresAt(best, false, chosen)
	t.Logf("chosen on the tuning half: saturation %g, threshold %.2f (%v); test half, out of sample: %v",
		chosenSat, chosen, tuneFig, test)
	t.Logf("test half, the best candidate taken whatever its score (no threshold): %v", figuresAt(best, false, 1e-9))
	if chosen != ClaimMatchThreshold || chosenSat != claimSaturation {
		t.Errorf("ClaimMatchThreshold, claimSaturation = %.2f, %g; the tuning half picks %.2f, %g",
			ClaimMatchThreshold, claimSaturation, chosen, chosenSat)
	}
	if test.precision < 0.8 {
		t.Errorf("out of sample, %v: matches fire on posts they do not answer", test)
	}
}

// TestClaimMatchOnRealTweets measures muse's threshold and saturation on
// the test half, without choosing them (TestClaimMatchThreshold does).
func TestClaimMatchOnRealTweets(t *testing.T) {
	cases, _, _ := claimMatchCases(t)
	test := figuresAt(cases(claimSaturation), false, ClaimMatchThreshold)
	t.Logf("saturation %g, threshold %.2f, test half: %v", claimSaturation, ClaimMatchThreshold, test)
	if test.precision < 0.8 {
		t.Errorf("out of sample, %v: matches fire on posts they do not answer", test)
	}
}
