package extract

import (
	"strings"
	"testing"
)

// syndicatedPage is a news page as publishers write them: a head with
// metadata, navigation, the article, a footer; head and tail add to it.
func syndicatedPage(head, ld, tail string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Springfield adds protected bike lanes | Springfield Star</title>
<meta property="og:site_name" content="Springfield Star">
<meta property="article:published_time" content="2024-01-03T10:00:00Z">` + head + ld + `</head><body>
<header><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sports">Sports</a></nav></header>
<main><article><h1>Springfield adds protected bike lanes</h1>
<p>Springfield's city council voted 7-2 on Tuesday to add protected bicycle lanes on Main Street, rejecting a proposal that would have barred bicycles from the downtown stretch during rush hour.</p>
<p>Mayor Dana Ruiz said the lanes would be built over the summer and that no ban on cycling had ever been drafted. Council member Pat Okafor, who voted against the plan, said merchants worried about losing parking.</p>
<p>The city's transportation department estimated the project would cost $1.2 million, paid largely from a state grant awarded last year.</p>` + tail + `
</article></main><footer><p>© 2024 Springfield Star. All rights reserved.</p></footer></body></html>`
}

func TestSyndicationDeclared(t *testing.T) {
	ld := func(author string) string {
		return `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Springfield adds protected bike lanes",
"datePublished":"2024-01-03T10:00:00Z","author":` + author + `,"publisher":{"@type":"NewsMediaOrganization","name":"Springfield Star"}}</script>`
	}
	for name, tc := range map[string]struct {
		html          string
		url, org, why string
		none          bool
	}{
		"agency as author": {html: syndicatedPage("", ld(`{"@type":"Organization","name":"The Associated Press"}`), ""),
			org: "The Associated Press", why: "its author is the organisation The Associated Press"},
		"syndication-source tag": {html: syndicatedPage(`<meta name="syndication-source" content="https://apnews.com/article/springfield-bike-lanes-0a1b2c">`, "", ""),
			url: "https://apnews.com/article/springfield-bike-lanes-0a1b2c", why: "its syndication-source tag"},
		"original-source tag": {html: syndicatedPage(`<meta name="original-source" content="https://www.propublica.org/article/springfield-lanes">`, "", ""),
			url: "https://www.propublica.org/article/springfield-lanes", why: "its original-source tag"},
		"isBasedOn": {html: syndicatedPage("", `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Springfield adds protected bike lanes",
"isBasedOn":{"@type":"NewsArticle","url":"https://www.reuters.com/world/us/springfield-lanes-2024-01-02/","publisher":{"@type":"Organization","name":"Reuters"}}}</script>`, ""),
			url: "https://www.reuters.com/world/us/springfield-lanes-2024-01-02/", org: "Reuters", why: "schema.org isBasedOn"},
		"sourceOrganization": {html: syndicatedPage("", `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Springfield adds protected bike lanes",
"publisher":{"@type":"NewsMediaOrganization","name":"Springfield Star"},"sourceOrganization":{"@type":"Organization","name":"Agence France-Presse"}}</script>`, ""),
			org: "Agence France-Presse", why: "schema.org sourceOrganization"},
		"originally published line": {html: syndicatedPage("", "", `<p><em>This article was originally published by ProPublica, a nonprofit newsroom.</em></p>`),
			org: "ProPublica", why: "“originally published by ProPublica”"},
		"staff story":          {html: syndicatedPage("", ld(`{"@type":"Person","name":"Jane Doe"}`), ""), none: true},
		"host as author":       {html: syndicatedPage("", ld(`{"@type":"Organization","name":"SpringfieldStar.example"}`), ""), none: true},
		"own name as original": {html: syndicatedPage("", "", `<p>Originally published on Springfield Star.</p>`), none: true},
		"reprinted elsewhere":  {html: syndicatedPage("", "", `<p>This article was reprinted on Wired.com.</p>`), none: true},
		"house name as author": {html: syndicatedPage("", ld(`{"@type":"Organization","name":"The Springfield Star"}`), ""), none: true},
	} {
		a, err := Extract([]byte(tc.html), "https://www.springfieldstar.example/news/bike-lanes")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		y := a.Syndication
		if tc.none {
			if y != nil {
				t.Errorf("%s: declares %+v", name, y)
			}
			continue
		}
		if y == nil {
			t.Errorf("%s: no syndication found", name)
			continue
		}
		if y.URL != tc.url || y.Name != tc.org || !strings.EqualFold(y.Why, tc.why) {
			t.Errorf("%s: %+v, want url %q name %q why %q", name, *y, tc.url, tc.org, tc.why)
		}
	}
}
