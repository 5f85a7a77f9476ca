package extract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
)

// TestPublishedPrecision reads pages that state a day, only a month, or only
// a year. go-htmldate answers each with a day (2008-01-01, 2020-03-01);
// muse keeps a day only when the page states it, and otherwise the year or
// month alone, so that no page is said to be published on a day it never
// gave.
func TestPublishedPrecision(t *testing.T) {
	for _, c := range []struct {
		file, day, partial, libraryDay string
	}{
		// "Family-run since 2008" is the only date-like text.
		{file: "since_2008.html", partial: "2008", libraryDay: "2008-01-01"},
		// A day in the meta tags and a <time> element.
		{file: "day_in_markup.html", day: "2023-02-14", libraryDay: "2023-02-14"},
		// "Issued 03/2020": a month and a year.
		{file: "month_year.html", partial: "2020-03", libraryDay: "2020-03-01"},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "precision", c.file))
			if err != nil {
				t.Fatal(err)
			}
			// The library alone answers with a day for every page: the
			// pages test what muse adds.
			lib, err := Options{Now: testNow, ruleSet: &libraryRules}.Extract(b, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := dayOf(lib.Published); got != c.libraryDay {
				t.Errorf("go-htmldate alone: %q, want %q", got, c.libraryDay)
			}
			a, err := Options{Now: testNow}.Extract(b, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := dayOf(a.Published); got != c.day {
				t.Errorf("Published = %q, want %q", got, c.day)
			}
			if got := a.PublishedPartial.String(); got != c.partial {
				t.Errorf("PublishedPartial = %q, want %q", got, c.partial)
			}
			// The JSON holds a day only under "published", and the year or
			// month alone under "published_partial".
			j, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(j, &m); err != nil {
				t.Fatal(err)
			}
			pub, hasPub := m["published"].(string)
			if c.day == "" && hasPub || c.day != "" && !strings.HasPrefix(pub, c.day) {
				t.Errorf(`JSON "published" = %v, want %q`, m["published"], c.day)
			}
			if part, _ := m["published_partial"].(string); part != c.partial {
				t.Errorf(`JSON "published_partial" = %v, want %q`, m["published_partial"], c.partial)
			}
		})
	}
}

// TestStatedPrecision reads the texts go-htmldate took its answer from on
// htmldate-eval pages (Result.SrcString) and on pages of the forms muse
// meets.
func TestStatedPrecision(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		src, date string
		want      precision
	}{
		{"2018-02-28T20:00:18+00:00", "2018-02-28", precDay},
		{"https://aoc.media/opinion/2019/12/09/pour-le-neoliberalisme/", "2019-12-09", precDay},
		{"Sa. 13.11.2021", "2021-11-13", precDay},
		{"21.09.19", "2019-09-21", precDay},
		{"11/01/2023 12:43:42", "2023-01-11", precDay},
		{"Von Deutscher Tennis Bund 4. 2. 2022.", "2022-04-02", precDay},
		{"/20190619/k10011959621000.html", "2019-06-19", precDay},
		{"17 Jun 2018 15:15", "2018-06-17", precDay},
		{"Mittwoch, 01. November 2023", "2023-11-01", precDay},
		{"Le 11 septembre 2018 à 12:57", "2018-09-11", precDay},
		{"Jan 04 09:34 2021", "2021-01-04", precDay},
		{"Posted on March 14th, 2008 by admin", "2008-03-14", precDay},
		{"Publiziert am 13. Januar 2014 von uriebe", "2014-01-13", precDay},
		{"Sonntag, Dezember 16th, 2012, 7:05 pm", "2012-12-16", precDay},
		{"Gespeichert von human am 7. Juli 2019 - 18:44", "2019-07-07", precDay},
		{"Publicado el 14 de febrero de 2023", "2023-02-14", precDay},
		{"प्रकाशित: १४ फ़रवरी २०२३", "2023-02-14", precDay}, // native digits
		{"28. Juni 201914. Januar 2020 | Klaus Quibeldey-Cirkel", "2019-06-28", precDay},
		{"1507287600", "2017-10-06", precDay},
		{"2022-1-26T14:32:06+02:00", "2022-01-26", precDay},
		// A real day that happens to be the first of January.
		{"2021-01-01T11:00:00.000Z", "2021-01-01", precDay},
		{"01/01/2004", "2004-01-01", precDay},

		{"Comunicato Stampa n. 03/2020", "2020-03-01", precMonth},
		{"/2018/08/irland-roadtrip.html\" rel=\"canonical\"/>", "2018-08-01", precMonth},
		{"2008-03", "2008-03-06", precMonth}, // dateutil fills the day from today
		{"Published March 2008", "2008-03-06", precMonth},

		{"Family-run since 2008, Harbour Lane Bakery", "2008-01-01", precYear},
		{"Copyright © 2022 DLG e.V.</p></div></footer>", "2022-01-01", precYear},
		{"© 2016 <!-- Please leave this line intact -->Theme Blass by 1000ff", "2016-01-01", precYear},
		{"1998-2022 of Kasper Skaarhoj. Extensions are copyright", "1998-01-01", precYear},
		// go-dateparser fills a missing month and day from today.
		{"since 2008", "2008-12-06", precYear},
		// A number beside the year is not its day.
		{"since 2008, 1 in 5 loaves", "2008-01-01", precYear},
	} {
		if got := statedPrecision(c.src, day(c.date), nil); got != c.want {
			t.Errorf("statedPrecision(%q, %s) = %d, want %d", c.src, c.date, got, c.want)
		}
	}
}

// TestPartialDateJSON keeps a year or a month in ISO 8601's reduced
// precision and never as a day.
func TestPartialDateJSON(t *testing.T) {
	for _, p := range []sources.PartialDate{{Year: 2008}, {Year: 2020, Month: time.March}} {
		b, err := json.Marshal(struct {
			P sources.PartialDate `json:"p,omitzero"`
		}{p})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"p":"` + p.String() + `"}`; string(b) != want {
			t.Errorf("marshal %+v = %s, want %s", p, b, want)
		}
	}
}
