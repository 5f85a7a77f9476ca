package search

import (
	"os"
	"testing"
)

// A saved claims:search answer reads into the same ClaimReviews the
// provider's hits carry.
func TestFactCheckReviews(t *testing.T) {
	b, err := os.ReadFile("testdata/factcheck.json")
	if err != nil {
		t.Fatal(err)
	}
	crs, err := FactCheckReviews(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(crs) != 3 {
		t.Fatalf("got %d reviews, want 3: %+v", len(crs), crs)
	}
	c := crs[1]
	if c.Claim != "5G mobile networks spread COVID-19." || c.Claimant != "Social media users" || c.Rating != "Pants on Fire" ||
		c.Reviewer != "politifact.com" || c.ReviewDate.Format("2006-01-02") != "2020-05-05" || c.ClaimDate.Format("2006-01-02") != "2020-03-28" {
		t.Errorf("second review = %+v", c)
	}
	for _, cr := range crs {
		if cr.Language != "en" { // each review's languageCode
			t.Errorf("review %q: language %q, want en", cr.Claim, cr.Language)
		}
	}
	if _, err := FactCheckReviews([]byte(`{"claims": 3}`)); err == nil {
		t.Error("a malformed answer was read")
	}
}
