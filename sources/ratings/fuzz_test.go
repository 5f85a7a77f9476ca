package ratings

import (
	"os"
	"path/filepath"
	"testing"
)

// The ratings file is downloaded (combined.json) or written by hand (CSV),
// so both parsers must turn anything into either a table or an error.

func validTier(t Tier) bool {
	switch t {
	case TierHigh, TierMedium, TierLow, TierUnrated, TierExcluded:
		return true
	}
	return false
}

// checkTable: every entry a parser stored can be found again and carries a
// tier that follows from its own factuality and bias.
func checkTable(t *testing.T, tb *table) {
	for host, e := range tb.hosts {
		if host == "" {
			t.Fatal("empty host stored")
		}
		if !validTier(e.tier) || e.tier != TierFor(e.factuality, e.bias) {
			t.Fatalf("%s: tier %q for %q/%q", host, e.tier, e.factuality, e.bias)
		}
		if _, _, ok := tb.lookup(host, ""); !ok {
			t.Fatalf("stored host %q cannot be looked up", host)
		}
	}
}

func addFile(f *testing.F, name string) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

func FuzzParseMBFC(f *testing.F) {
	addFile(f, "combined.json")
	f.Add([]byte(`{"version":5,"date":"2026-01-01","sources":[]}`))
	f.Add([]byte(`{"sources":[{"domain":"a.example","bias":"center","reporting":"high"}],"aliases":{"b.example":"a.example"}}`))
	f.Add([]byte(`{"sources":[{"domain":"","bias":"center"}]}`))
	f.Add([]byte(`{"sources":[{"domain":"x.example/path/","bias":"left-center","reporting":"mostly-factual"}],"aliases":{"a":"b","b":"a"}}`))
	f.Add([]byte(`{"sources":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := parseMBFC(data)
		if err != nil {
			if rf != nil {
				t.Fatal("error with a result")
			}
			return
		}
		checkTable(t, rf.t)
	})
}

func FuzzParseCSV(f *testing.F) {
	addFile(f, "ratings.csv")
	f.Add([]byte("domain,factuality,bias\nexample.com,high,least biased\n"))
	f.Add([]byte("name,reporting,bias,domain\nGazette,very high,center,gazette.example\n"))
	f.Add([]byte("# comment\n\n\"quoted, domain\",high,left\n"))
	f.Add([]byte("a.example,,\n"))
	f.Add([]byte("\"unterminated,high,left\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := parseCSV(data, "fuzz")
		if err != nil {
			if tb != nil {
				t.Fatal("error with a result")
			}
			return
		}
		if tb.len() == 0 {
			t.Fatal("an empty table is not an error")
		}
		checkTable(t, tb)
	})
}

// FuzzRate feeds URLs as search results give them: every input is rated,
// never a panic, and the tier is one of the five.
func FuzzRate(f *testing.F) {
	for _, s := range []string{"https://www.reuters.com/world/x", "gazette.example", "metro.example/city/news",
		"https://web.archive.org/web/2020id_/https:/www.bbc.co.uk/news", "http://[::1]:80/", "x.com/user/status/1",
		"https://web.archive.org/web/1/web.archive.org/web/2/apnews.com/a", "%zz", "http://a b.example/", ""} {
		f.Add(s)
	}
	r, err := Load(Options{File: filepath.Join("testdata", "ratings.csv")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rt := r.Rate(in)
		if !validTier(rt.Tier) {
			t.Fatalf("Rate(%q): tier %q", in, rt.Tier)
		}
		if rt.Input != in {
			t.Fatalf("Rate(%q): input %q", in, rt.Input)
		}
		if again := r.Rate(in); again != rt {
			t.Fatalf("Rate(%q) not stable: %+v then %+v", in, rt, again)
		}
	})
}

// Found by FuzzParseMBFC: an alias pointing at a domain the file does not
// rate hid the aliased domain's own rating.
func TestAliasToUnratedKeepsOwnRating(t *testing.T) {
	rf, err := parseMBFC([]byte(`{"sources":[{"domain":"gazette.example","bias":"center","reporting":"high"}],
		"aliases":{"gazette.example":"gone.example"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if key, e, ok := rf.t.lookup("gazette.example", ""); !ok || key != "gazette.example" || e.factuality != "high" {
		t.Fatalf("lookup = %q %+v %v", key, e, ok)
	}
}
