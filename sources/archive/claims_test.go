package archive

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
)

func TestClaimMatching(t *testing.T) { eachEngine(t, testClaimMatching) }

func testClaimMatching(t *testing.T, s *Store) {
	ctx := context.Background()
	crs := []sources.ClaimReview{
		{Claim: "Philadelphia's soda tax doubled the price of soda", Rating: "Mostly False", Reviewer: "PolitiFact",
			ReviewURL: "https://www.politifact.com/factchecks/2017/jan/05/a/sugar-tax-soda/", ReviewDate: time.Date(2017, 1, 5, 0, 0, 0, 0, time.UTC)},
		{Claim: "The measles vaccine causes autism", Rating: "False", Reviewer: "AP", ReviewURL: "https://apnews.com/article/vaccine-autism"},
	}
	if err := s.AddClaimReviews(ctx, crs, ""); err != nil {
		t.Fatal(err)
	}
	// Adding again updates rather than duplicates.
	crs[1].Rating = "Pants on Fire"
	if err := s.AddClaimReviews(ctx, crs[1:], "en"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddClaimReviews(ctx, []sources.ClaimReview{{Rating: "False"}}, ""); err == nil {
		t.Error("a record without a claim was accepted")
	}
	got, err := s.MatchClaims(ctx, "RT @x: so the MMR vaccine gives kids autism?! #vaccines", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ReviewURL != crs[1].ReviewURL || got[0].Rating != "Pants on Fire" || got[0].Reviewer != "AP" {
		t.Fatalf("MatchClaims = %+v; want the measles record once, updated", got)
	}
	got, _ = s.MatchClaims(ctx, "soda prices doubled after the tax", "", 0)
	if len(got) == 0 || got[0].Reviewer != "PolitiFact" || !got[0].ReviewDate.Equal(crs[0].ReviewDate) {
		t.Errorf("MatchClaims(soda) = %+v", got)
	}
	// Given the post's time, a fact-check reviewed more than a day later is
	// no repeat of a claim already checked; without it (a check wanting
	// later debunks too), or with a later post, it matches.
	repeat := "Philadelphia's soda tax doubled the price of soda, unbelievable"
	for _, c := range []struct {
		posted time.Time
		want   int
	}{
		{time.Time{}, 1},
		{time.Date(2016, 6, 1, 12, 0, 0, 0, time.UTC), 0},
		{time.Date(2017, 1, 4, 18, 0, 0, 0, time.UTC), 1}, // dated to the day: out the next day at the latest
		{time.Date(2017, 3, 1, 0, 0, 0, 0, time.UTC), 1},
	} {
		ms, err := s.MatchingFactChecks(ctx, repeat, "en", 3, c.posted)
		if err != nil || len(ms) != c.want || c.want > 0 && ms[0].Reviewer != "PolitiFact" {
			t.Errorf("MatchingFactChecks(soda, posted %v) = %+v, %v; want %d match", c.posted, ms, err, c.want)
		}
	}
	if s.postgres {
		return // the tsvector is a generated column
	}
	if _, err := s.db.Exec("INSERT INTO claims_fts(claims_fts) VALUES('integrity-check')"); err != nil {
		t.Errorf("claims index: %v", err)
	}
}

// Importing a fact-check page stores its ClaimReview beside the page.
func TestImportStoresClaimReview(t *testing.T) { eachEngine(t, testImportStoresClaimReview) }

func testImportStoresClaimReview(t *testing.T, s *Store) {
	ctx := context.Background()
	res := s.Import(ctx, []string{"testdata/claims/factcheck.html"}, ImportOptions{})
	if res.Added != 1 || res.Failed != 0 {
		t.Fatalf("Import = %+v", res)
	}
	got, err := s.MatchClaims(ctx, "They are putting up 5G towers to spread the virus", "", 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("MatchClaims = %+v, %v", got, err)
	}
	m := got[0]
	if m.Rating != "False" || m.Reviewer != "Example Checks" || m.ReviewURL != "https://checks.example.org/2020/05/01/5g-coronavirus" ||
		m.ClaimDate.Format("2006-01-02") != "2020-04-20" {
		t.Errorf("stored claim review = %+v", m)
	}
}

// Each published form of fact-checks imports with claim, rating, reviewer
// and dates: a Data Commons feed, a Fact Check Tools answer, a page with
// microdata, and a page fetched over HTTP.
func TestImportClaimReviews(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	page, err := os.ReadFile("testdata/claims/factcheck.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()
	var errs strings.Builder
	res := s.ImportClaimReviews(ctx, []string{"testdata/claims/datacommons_feed.json", "testdata/claims/factchecktools.json",
		"../extract/testdata/claimreview_microdata.html", srv.URL + "/5g", "testdata/site/measles.html", "testdata/claims/missing.json"},
		ImportOptions{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}), Errors: &errs})
	if res.Added != 6 || res.Failed != 2 {
		t.Fatalf("ImportClaimReviews = %+v; want 6 added (2 feed, 2 API, 1 microdata, 1 page), 2 failed; errors:\n%s", res, errs.String())
	}
	day := func(tm time.Time) string { return tm.Format(time.DateOnly) }
	for _, c := range []struct {
		post                                          string
		rating, reviewer, url, claimant, claimed, day string
	}{
		{"OMG drink hot water, it kills the coronavirus!!", "False", "PolitiFact",
			"https://www.politifact.com/factchecks/2020/mar/20/facebook-posts/no-drinking-hot-water-wont-kill-coronavirus/",
			"Facebook posts", "2020-03-18", "2020-03-20"},
		{"the MMR vaccine causes autism in children, wake up", "Incorrect", "Full Fact", "https://fullfact.org/health/vaccines-autism/",
			"Social media posts", "0001-01-01", "2019-11-02"},
		{"noise from wind turbines causes cancer says senator", "Pants on Fire", "Check Desk",
			"https://checkdesk.example.net/2021/02/wind-turbines-cancer", "A state senator", "2021-01-28", "2021-02-03"},
	} {
		ms, err := s.MatchingFactChecks(ctx, c.post, "en", 3, time.Time{})
		if err != nil || len(ms) == 0 {
			t.Errorf("MatchingFactChecks(%q) = %+v, %v", c.post, ms, err)
			continue
		}
		m := ms[0]
		if m.Rating != c.rating || m.Reviewer != c.reviewer || m.ReviewURL != c.url || m.Claimant != c.claimant ||
			day(m.ClaimDate) != c.claimed || day(m.ReviewDate) != c.day {
			t.Errorf("match for %q = %+v", c.post, m)
		}
	}
	ms, err := s.MatchingFactChecks(ctx, "Wake up: 5G mobile towers and networks spread the coronavirus", "en", 5, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	reviewers := map[string]string{}
	for _, m := range ms {
		reviewers[m.Reviewer] = m.Rating
	}
	if reviewers["Reuters"] != "False" || reviewers["apnews.com"] != "Misleading" || reviewers["Example Checks"] != "False" {
		t.Errorf("5G matches = %+v; want Reuters False, apnews.com Misleading (Fact Check Tools) and Example Checks False (the fetched page)", ms)
	}
	if d, err := s.Get(ctx, "https://checks.example.org/2020/05/01/5g-coronavirus"); err != nil || !strings.Contains(d.Text, "radio waves") {
		t.Errorf("the fetched fact-check page was not archived: %+v, %v", d, err)
	}
	if !strings.Contains(errs.String(), "measles.html") || !strings.Contains(errs.String(), "missing.json") {
		t.Errorf("errors = %q; want one line for the page without markup and one for the missing file", errs.String())
	}
	// An unrelated post matches nothing.
	if ms, _ := s.MatchingFactChecks(ctx, "Lovely sunset over the harbour tonight, the ferries are running late again", "en", 5, time.Time{}); len(ms) != 0 {
		t.Errorf("an unrelated post matched %+v", ms)
	}
}

// A fact-check's declared language (inLanguage: a code, a name or a
// Language object, on the review, on its claim or once for the whole feed;
// Fact Check Tools' languageCode) is kept with it and comes back with its
// matches; a record that declares none has none.
func TestClaimReviewLanguage(t *testing.T) { eachEngine(t, testClaimReviewLanguage) }

func testClaimReviewLanguage(t *testing.T, s *Store) {
	ctx := context.Background()
	var errs strings.Builder
	res := s.ImportClaimReviews(ctx, []string{"testdata/claims/feed_languages.json", "testdata/claims/factchecktools.json",
		"testdata/claims/datacommons_feed.json"}, ImportOptions{Errors: &errs})
	if res.Added != 7 || res.Failed != 0 {
		t.Fatalf("ImportClaimReviews = %+v\n%s", res, errs.String())
	}
	for _, c := range []struct{ post, lang, reviewer, want string }{
		{"¡El Gobierno prohíbe las bicicletas en el centro de Madrid desde el lunes! Compartid", "es", "Maldita", "es"},
		{"URGENTE: Lisboa proibiu as bicicletas no centro da cidade", "pt", "Lupa", "pt"},
		{"Barcelona prohibeix les bicicletes al centre de la ciutat!!", "ca", "Verificat", "ca"},
		{"Wake up: 5G mobile towers and networks spread the coronavirus", "en", "Reuters", "en"},
		{"OMG drink hot water, it kills the coronavirus!!", "en", "PolitiFact", ""},
	} {
		ms, err := s.MatchingFactChecks(ctx, c.post, c.lang, 3, time.Time{})
		if err != nil || len(ms) == 0 {
			t.Errorf("MatchingFactChecks(%q) = %+v, %v", c.post, ms, err)
			continue
		}
		i := slices.IndexFunc(ms, func(m ClaimMatch) bool { return m.Reviewer == c.reviewer })
		if i < 0 || ms[i].Language != c.want {
			t.Errorf("match for %q = %+v; want %s's with language %q", c.post, ms, c.reviewer, c.want)
		}
	}
}

// Of two fact-checks of one claim that match a post equally well, the one
// in the post's language comes first when the post's language is known.
func TestClaimMatchPrefersThePostsLanguage(t *testing.T) {
	eachEngine(t, testClaimMatchPrefersThePostsLanguage)
}

func testClaimMatchPrefersThePostsLanguage(t *testing.T, s *Store) {
	ctx := context.Background()
	// Polish and Catalan have no stemmer here, so both claims index the
	// same words and score the same.
	claim := "Warszawa Barcelona 2024 rower zakaz"
	if err := s.AddClaimReviews(ctx, []sources.ClaimReview{
		{Claim: claim, Rating: "Fałsz", Reviewer: "Demagog", ReviewURL: "https://demagog.org.pl/rower", Language: "pl"},
		{Claim: claim, Rating: "Fals", Reviewer: "Verificat", ReviewURL: "https://www.verificat.cat/rower", Language: "ca"},
	}, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pl", "ca"} {
		ms, err := s.MatchClaims(ctx, claim, want, 2)
		if err != nil || len(ms) != 2 {
			t.Fatalf("MatchClaims(%s) = %+v, %v", want, ms, err)
		}
		if ms[0].Score != ms[1].Score || ms[0].Language != want {
			t.Errorf("MatchClaims in %s: %s (%v) before %s (%v)", want, ms[0].Language, ms[0].Score, ms[1].Language, ms[1].Score)
		}
	}
}
