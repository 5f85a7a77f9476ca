package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/extract"
)

// farmSource reads a testdata page as the engine does: extracted, its
// affiliate links counted.
func farmSource(t *testing.T, name, pageURL string) Source {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "farm", name))
	if err != nil {
		t.Fatal(err)
	}
	a, err := extract.Options{}.ExtractContent(b, "", pageURL)
	if err != nil {
		t.Fatal(err)
	}
	s := Source{URL: pageURL, Title: a.Title, Paragraphs: a.Paragraphs}
	countAffiliates(&s, a, b)
	return s
}

// TestContentFarmMarks: an autoblog page built from another site's RSS
// feed (WordPress's "The post … appeared first on …" footer), with no
// author, no date and a shop's worth of affiliate links, is flagged for
// both; a page of an AI writing tool's output left as it came (its
// preamble in the title, an SEO brief's scaffold, a placeholder) is
// flagged as machine text; a newsroom's shopping guide with as many
// affiliate links, under a byline and a date, is not flagged at all, and
// neither is a page naming its own site in such a footer.
func TestContentFarmMarks(t *testing.T) {
	auto := farmSource(t, "autoblog.html", "https://dailytrendzhub.example/springfield-bans-bicycles/")
	if f, ok := scrapedFlag(auto); !ok || f.Kind != FlagScraped || !strings.Contains(f.Reason, "Springfield Gazette's RSS feed footer") {
		t.Errorf("autoblog, scraped: %+v %v (paragraphs %q)", f, ok, auto.Paragraphs)
	}
	if f, ok := affiliateFlag(auto); !ok || f.Kind != FlagAffiliate || f.Reason != "it names no author and no date, and 6 of its 10 links to other sites are affiliate links" {
		t.Errorf("autoblog, affiliate: %+v %v (%+v)", f, ok, auto.Affiliate)
	}
	if f, ok := machineTextFlag(auto); ok {
		t.Errorf("autoblog, machine text: %s", f.Reason)
	}

	ai := farmSource(t, "aiwriter.html", "https://localnewsnow24.example/springfield-bike-ban/")
	if f, ok := machineTextFlag(ai); !ok || f.Kind != FlagMachineText || !strings.Contains(f.Reason, `"Certainly! Here's"`) {
		t.Errorf("AI writer: %+v %v", f, ok)
	}
	ai.Title = ""
	if f, ok := machineTextFlag(ai); !ok || !strings.Contains(f.Reason, "Meta description:") {
		t.Errorf("AI writer without its title: %+v %v (paragraphs %q)", f, ok, ai.Paragraphs)
	}

	guide := farmSource(t, "guide.html", "https://www.springfield-gazette.example/shopping/best-bike-locks")
	for _, flag := range []func(Source) (SourceFlag, bool){machineTextFlag, scrapedFlag, affiliateFlag} {
		if f, ok := flag(guide); ok {
			t.Errorf("a newsroom's shopping guide flagged: %s", f.Reason)
		}
	}
	own := Source{URL: "https://www.springfield-gazette.example/news/bike-ban", Paragraphs: []string{
		"The post Springfield bans bicycles appeared first on Springfield Gazette."}}
	if f, ok := scrapedFlag(own); ok {
		t.Errorf("its own feed footer: %s", f.Reason)
	}
	// Affiliate links under the bounds: four, or a sixth of the links.
	for _, a := range []AffiliateLinks{{Out: 10, Affiliate: 4}, {Out: 31, Affiliate: 6}} {
		if f, ok := affiliateFlag(Source{Affiliate: &a}); ok {
			t.Errorf("%+v flagged: %s", a, f.Reason)
		}
	}
}
