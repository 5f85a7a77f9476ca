package archive

import (
	"context"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
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
