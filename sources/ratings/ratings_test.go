package ratings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func load(t *testing.T, opts Options) *Rater {
	t.Helper()
	r, err := Load(opts)
	if err != nil {
		t.Fatalf("Load(%+v): %v", opts, err)
	}
	return r
}

func TestTierFor(t *testing.T) {
	cases := []struct {
		fact, bias string
		want       Tier
	}{
		{FactualityVeryHigh, BiasLeastBiased, TierHigh},
		{FactualityVeryHigh, BiasProScience, TierHigh},
		{FactualityVeryHigh, BiasLeftCenter, TierMedium},
		{FactualityHigh, BiasRightCenter, TierMedium},
		{FactualityHigh, BiasLeastBiased, TierMedium},
		{FactualityMostlyFactual, BiasProScience, TierLow},
		{FactualityMixed, BiasLeastBiased, TierExcluded},
		{FactualityVeryHigh, BiasLeft, TierExcluded},
		{FactualityHigh, BiasRight, TierExcluded},
		{FactualityHigh, BiasQuestionable, TierExcluded},
		{"", BiasSatire, TierExcluded},
		{FactualityHigh, "", TierExcluded},
		{"", "", TierUnrated},
	}
	for _, c := range cases {
		if got := TierFor(c.fact, c.bias); got != c.want {
			t.Errorf("TierFor(%q, %q) = %s, want %s", c.fact, c.bias, got, c.want)
		}
	}
	if !(TierHigh.Rank() < TierLow.Rank() && TierLow.Rank() < TierUnrated.Rank() && TierUnrated.Rank() < TierExcluded.Rank()) {
		t.Error("tier ranks out of order")
	}
	if TierExcluded.Usable() || !TierUnrated.Usable() {
		t.Error("Usable: excluded must not be usable, unrated must be")
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"very-high": FactualityVeryHigh, " Mostly Factual ": FactualityMostlyFactual, "VL": FactualityVeryLow} {
		if got, err := NormalizeFactuality(in); err != nil || got != want {
			t.Errorf("NormalizeFactuality(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"center": BiasLeastBiased, "Left-Center": BiasLeftCenter, "fake-news": BiasQuestionable, "pro_science": BiasProScience} {
		if got, err := NormalizeBias(in); err != nil || got != want {
			t.Errorf("NormalizeBias(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := NormalizeFactuality("greatish"); err == nil {
		t.Error("NormalizeFactuality accepted an unknown value")
	}
	if _, err := NormalizeBias("centrist-ish"); err == nil {
		t.Error("NormalizeBias accepted an unknown value")
	}
}

func TestBuiltinTable(t *testing.T) {
	b, err := parseBuiltin(builtinTSV)
	if err != nil {
		t.Fatal(err)
	}
	if n := b.len(); n < 300 {
		t.Errorf("built-in table has %d rows, want a few hundred", n)
	}
	if b.origin != "muse built-in table 2026-11" {
		t.Errorf("origin %q", b.origin)
	}
	r := load(t, Options{})
	for in, want := range map[string]Tier{
		"https://www.reuters.com/world/x": TierHigh, "factcheck.afp.com": TierHigh, "who.int": TierHigh,
		"en.wikipedia.org/wiki/X": TierLow, "infowars.com": TierExcluded, "theonion.com": TierExcluded,
		"ec.europa.eu/eurostat/web/main": TierHigh, "ec.europa.eu/commission": TierMedium,
	} {
		if got := r.Rate(in); got.Tier != want {
			t.Errorf("Rate(%q) = %+v, want tier %s", in, got, want)
		}
	}
	if _, err := parseBuiltin("# date: 2026-11\nbad.example\thigh\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("short row: err = %v", err)
	}
}

func TestRules(t *testing.T) {
	r := load(t, Options{})
	cases := []struct {
		in, origin string
		tier       Tier
		user       bool
	}{
		{"https://www.census.gov/data", "muse built-in table 2026-11", TierHigh, false},
		{"https://sd11.senate.ca.gov/news", "rule: official .gov", TierMedium, false},
		{"army.mil", "rule: official .mil", TierMedium, false},
		{"nato.int", "rule: official .int", TierMedium, false},
		{"https://www.gov.uk/guidance/x", "rule: official gov.uk", TierMedium, false},
		{"https://assets.publishing.service.gov.uk/a.pdf", "rule: official service.gov.uk", TierMedium, false},
		{"canada.ca/en/health-canada", "rule: official canada.ca", TierMedium, false},
		{"www150.statcan.gc.ca/t1", "muse built-in table 2026-11", TierHigh, false},
		{"pm.gc.ca", "rule: official gc.ca", TierMedium, false},
		{"police.govt.nz", "rule: official .govt.nz", TierMedium, false},
		{"budgetoffice.gov.ng", "rule: official .gov.ng", TierMedium, false},
		{"mhlw.go.jp", "rule: official .go.jp", TierMedium, false},
		{"ox.ac.uk", "rule: official .ac.uk", TierMedium, false},
		{"cmu.edu", "rule: official .edu", TierMedium, false},
		{"health.state.mn.us", "rule: official .state.mn.us", TierMedium, false},
		{"https://twitter.com/someone/status/1", "rule: user content", TierExcluded, true},
		{"https://mobile.x.com/a", "rule: user content", TierExcluded, true},
		{"m.facebook.com/story", "rule: user content", TierExcluded, true},
		{"youtu.be/abc", "rule: user content", TierExcluded, true},
		{"https://t.co/xyz", "rule: user content", TierExcluded, true},
		{"bit.ly/3abc", "rule: user content", TierExcluded, true},
		{"abcnews.go.com", "muse built-in table 2026-11", TierMedium, false},
		{"gofundme.com", OriginNone, TierUnrated, false},
	}
	for _, c := range cases {
		got := r.Rate(c.in)
		if got.Origin != c.origin || got.Tier != c.tier || got.UserContent != c.user {
			t.Errorf("Rate(%q) = %+v; want origin %q tier %s user content %v", c.in, got, c.origin, c.tier, c.user)
		}
	}
}

func TestPrecedence(t *testing.T) {
	ov := filepath.Join(t.TempDir(), "overrides.toml")
	if err := os.WriteFile(ov, []byte(`
[domains."gazette.example"]
drop = true
note = "ran a fabricated interview"

[domains."rumours.example"]
boost = true

[domains."metro.example"]
factuality = "very high"
bias = "center"
publisher = "Metro (newsroom)"

[domains."twitter.com"]
boost = true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := load(t, Options{File: "testdata/combined.json", OverridesFile: ov})
	file := "mbfc combined.json 2026-03-14"
	cases := []struct {
		in, origin, publisher string
		tier                  Tier
	}{
		{"https://gazette.example/a", "overrides file: drop", "The Example Gazette", TierExcluded},
		{"rumours.example", "overrides file: boost", "Rumours Daily", TierHigh},
		{"metro.example/sports", "overrides file", "Metro (newsroom)", TierHigh},
		{"metro.example/city/x", "overrides file", "Metro (newsroom)", TierHigh}, // the newsroom's word covers the whole domain
		// File and built-in table combine (TestCombine): the better tier.
		{"reuters.com", "muse built-in table 2026-11 (over " + file + ": high, left-center)", "Reuters", TierHigh},
		{"apnews.com", "muse built-in table 2026-11", "Associated Press", TierHigh},
		{"state.gov", file, "State Department (file)", TierExcluded}, // file over the official rule: rules are not a rating
		{"usa.gov", "rule: official .gov", "usa.gov (government)", TierMedium},
		{"twitter.com/a", "overrides file: boost", "X (Twitter)", TierHigh},
	}
	for _, c := range cases {
		got := r.Rate(c.in)
		if got.Origin != c.origin || got.Tier != c.tier || got.Publisher != c.publisher {
			t.Errorf("Rate(%q) = %+v; want origin %q tier %s publisher %q", c.in, got, c.origin, c.tier, c.publisher)
		}
	}
	if g := r.Rate("gazette.example"); !g.Drop || g.Boost {
		t.Errorf("dropped domain flags: %+v", g)
	}
	if g := r.Rate("twitter.com/a"); !g.Boost || g.UserContent {
		t.Errorf("a boosted platform is vouched for by the newsroom: %+v", g)
	}
	// The file rates youtube.com, but a post there is still user content.
	if g := r.Rate("https://www.youtube.com/watch?v=1"); g.Origin != file || g.Tier != TierMedium || !g.UserContent {
		t.Errorf("youtube.com: %+v", g)
	}
	n, date, files := r.Info()
	if n != 10 || date != "2026-03-14" || len(files) != 2 || files[0] != "testdata/combined.json" || files[1] != ov {
		t.Errorf("Info() = %d, %q, %v", n, date, files)
	}
}

func TestMatching(t *testing.T) {
	r := load(t, Options{File: "testdata/combined.json"})
	cases := []struct{ in, domain, publisher string }{
		{"HTTPS://WWW.Gazette.Example/Story", "gazette.example", "The Example Gazette"},
		{"oldgazette.example/x", "gazette.example", "The Example Gazette"},      // alias
		{"news.oldgazette.example", "gazette.example", "The Example Gazette"},   // subdomain, then alias
		{"metro.example/city", "metro.example/city", "Metro Example City Desk"}, // path entry
		{"metro.example/City/hall?x=1", "metro.example/city", "Metro Example City Desk"},
		{"metro.example/cityscape", "metro.example", "Metro Example"}, // a prefix must end at a path segment
		{"www.metro.example/", "metro.example", "Metro Example"},
		{"a.b.metro.example/city/x", "metro.example/city", "Metro Example City Desk"}, // subdomain fallback keeps the path
		{"deep.sub.science.example", "science.example", "Science Example"},
		{"someone.blogspot.com", "someone.blogspot.com", ""}, // a public suffix: blogs are not Blogger's publications
		{"https://web.archive.org/web/20201031120000/https://www.gazette.example/a", "gazette.example", "The Example Gazette"},
		{"https://web.archive.org/web/2020id_/http:/metro.example/city/y", "metro.example/city", "Metro Example City Desk"},
	}
	for _, c := range cases {
		got := r.Rate(c.in)
		if got.Domain != c.domain || got.Publisher != c.publisher || got.Input != c.in {
			t.Errorf("Rate(%q) = %+v; want domain %q publisher %q", c.in, got, c.domain, c.publisher)
		}
	}
	if g := r.Rate("someone.blogspot.com"); g.Tier != TierUnrated {
		t.Errorf("blogspot subdomain: %+v", g)
	}
	for _, in := range []string{"", "   ", "http://", "https://exa mple.com"} {
		if g := r.Rate(in); g.Tier != TierUnrated || g.Domain != "" || g.Origin != "no host in input" {
			t.Errorf("Rate(%q) = %+v, want unrated with no host", in, g)
		}
	}
}

func TestCSV(t *testing.T) {
	r := load(t, Options{File: "testdata/ratings.csv"})
	fi, err := os.Stat("testdata/ratings.csv")
	if err != nil {
		t.Fatal(err)
	}
	origin := "ratings file ratings.csv " + fi.ModTime().UTC().Format("2006-01-02")
	cases := []struct {
		in   string
		tier Tier
		pub  string
	}{
		{"gazette.example", TierHigh, "The Example Gazette"},
		{"metro.example/city/a", TierLow, "Metro City Desk"},
		{"rumours.example", TierExcluded, "Rumours Daily"},
		{"lefty.example", TierExcluded, "Lefty"},
	}
	for _, c := range cases {
		if g := r.Rate(c.in); g.Tier != c.tier || g.Publisher != c.pub || g.Origin != origin {
			t.Errorf("Rate(%q) = %+v; want %s %q %q", c.in, g, c.tier, c.pub, origin)
		}
	}

	dir := t.TempDir()
	for name, body := range map[string]string{
		"plain.csv": "gazette.example,very high,center\nmetro.example,high,left-center\n",
		"mbfc.csv":  "domain,name,bias,reporting,credibility\ngazette.example,The Example Gazette,center,very-high,high-credibility\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if g := load(t, Options{File: p}).Rate("gazette.example"); g.Tier != TierHigh || !strings.HasPrefix(g.Origin, "ratings file "+name) {
			t.Errorf("%s: %+v", name, g)
		}
	}
}

func TestMalformedFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct{ body, want string }{
		"truncated.json": {`{"version":5,"sources":[{"domain":"a.example","bias":"center"`, "not an MBFC combined.json: file ends early"},
		"syntax.json":    {`{"sources": [}`, "at byte"},
		"nosources.json": {`{"version": 5, "date": "2026-01-01"}`, `no "sources" list`},
		"badbias.json":   {`{"sources":[{"domain":"a.example","bias":"centrist","reporting":"high"}]}`, `sources[0] ("a.example"): unknown bias "centrist"`},
		"baddomain.json": {`{"sources":[{"domain":"","bias":"center","reporting":"high"}]}`, `bad domain ""`},
		"empty.csv":      {"  \n", "is empty"},
		"header.csv":     {"domain,factuality,bias\n", "no ratings in CSV"},
		"badfact.csv":    {"a.example,high,center\nb.example,greatish,center\n", `line 2: unknown factuality "greatish"`},
		"short.csv":      {"a.example,high\n", "line 1: want domain,factuality,bias, got 2 field(s)"},
		"quote.csv":      {"a.example,\"high,center\n", "not a CSV"},
		"page.html":      {"<!doctype html><html><body>Not found</body></html>\n", "line 1"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(Options{File: p})
		if err == nil {
			t.Errorf("%s: loaded without error", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, p) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q; want one line naming the file and containing %q", name, msg, c.want)
		}
	}
	if _, err := Load(Options{File: filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing named file: %v", err)
	}
	bad := filepath.Join(dir, "overrides.toml")
	os.WriteFile(bad, []byte("[domains.\"a.example\"]\nboost = true\ndrop = true\n"), 0o644)
	if _, err := Load(Options{OverridesFile: bad}); err == nil || !strings.Contains(err.Error(), "boost and drop both set") {
		t.Errorf("boost+drop override: %v", err)
	}
	os.WriteFile(bad, []byte("[domains.\"a.example\"\nboost = true\n"), 0o644)
	if _, err := Load(Options{OverridesFile: bad}); err == nil || !strings.Contains(err.Error(), "read overrides file") {
		t.Errorf("broken TOML: %v", err)
	}
	// Absent installed ratings and overrides files are not errors.
	r := load(t, Options{DataDir: dir, OverridesFile: filepath.Join(dir, "none.toml")})
	if n, date, files := r.Info(); n < 300 || date != "2026-11" || len(files) != 0 {
		t.Errorf("Info() without files = %d, %q, %v", n, date, files)
	}
}

func TestSetOverride(t *testing.T) {
	p := filepath.Join(t.TempDir(), "muse", "overrides.toml")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(SetOverride(p, "https://www.Tabloid.example/story", Override{Drop: true, Note: "fabricated quotes"}))
	must(SetOverride(p, "wire.example", Override{Boost: true}))
	must(SetOverride(p, "local.example", Override{Factuality: "HIGH", Bias: "center"}))
	must(SetOverride(p, "al.example/birmingham", Override{Boost: true}))
	must(SetOverride(p, "gone.example", Override{Drop: true}))
	must(SetOverride(p, "www.gone.example", Override{})) // a zero override removes the entry

	var f overridesFile
	if _, err := toml.DecodeFile(p, &f); err != nil {
		t.Fatalf("written file is not TOML: %v", err)
	}
	want := map[string]Override{
		"tabloid.example":       {Drop: true, Note: "fabricated quotes"},
		"wire.example":          {Boost: true},
		"local.example":         {Factuality: FactualityHigh, Bias: BiasLeastBiased},
		"al.example/birmingham": {Boost: true},
	}
	if len(f.Domains) != len(want) {
		t.Errorf("domains %v, want %v", f.Domains, want)
	}
	for k, o := range want {
		if f.Domains[k] != o {
			t.Errorf("domains[%q] = %+v, want %+v", k, f.Domains[k], o)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	r := load(t, Options{OverridesFile: p})
	if g := r.Rate("tabloid.example"); g.Tier != TierExcluded || !g.Drop {
		t.Errorf("dropped: %+v", g)
	}
	if g := r.Rate("local.example"); g.Tier != TierMedium || g.Origin != "overrides file" {
		t.Errorf("rated: %+v", g)
	}
	if g := r.Rate("al.example/birmingham/x"); g.Tier != TierHigh || g.Domain != "al.example/birmingham" {
		t.Errorf("path boost: %+v", g)
	}
	if g := r.Rate("al.example/montgomery"); g.Tier != TierUnrated {
		t.Errorf("path boost leaked to the host: %+v", g)
	}

	if err := SetOverride(p, "x.example", Override{Boost: true, Drop: true}); err == nil {
		t.Error("boost and drop together accepted")
	}
	if err := SetOverride(p, "x.example", Override{Bias: "sideways"}); err == nil || !strings.Contains(err.Error(), "x.example") {
		t.Errorf("bad bias: %v", err)
	}
	if err := SetOverride(p, "  ", Override{Boost: true}); err == nil {
		t.Error("empty domain accepted")
	}
}

// When a ratings file and the built-in table both rate a publisher, the
// better tier wins, except that the built-in table's exclusions stand; the
// overrides file still decides over both.
func TestCombine(t *testing.T) {
	ov := filepath.Join(t.TempDir(), "overrides.toml")
	if err := os.WriteFile(ov, []byte("[domains.\"fda.gov\"]\nfactuality = \"mixed\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := load(t, Options{File: "testdata/combine.csv", OverridesFile: ov})
	_, date, _ := r.Info()
	file := "ratings file combine.csv " + date
	builtin := "muse built-in table 2026-11"
	for _, c := range []struct {
		in, origin string
		tier       Tier
	}{
		{"https://www.cdc.gov/coronavirus/2019-ncov/index.html", builtin + " (over " + file + ": mixed, left-center)", TierHigh},
		{"webmd.com", file, TierMedium}, // the file rates it better than the table
		{"rt.com", builtin + " (over " + file + ": very high, least biased)", TierExcluded}, // a built-in exclusion stands
		{"reuters.com", builtin + " (over " + file + ": high, left-center)", TierHigh},
		{"newsroom-unknown.example", file, TierMedium},
		{"state.gov", file, TierExcluded}, // no built-in row: the official rule is no rating to weigh against the file
		{"fda.gov", "overrides file", TierExcluded},
	} {
		got := r.Rate(c.in)
		if got.Origin != c.origin || got.Tier != c.tier {
			t.Errorf("Rate(%q) = %s from %q; want %s from %q", c.in, got.Tier, got.Origin, c.tier, c.origin)
		}
	}
}

func TestCredibleDomains(t *testing.T) {
	ov := filepath.Join(t.TempDir(), "overrides.toml")
	if err := os.WriteFile(ov, []byte("[domains.\"reuters.com\"]\ndrop = true\n\n[domains.\"local-paper.example\"]\nboost = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := load(t, Options{File: "testdata/combine.csv", OverridesFile: ov})
	got := r.CredibleDomains()
	pos := map[string]int{}
	for i, d := range got {
		if _, dup := pos[d]; dup {
			t.Errorf("%s listed twice", d)
		}
		pos[d] = i
	}
	for _, d := range []string{"apnews.com", "cdc.gov", "fullfact.org", "webmd.com", "newsroom-unknown.example", "local-paper.example"} {
		if _, ok := pos[d]; !ok {
			t.Errorf("%s missing", d)
		}
	}
	for _, d := range []string{"reuters.com", "rt.com", "state.gov", "youtube.com", "wwwnc.cdc.gov"} {
		if _, ok := pos[d]; ok {
			t.Errorf("%s listed (dropped, excluded, low, user content or under a listed parent)", d)
		}
	}
	// High before medium; the built-in table's before the file's.
	lastHigh, firstMedium := -1, len(got)
	for i, d := range got {
		if r.Rate(d).Tier == TierHigh {
			lastHigh = i
		} else if i < firstMedium {
			firstMedium = i
		}
	}
	if lastHigh > firstMedium {
		t.Errorf("a high domain (#%d) after a medium one (#%d)", lastHigh, firstMedium)
	}
	if pos["webmd.com"] < pos["apnews.com"] || pos["newsroom-unknown.example"] < pos["webmd.com"] {
		t.Errorf("order: apnews %d, webmd %d (built-in row), newsroom-unknown %d (file only)", pos["apnews.com"], pos["webmd.com"], pos["newsroom-unknown.example"])
	}
	if n := len(load(t, Options{}).CredibleDomains()); n < 300 {
		t.Errorf("built-in table alone lists %d credible domains", n)
	}
}

// Publishers and official bodies outside the English-speaking world are
// rated: public broadcasters, agencies, fact-checkers, and governments whose
// domains follow no gov/gob/gouv pattern.
func TestNonEnglishPublishers(t *testing.T) {
	r := load(t, Options{})
	for in, want := range map[string]Tier{
		"https://www.tagesschau.de/faktenfinder/x": TierHigh, "https://www.zdf.de/nachrichten/x": TierHigh,
		"https://maldita.es/malditobulo/x": TierHigh, "https://poligrafo.sapo.pt/fact-check/x": TierHigh,
		"https://www.lusa.pt/article/x": TierHigh, "https://www.rai.it/x": TierMedium,
		"https://www.sanidad.gob.es/x": TierMedium, "https://www.gov.br/saude/x": TierMedium,
		"https://www.mohfw.gov.in/x": TierMedium, "https://www.bundesregierung.de/breg-de/x": TierMedium,
		"https://www.rijksoverheid.nl/x": TierMedium, "https://www.insee.fr/fr/statistiques/x": TierHigh, // statistics office, in the table
		"https://www.camara.leg.br/noticias/x": TierMedium,
	} {
		if got := r.Rate(in); got.Tier != want {
			t.Errorf("Rate(%q) = %+v, want tier %s", in, got, want)
		}
	}
}
