package pipeline

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
)

// wireGold are the extraction benchmark's pages that carry a news
// agency's credit (a dateline "(AP) —", "WASHINGTON (Reuters) -"), read
// by hand; every other page of the benchmark credits none, though some
// cite an agency ("according to Reuters", "said in an email to The
// Associated Press").
var wireGold = map[string]string{
	"https://venturebeat.com/2019/11/18/new-york-state-attorney-general-inv": "Reuters",
	"https://www.sciencealert.com/we-finally-have-a-global-geological-map-o": "Reuters",
	"https://www.sfgate.com/news/crime/article/The-Latest-Man-stabbed-to-de": "AP",
	"https://hosted.ap.org/berkshireeagle/article/6486944b076b4df99a583a3a7": "AP",
	"https://www.ctpost.com/news/article/Deval-Patrick-takes-nascent-2020-c": "AP",
	"https://www.sfgate.com/news/article/7-key-questions-heading-into-Wedne": "AP",
	"https://www.timesunion.com/news/us/article/PG-E-begins-new-mass-power-": "AP",
	"https://www.chron.com/news/world/article/Esper-says-US-providing-Vietn": "AP",
	"https://hosted.ap.org/citizensvoice/article/2896af5086674d4bbbbd454dec": "AP",
	"https://www.mysanantonio.com/news/article/Cat-found-in-New-Mexico-afte": "AP",
}

// TestWireCreditOnRealPages measures WireCredit on the 131 real news
// pages of the extraction benchmark (their gold text). The patterns were
// written before these pages were read, and not changed after.
func TestWireCreditOnRealPages(t *testing.T) {
	dir := testkit.SharedData(t, "article-extraction-benchmark")
	var gt map[string]struct {
		Body string `json:"articleBody"`
		URL  string `json:"url"`
	}
	readJSON(t, filepath.Join(dir, "ground-truth.json"), &gt)
	tp, fp, fn := 0, 0, 0
	for _, p := range gt {
		want := ""
		for prefix, agency := range wireGold {
			if strings.HasPrefix(p.URL, prefix) {
				want = agency
			}
		}
		got := WireCredit(Source{Paragraphs: strings.Split(p.Body, "\n")})
		switch {
		case got != "" && got == want:
			tp++
		case got != "":
			fp++
			t.Errorf("%s: credited %s, want %q", p.URL, got, want)
		case want != "":
			fn++
			t.Errorf("%s: no credit found, want %s", p.URL, want)
		}
	}
	t.Logf("wire credits on %d real pages: %d found right, %d wrong, %d missed (precision %.2f, recall %.2f)",
		len(gt), tp, fp, fn, float64(tp)/float64(max(tp+fp, 1)), float64(tp)/float64(max(tp+fn, 1)))
	if len(gt) != 131 || tp+fn != len(wireGold) {
		t.Fatalf("%d pages, %d of the %d credited pages found in the benchmark", len(gt), tp+fn, len(wireGold))
	}
}

// TestNearCopyOnRealPages: the same article as two extractors read it
// (the benchmark's gold text, go-trafilatura's output) is a near copy; two
// different articles of the benchmark never are. The thresholds were set
// before this test was run, and not changed after.
func TestNearCopyOnRealPages(t *testing.T) {
	dir := testkit.SharedData(t, "article-extraction-benchmark")
	var gt map[string]struct {
		Body string `json:"articleBody"`
	}
	readJSON(t, filepath.Join(dir, "ground-truth.json"), &gt)
	f, err := os.Open(filepath.Join(dir, "output", "go_trafilatura.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Output map[string]struct {
			Body string `json:"articleBody"`
		} `json:"output"`
	}
	if err := json.NewDecoder(zr).Decode(&out); err != nil {
		t.Fatal(err)
	}
	ids := slices.Sorted(maps.Keys(gt))
	gold := make([]shingleSet, len(ids))
	same, pairs, long := 0, 0, 0
	for i, id := range ids {
		gold[i] = shingles(gt[id].Body)
		if len(gold[i]) < minCopyShingles {
			continue // too short to tell a copy from a shared phrase
		}
		long++
		if nearCopy(gold[i], shingles(out.Output[id].Body)) {
			same++
		}
	}
	wrong := 0
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			pairs++
			if nearCopy(gold[i], gold[j]) {
				wrong++
				t.Errorf("%s and %s taken for copies", ids[i], ids[j])
			}
		}
	}
	t.Logf("same article, two extractions: %d of %d near copies; different articles: %d of %d pairs", same, long, wrong, pairs)
	if long < 100 || float64(same) < 0.9*float64(long) {
		t.Errorf("only %d of %d articles are a near copy of their other extraction", same, long)
	}
}

