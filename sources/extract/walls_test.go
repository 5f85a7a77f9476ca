package extract_test

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/extract"
)

// TestWalls: the walls publishers serve around one news story. A wall is
// named only when the page shows one (its structured data, or a subscribe
// or sign-in box where the text stops), the box is never taken for the
// story, and a page that served its whole text is not called partial
// whatever it declares.
func TestWalls(t *testing.T) {
	art := testworld.WallArticle
	const pageURL = "https://www.springfieldledger.example/news/2024/01/21/springfield-main-street-bicycles"
	freeWithPiano := strings.Replace(testworld.ConsentHTML(art), "</head>",
		`<script async src="https://cdn.tinypass.com/api/tinypass.min.js"></script></head>`, 1)
	aboutPaywalls := art
	aboutPaywalls.Paras = append(append([]string{}, art.Paras...),
		"Readers who see a box asking them to subscribe to continue reading on other sites will not find one here: the Ledger "+
			"keeps its reporting on public-safety claims free, the editor said, because a false claim spreads faster than a paid correction "+
			"and the paper would rather everyone could check what the council has and has not decided.")
	rows := []struct {
		name     string
		html     string
		kind     string // "" no wall
		signs    []string
		minWords int
		maxWords int
		amp      string
	}{
		{"consent overlay", testworld.ConsentHTML(art), "", nil, testworld.WallWords(len(art.Paras)) - 5, 1 << 20, ""},
		{"paywall teaser", testworld.PaywallTeaserHTML(art, 2, ""), extract.WallPaywall,
			[]string{"isAccessibleForFree: false", "subscribe to continue reading", "Piano (TinyPass)"}, testworld.WallWords(2) - 5, testworld.WallWords(2) + 5, ""},
		{"subscriber's page, declared not free", testworld.PaywallFullHTML(art, 2), "", nil, testworld.WallWords(len(art.Paras)) - 5, 1 << 20, ""},
		{"registration wall", testworld.RegistrationWallHTML(art, 3), extract.WallRegistration,
			[]string{"create a free account to continue reading"}, testworld.WallWords(3) - 5, testworld.WallWords(3) + 5, ""},
		{"free page with a paywall vendor's script", freeWithPiano, "", nil, testworld.WallWords(len(art.Paras)) - 5, 1 << 20, ""},
		{"a story that mentions subscribe boxes", testworld.ConsentHTML(aboutPaywalls), "", nil, testworld.WallWords(len(art.Paras)), 1 << 20, ""},
		{"JavaScript shell", testworld.ShellHTML(art, "/amp/news/2024/01/21/springfield-main-street-bicycles", art.Path), "", nil, 0, 30,
			"https://www.springfieldledger.example/amp/news/2024/01/21/springfield-main-street-bicycles"},
		{"AMP page", testworld.AMPHTML(art), "", nil, testworld.WallWords(len(art.Paras)) - 5, 1 << 20, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			a, err := extract.Extract([]byte(row.html), pageURL)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case row.kind == "" && a.Wall != nil:
				t.Errorf("wall %s on a page read whole", a.Wall)
			case row.kind != "" && a.Wall == nil:
				t.Errorf("no wall found; text:\n%s", a.Text)
			case row.kind != "" && a.Wall.Kind != row.kind:
				t.Errorf("wall %s, want a %s", a.Wall, row.kind)
			}
			for _, s := range row.signs {
				if !strings.Contains(strings.ToLower(a.Wall.String()), strings.ToLower(s)) {
					t.Errorf("wall %s does not name %q", a.Wall, s)
				}
			}
			if a.Words < row.minWords || a.Words > row.maxWords {
				t.Errorf("%d words read, want %d to %d:\n%s", a.Words, row.minWords, row.maxWords, a.Text)
			}
			for _, junk := range []string{"Subscribe to continue", "Already a subscriber", "free account", "We value your privacy"} {
				if strings.Contains(a.Text, junk) {
					t.Errorf("the text keeps the wall's %q:\n%s", junk, a.Text)
				}
			}
			if a.AMPURL != row.amp {
				t.Errorf("AMP URL %q, want %q", a.AMPURL, row.amp)
			}
		})
	}
}
