package prompts

import (
	"strings"
	"testing"
	"time"
)

// A post in another language: the queries prompt names it by name and
// code, says how many queries go in it and which one in English, and its
// schema allows that one more; the correction is asked in the post's
// language, or in the one the checker chose, with the opener in it; the
// evidence prompts keep quotes in the article's own words. English posts
// read as before.
func TestPromptsNameTheLanguage(t *testing.T) {
	es := Post{Text: "El Ayuntamiento de Sevilla prohibió las bicicletas", Language: "Spanish (es)", PostedAt: time.Date(2023, 2, 20, 12, 0, 0, 0, time.UTC)}
	msgs, err := Queries(es, 3)
	if err != nil {
		t.Fatal(err)
	}
	q := msgs[len(msgs)-1].Content
	for _, want := range []string{"Write queries 1 to 3 in Spanish (es).", "also write query 4 in English (en)", "Otherwise write only 3 queries."} {
		if !strings.Contains(q, want) {
			t.Errorf("queries prompt lacks %q:\n%s", want, q)
		}
	}
	if MaxQueries(es, 3) != 4 || MaxQueries(Post{Text: "x"}, 3) != 3 {
		t.Error("MaxQueries")
	}
	if f := QueriesSchema(es, 3).Fallback; !strings.Contains(f, "3. QUERY_3\n4. ENGLISH_QUERY") {
		t.Errorf("fallback format:\n%s", f)
	}
	if f := QueriesSchema(Post{}, 3).Fallback; strings.Contains(f, "ENGLISH") {
		t.Errorf("English post's fallback asks for an English query:\n%s", f)
	}
	en, _ := Queries(Post{Text: "The mayor banned bicycles"}, 3)
	if strings.Contains(en[len(en)-1].Content, "English (en)") {
		t.Error("an English post is told to add an English query")
	}

	ev := []EvidenceItem{{URL: "https://www.efe.com/a", Publisher: "EFE", Kind: KindRefutes, Quotes: []string{"El Ayuntamiento no ha prohibido las bicicletas."}}}
	for _, c := range []struct {
		language string
		want     []string
		not      []string
	}{
		{"", []string{"is written in Spanish (es), the language of the post", `starts with the words for "This post is" in Spanish (es)`, "keeping each id as written"}, nil},
		{"German (de)", []string{"is written in German (de),", `"This post is" in German (de)`}, []string{"the language of the post"}},
		{"English (en)", []string{`starts with "This post is".`}, []string{"is written in"}},
	} {
		m, err := Correction(es, ev, c.language)
		if err != nil {
			t.Fatal(err)
		}
		p := m[len(m)-1].Content
		for _, w := range c.want {
			if !strings.Contains(p, w) {
				t.Errorf("correction in %q lacks %q:\n%s", c.language, w, p)
			}
		}
		for _, w := range c.not {
			if strings.Contains(p, w) {
				t.Errorf("correction in %q has %q:\n%s", c.language, w, p)
			}
		}
	}
	if m, _ := Correction(Post{Text: "x"}, ev, ""); !strings.Contains(m[len(m)-1].Content, `starts with "This post is".`) {
		t.Error("an English post's correction lost its opener")
	}
	page := Page{URL: "https://www.efe.com/a", Title: "Sevilla", Paragraphs: []string{"El Ayuntamiento no ha prohibido las bicicletas."}}
	for name, build := range map[string]func() (string, error){
		"evidence": func() (string, error) {
			m, err := Evidence(es, page)
			return m[len(m)-1].Content, err
		},
		"evidence pages": func() (string, error) {
			m, err := EvidencePages(es, []Page{page}, MaxArticleChars)
			return m[len(m)-1].Content, err
		},
	} {
		p, err := build()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p, "copy word for word (in its own language,") {
			t.Errorf("%s prompt does not keep quotes in the article's language:\n%s", name, p)
		}
	}
}
