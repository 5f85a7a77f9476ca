package pipeline

import (
	"slices"
	"strings"
	"testing"
)

// TestResolveSourceIDs: the ids of the correction prompt ("[S1]") become
// the sources' URLs, in the ways real models write them; an id that names
// no source is removed and named in a warning; names that only look like
// ids, and links, are left alone.
func TestResolveSourceIDs(t *testing.T) {
	urls := []string{"https://www.reuters.com/a", "https://apnews.com/b", "https://www.bbc.co.uk/c"}
	r, a, b := urls[0], urls[1], urls[2]
	cases := []struct {
		in, want string
		warns    int
	}{
		{"This post is false [S1].", "This post is false (" + r + ").", 0},
		{"No ban was ordered [S1, S2].", "No ban was ordered (" + r + "; " + a + ").", 0},
		{"No ban was ordered [S1][S2] and a lane was widened [S3].", "No ban was ordered (" + r + "; " + a + ") and a lane was widened (" + b + ").", 0},
		{"No ban was ordered [S1], [S2].", "No ban was ordered (" + r + "; " + a + ").", 0},
		{"No ban was ordered ([S1]; [S2]).", "No ban was ordered (" + r + "; " + a + ").", 0},
		{"No ban was ordered (S2).", "No ban was ordered (" + a + ").", 0},
		{"No ban was ordered [2].", "No ban was ordered (" + a + ").", 0},
		{"No ban was ordered [Source 3].", "No ban was ordered (" + b + ").", 0},
		{"No ban was ordered [s1; s3].", "No ban was ordered (" + r + "; " + b + ").", 0},
		{"As source 2 reports, no ban was ordered.", "As " + a + " reports, no ban was ordered.", 0},
		{"Sources 1 and 3 say no ban was ordered.", r + " " + b + " say no ban was ordered.", 0},
		{"According to S1, no ban was ordered.", "According to " + r + ", no ban was ordered.", 0},
		{"[Reuters](S1) found no ban.", "Reuters (" + r + ") found no ban.", 0},
		{"No ban was ordered [S1](https://invented.example/x).", "No ban was ordered (" + r + ").", 0},
		// Invented or garbled ids go, with a warning.
		{"No ban was ordered [S9].", "No ban was ordered.", 1},
		{"No ban was ordered [S1, S7].", "No ban was ordered (" + r + ").", 1},
		{"[Reuters](S4) found no ban.", "Reuters found no ban.", 1},
		{"As source 8 says, no ban.", "As source 8 says, no ban.", 1},
		// Not ids: names, numbers in prose, links.
		{"The Galaxy S9 was not banned.", "The Galaxy S9 was not banned.", 0},
		// A number after "source N" is a range or list only when each
		// number it names is a source's, and a year stays whole.
		{"Sources 1-3 say no ban was ordered.", r + " " + a + " " + b + " say no ban was ordered.", 0},
		{"According to source 1 - 2020 figures, no ban.", "According to " + r + " - 2020 figures, no ban.", 0},
		{"As source 3 - 5 people were fined - says, no ban.", "As " + b + " - 5 people were fined - says, no ban.", 0},
		{"Source 2, 2021: no ban.", a + ", 2021: no ban.", 0},
		{"The Galaxy S2 was not banned [S2].", "The Galaxy S2 was not banned (" + a + ").", 0}, // S2 is a name in the post
		{"According to S1, no ban was ordered for S3 owners.", "According to " + r + ", no ban was ordered for S3 owners.", 0},
		{"Route MS1 and S1-2 are open (1) today.", "Route MS1 and S1-2 are open (1) today.", 0},
		{"See https://example.org/S1 and [the page](https://example.org/source%201).", "See https://example.org/S1 and [the page](https://example.org/source%201).", 0},
		{"No ban [S1].\n\nThe lane [S3] widens.", "No ban (" + r + ").\n\nThe lane (" + b + ") widens.", 0},
		{"No ban was ordered [Source: 2].", "No ban was ordered (" + a + ").", 0},
		// Fullwidth brackets (models trained on Chinese text) and ranges.
		{"该帖子是假的【S1】。", "该帖子是假的(" + r + ")。", 0},
		// DeepSeek's citations, bare numbers in fullwidth brackets,
		// "(Source 1)" and footnote markers.
		{"No ban was ordered [citation:2].", "No ban was ordered (" + a + ").", 0},
		{"No ban was ordered [citation:1][citation:3].", "No ban was ordered (" + r + "; " + b + ").", 0},
		{"No ban was ordered [citation: 7].", "No ban was ordered.", 1},
		{"该帖子是假的【1】。", "该帖子是假的(" + r + ")。", 0},
		{"No ban was ordered (Source 1).", "No ban was ordered (" + r + ").", 0},
		{"No ban was ordered[^2] and a lane was widened [^3].", "No ban was ordered (" + a + ") and a lane was widened (" + b + ").", 0},
		{"该帖子是假的［S1，S2］。", "该帖子是假的(" + r + "; " + a + ")。", 0},
		{"该帖子是假的（S2）。", "该帖子是假的(" + a + ")。", 0},
		{"No ban was ordered [S1–S3].", "No ban was ordered (" + r + "; " + a + "; " + b + ").", 0},
		{"No ban was ordered [1-2].", "No ban was ordered (" + r + "; " + a + ").", 0},
		{"No ban was ordered [S2-S5].", "No ban was ordered (" + a + "; " + b + ").", 2},
		// The model's own spacing stays (French puts a space before ":").
		{"Ce post est faux : aucune interdiction [S1] !", "Ce post est faux : aucune interdiction (" + r + ") !", 0},
		{"Ce post est faux : aucune interdiction [S8] !", "Ce post est faux : aucune interdiction !", 1},
	}
	for _, c := range cases {
		got, warns := ResolveSourceIDs(c.in, urls, "The post: my S3 and the Galaxy S2 phones are banned.")
		if got != c.want || len(warns) != c.warns {
			t.Errorf("ResolveSourceIDs(%q)\n got %q, %q\nwant %q with %d warnings", c.in, got, warns, c.want, c.warns)
		}
		for _, w := range warns {
			if !strings.Contains(w, "not one of the evidence sources") {
				t.Errorf("warning %q does not say why", w)
			}
		}
	}
	// Resolved, the correction goes through the one URL guard as before.
	text, _ := ResolveSourceIDs("This post is false [S2] (https://fake.example/x) [S3].", urls, "")
	guarded, cited, warnings := GuardCorrection(text, urls)
	if !slices.Equal(cited, []string{a, b}) || len(warnings) != 1 || strings.Contains(guarded, "fake.example") {
		t.Errorf("guarded %q, cited %q, warnings %q", guarded, cited, warnings)
	}
}