// declaredGold is every origin the real pages of the extraction benchmark
// and htmldate-eval declare (a canonical link to another site, syndication
// metadata, an agency as author), as muse reads them, by page, with the
// verdict of a reading by hand: right when the page's story does come
// from there.
var declaredGold = map[string]struct {
	key   string
	right bool
}{
	// The extraction benchmark (131 news pages).
	"https://www.msn.com/en-us/health/other/the-man-whose-duvet-nearly-killed-him-how-this-medical-mystery-was-solved/ar-BBWXwNX":        {"cnn.com", true},
	"https://www.msn.com/en-us/news/us/doctors-offer-to-give-free-flu-shots-to-detained-migrants-warn-of-epidemic/ar-BBWZedJ?srcref=rss": {"nbcnews.com", true},
	// htmldate-eval (799 pages, mostly German news and blogs).
	"https://www.msn.com/en-gb/news/uknews/uk-university-student-halls-too-full-to-be-safe-experts-warn/ar-BB19DUqK":                                      {"theguardian.com", true},
	"https://www.lemonde.fr/en/economy/article/2023/10/29/striking-us-auto-union-reaches-tentative-deal-with-stellantis_6211625_19.html":                  {"agency AFP", true},
	"https://www.dailyherald.com/entlife/20231108/hollywood-actors-strike-ends-as-union-reaches-tentative-deal-with-studios":                              {"agency AP", true},
	"https://web.archive.org/web/20190717140047/http://www.modabot.de/paris-haute-couture-ss14-serkan-cura":                                               {"modabot.de", true},
	"https://www.chocolate.com/view/woman-sees-a-car-stop-for-pregnant-beggar-this-is-what-she-finds-when-she-follows/&page=2":                            {"coolimba.com", true},
	"https://www.necn.com/news/national-international/massachusetts-cannabis-firms-are-shutting-down-heres-a-list/3080368/":                               {"nbcboston.com", true},
	"https://www.rundschau-online.de/region/rhein-berg/bergischgladbach/pflaster-desaster-gladbacher-fussgaengerzone-in-schlechtem-zustand-33335514":      {"ksta.de", true},
	"https://www.monsterdealz.de/user-deals/deals/gratisartikel-kostenlos/rewe-produkttest-10-000-produkttester-fuer-leibniz-keksn-cream-milk-oder-choco": {"dealdoktor.de", true},
	"https://www.welt.de/regionales/hamburg/article202159566/Verhaertete-Fronten-nach-Tumulten-bei-Luckes-Vorlesung.html":                                 {"sat1regional.de", true},
	// The blog's own address under another suffix (the public suffix
	// list no longer lists blogspot.de), and Die Weltwoche's own print
	// edition ("first published in German translation in …").
	"http://unexpecteduser.blogspot.de/2011/":                                                   {"unexpecteduser.blogspot.com", false},
	"https://www.weltwoche.ch/ausgaben/2019-4/artikel/forbes-die-weltwoche-ausgabe-4-2019.html": {"organisation german translation in the print edition of die weltwoche on", false},
}

// TestDeclaredOriginsOnRealPages reads the origin every real page of the
// extraction benchmark and htmldate-eval declares and compares it with
// declaredGold. The rules were first written on the benchmark alone; on
// htmldate-eval, then unseen, 8 of the 21 origins they read were right
// (precision 0.38): a house naming itself as author under another name,
// and canonical links to its own site under another host, made the rest.
// The rules were changed after (an organisation as author counts only when
// it is a news agency; sites are compared by name under any suffix), so
// the figure this test logs on htmldate-eval is no longer out of sample.
// Recall is not measured: neither set marks which pages are syndicated.
// None of the pages has a content-farm mark (a chatbot's or an AI writing
// tool's words, another site's RSS feed footer, affiliate links on a page
// with no author and no date), all chosen before these pages were read.
func TestDeclaredOriginsOnRealPages(t *testing.T) {
	t.Parallel()
	pages := realPages(t)
	found, right, machine := 0, 0, 0
	for _, p := range pages {
		b := gunzipFile(t, p.html)
		a, err := extract.Options{FastDate: true}.ExtractContent(b, "", p.url)
		if err != nil {
			continue
		}
		fs := Source{URL: p.url, Title: a.Title, Paragraphs: a.Paragraphs}
		countAffiliates(&fs, a, b)
		for _, flag := range []func(Source) (SourceFlag, bool){machineTextFlag, scrapedFlag, affiliateFlag} {
			if f, ok := flag(fs); ok {
				machine++
				t.Errorf("%s: %s", p.url, f.Reason)
			}
		}
		s := Source{URL: p.url, Syndication: a.Syndication}
		if k := sources.Key(a.CanonicalURL); k != "" && k != sources.Key(p.url) {
			s.CanonicalURL = a.CanonicalURL
		}
		d := declaredOrigin(s)
		want, ok := declaredGold[p.url]
		switch {
		case d.key == "" && ok:
			t.Errorf("%s: declares no origin, want %s", p.url, want.key)
		case d.key == "":
		case !ok:
			t.Errorf("%s: declares %s (%s), not in the gold", p.url, d.key, d.why)
		case d.key != want.key:
			t.Errorf("%s: declares %s, want %s", p.url, d.key, want.key)
		}
		if d.key != "" {
			found++
			if ok && want.right && d.key == want.key {
				right++
			}
		}
	}
	t.Logf("%d real pages: %d declare an origin, %d of them right (precision %.2f); %d have a content-farm mark", len(pages), found, right,
		float64(right)/float64(max(found, 1)), machine)
}

func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// realPage is a real page of the extraction benchmark or htmldate-eval:
// its address and its gzipped HTML's path.
type realPage struct{ url, html string }

// realPages are the pages of both sets, in the order of their addresses.
func realPages(t *testing.T) []realPage {
	t.Helper()
	var pages []realPage
	bench := testkit.SharedData(t, "article-extraction-benchmark")
	var gt map[string]struct {
		URL string `json:"url"`
	}
	readJSON(t, filepath.Join(bench, "ground-truth.json"), &gt)
	for id, p := range gt {
		pages = append(pages, realPage{p.URL, filepath.Join(bench, "html", id+".html.gz")})
	}
	dates := testkit.SharedData(t, "htmldate-eval")
	var eval map[string]struct {
		File string `json:"file"`
	}
	readJSON(t, filepath.Join(dates, "eval_default.json"), &eval)
	for u, p := range eval {
		pages = append(pages, realPage{u, filepath.Join(dates, "html", p.File+".gz")})
	}
	slices.SortFunc(pages, func(a, b realPage) int { return strings.Compare(a.url, b.url) })
	return pages
}
