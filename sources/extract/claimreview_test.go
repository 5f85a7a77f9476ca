package extract

import "testing"

// ClaimReview in microdata reads as its JSON-LD twin does.
func TestClaimReviewMicrodata(t *testing.T) {
	a := extractFixture(t, "claimreview_microdata.html", "https://checkdesk.example.net/2021/02/wind-turbines-cancer")
	if len(a.ClaimReviews) != 1 {
		t.Fatalf("got %+v, want one claim review", a.ClaimReviews)
	}
	cr := a.ClaimReviews[0]
	if cr.Claim != "The noise from wind turbines causes cancer" || cr.Rating != "Pants on Fire" || cr.Reviewer != "Check Desk" ||
		cr.Claimant != "A state senator" || cr.ReviewURL != "https://checkdesk.example.net/2021/02/wind-turbines-cancer" ||
		cr.ReviewDate.Format("2006-01-02") != "2021-02-03" || cr.ClaimDate.Format("2006-01-02") != "2021-01-28" ||
		cr.Language != "en" { // the page's, as the review declares none
		t.Errorf("claim review = %+v", cr)
	}
}

// A DataFeed (the Data Commons fact-check feed's shape) yields each
// ClaimReview in its items; something that is not JSON is an error.
func TestClaimReviewsJSON(t *testing.T) {
	crs, err := ClaimReviewsJSON([]byte(`{"@context": "https://schema.org", "@type": "DataFeed", "dataFeedElement": [
	 {"@type": "DataFeedItem", "item": [{"@type": "ClaimReview", "claimReviewed": "Hot water kills the virus",
	   "url": "https://a.example/1", "author": {"@type": "Organization", "name": "A"}, "reviewRating": {"@type": "Rating", "alternateName": "False"}}]},
	 {"@type": "DataFeedItem", "item": [{"@type": "ClaimReview", "claimReviewed": "The moon is cheese",
	   "url": "https://b.example/2", "publisher": {"@type": "Organization", "name": "B"}, "reviewRating": {"@type": "Rating", "ratingValue": 1, "bestRating": 5}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cr := range crs {
		got[cr.Claim] = cr.Reviewer + " " + cr.Rating
	}
	if len(crs) != 2 || got["Hot water kills the virus"] != "A False" || got["The moon is cheese"] != "B 1 (on a scale from 1 to 5)" {
		t.Errorf("ClaimReviewsJSON = %+v", crs)
	}
	if _, err := ClaimReviewsJSON([]byte("<html>")); err == nil {
		t.Error("HTML was read as JSON-LD")
	}
}

// A review's inLanguage (a code, a tag, a name or a Language object) is
// read as ISO 639-1, from the review, else its claim, else the feed; one
// that declares none, in a feed that declares none, has none.
func TestClaimReviewLanguage(t *testing.T) {
	review := func(claim, extra string) string {
		return `{"@type": "ClaimReview", "claimReviewed": "` + claim + `", "url": "https://a.example/` + claim + `",
		  "reviewRating": {"@type": "Rating", "alternateName": "False"}` + extra + `}`
	}
	feed := func(lang string, items ...string) []byte {
		s := `{"@type": "DataFeed", ` + lang + `"dataFeedElement": [{"@type": "DataFeedItem", "item": [`
		for i, it := range items {
			if i > 0 {
				s += ", "
			}
			s += it
		}
		return []byte(s + `]}]}`)
	}
	for _, c := range []struct {
		doc  []byte
		want map[string]string
	}{
		{feed(`"inLanguage": "es-ES", `,
			review("code", `, "inLanguage": "pt-BR"`),
			review("object", `, "inLanguage": {"@type": "Language", "name": "Catalan", "alternateName": "ca"}`),
			review("name", `, "inLanguage": "German"`),
			review("claim", `, "itemReviewed": {"@type": "Claim", "inLanguage": "fr"}`),
			review("feed", ``)),
			map[string]string{"code": "pt", "object": "ca", "name": "de", "claim": "fr", "feed": "es"}},
		{feed(``, review("none", ``), review("nonsense", `, "inLanguage": "klingon-x"`)),
			map[string]string{"none": "", "nonsense": ""}},
	} {
		crs, err := ClaimReviewsJSON(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, cr := range crs {
			got[cr.Claim] = cr.Language
		}
		if len(got) != len(c.want) {
			t.Errorf("ClaimReviewsJSON = %+v", crs)
		}
		for claim, want := range c.want {
			if g, ok := got[claim]; !ok || g != want {
				t.Errorf("%s: language %q, want %q", claim, g, want)
			}
		}
	}
}

// A ClaimReview names where the claim appeared (itemReviewed's appearance
// and firstAppearance, as a URL, an object or a list of them): the post a
// fact-check is about.
func TestClaimReviewAppearances(t *testing.T) {
	crs, err := ClaimReviewsJSON([]byte(`{"@context": "https://schema.org", "@type": "ClaimReview",
	  "claimReviewed": "The mayor resigned", "reviewRating": {"@type": "Rating", "alternateName": "False"},
	  "itemReviewed": {"@type": "Claim",
	    "appearance": [{"@type": "SocialMediaPosting", "url": "https://x.com/cityrumours/status/1766912345678901234"},
	                   "https://bsky.app/profile/rumours.bsky.social/post/3kabc2xyz", "not a URL"],
	    "firstAppearance": {"@type": "CreativeWork", "@id": "https://x.com/cityrumours/status/1766912345678901234"}}}`))
	if err != nil || len(crs) != 1 {
		t.Fatalf("%+v, %v", crs, err)
	}
	want := []string{"https://bsky.app/profile/rumours.bsky.social/post/3kabc2xyz", "https://x.com/cityrumours/status/1766912345678901234"}
	if got := crs[0].Appearances; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("appearances %q, want %q", got, want)
	}
}
