package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources/ratings"
)

// TestTiersOnExpertLabels: the publisher tiers of the links the released
// corrections cite, against the paper's experts' credibility labels (the
// calibration half, read in place). Nothing is fitted, so the whole set is
// reported: with the built-in table alone, and with MBFC's file added.
func TestTiersOnExpertLabels(t *testing.T) {
	dir := testkit.SharedData(t, "muse-expert-labels-calibration")
	rs, err := ReadCalibration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) < 400 {
		t.Fatalf("%d corrections joined to their posts", len(rs))
	}
	for _, tc := range []struct {
		name string
		opts ratings.Options
	}{
		{"built-in table", ratings.Options{DataDir: t.TempDir()}},
		{"built-in table + MBFC combined.json", ratings.Options{DataDir: t.TempDir(), File: filepath.Join(testkit.SharedData(t, "mbfc-ratings"), "combined.json")}},
	} {
		rater, err := ratings.Load(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		ta := Tiers(rs, rater)
		t.Logf("%s: %d corrections; %d expert ratings of rated publishers, Spearman %.3f; unrated %d; High or Very High by tier: high %.3f medium %.3f low %.3f excluded %.3f unrated %.3f",
			tc.name, len(rs), ta.N, ta.Spearman, ta.Unrated, ta.HighShare["high"], ta.HighShare["medium"], ta.HighShare["low"], ta.HighShare["excluded"], ta.HighShare["unrated"])
		// The tiers must order the experts' judgement: a high-tier link is
		// rated credible far more often than an excluded one.
		if float64(ta.Spearman) < 0.3 || ta.HighShare["high"] < ta.HighShare["low"] || ta.HighShare["low"] < ta.HighShare["excluded"] {
			t.Errorf("%s: tiers do not follow the experts: %+v", tc.name, ta)
		}
	}
}

// TestAVeriTeCAsPosts: AVeriTeC's dev set read as a post set: 500 claims,
// their dates as the posts' times, their gold evidence URLs.
func TestAVeriTeCAsPosts(t *testing.T) {
	ps, err := ReadPosts(filepath.Join(testkit.SharedData(t, "averitec-dev"), "dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	withGold, urls := 0, 0
	for _, p := range ps {
		if p.Post.PostedAt.IsZero() || p.GoldLabel == "" {
			t.Fatalf("claim %s: %+v", p.ID, p)
		}
		if len(p.GoldURLs) > 0 {
			withGold++
		}
		urls += len(p.GoldURLs)
	}
	t.Logf("%d claims, %d with gold evidence URLs, %d URLs", len(ps), withGold, urls)
	if len(ps) != 500 || withGold < 450 {
		t.Errorf("%d claims, %d with gold URLs", len(ps), withGold)
	}
}

// TestMeasuresOfReleasedCorrections: the measures that need no model and
// no network, by system, over the released corrections (nothing fitted).
func TestMeasuresOfReleasedCorrections(t *testing.T) {
	rs, err := ReadCalibration(testkit.SharedData(t, "muse-expert-labels-calibration"))
	if err != nil {
		t.Fatal(err)
	}
	rater, err := ratings.Load(ratings.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := MeasureReleased(context.Background(), rs, rater, nil)
	by := map[string]SystemSummary{}
	for _, ss := range s.Systems {
		by[ss.Name] = ss
		t.Logf("%-13s n=%d: fits a note %.3f, length %.0f, links %.2f, credible links %.3f, valid by X %.3f", ss.Name, ss.Posts,
			ss.Metrics["m_within_limit"].Mean, ss.Metrics["m_length"].Mean, ss.Metrics["m_links"].Mean, ss.Metrics["m_credible"].Mean, ss.Metrics["m_valid_x"].Mean)
	}
	if len(by) != 4 || by["muse"].Posts+by["note-high"].Posts+by["gpt-4"].Posts+by["note-average"].Posts != len(rs) {
		t.Fatalf("systems: %+v", s.Systems)
	}
	// People's notes were written for the 280-character limit; muse's
	// and GPT-4's corrections of the paper were not.
	if by["note-high"].Metrics["m_within_limit"].Mean < 0.8 || by["muse"].Metrics["m_within_limit"].Mean > 0.5 {
		t.Errorf("note lengths do not follow who wrote for the limit")
	}
}
