package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rivo/uniseg"

	"github.com/musecheck/muse/pipeline"
)

// TestNoteLengthScripts: a note counts what a reader sees as one
// character (a grapheme cluster), in every script.
func TestNoteLengthScripts(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"नमस्ते", 4},          // न म स् ते: the virama and the vowel sign sit on their letters
		{"क़िला", 2},           // क़ (U+0958) with ि, then ल with ा
		{"क\u093c\u093fला", 2}, // the same with the nukta written apart
		{"كَتَبَ", 3},          // three letters with their fatha
		{"مضلِّل", 4},          // shadda and kasra on one lam
		{"مرحبا بالعالم", 13},
		{"事实核查：视频并非巴尔的摩大桥。", 16},
		{"한국어", 3},                        // precomposed Hangul syllables
		{"\u1112\u1161\u11ab", 1},         // one Hangul syllable written as jamo
		{"\U0001F469\u200D\U0001F4BB", 1}, // woman technologist (ZWJ)
		{"\U0001F3F3\uFE0F\u200D\U0001F308", 1},
		{"यह पोस्ट भ्रामक है। https://www.bbc.com/hindi/articles/c0bridge", 16}, // य ह, पो स् ट, भ् रा म क, है, ।, 4 spaces, the link 1
	} {
		if got := NoteLength(tc.s); got != tc.want {
			t.Errorf("NoteLength(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestSentencesScripts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"यह पोस्ट भ्रामक है। वीडियो 2019 का है। https://bbc.com/hindi/a", []string{"यह पोस्ट भ्रामक है।", "वीडियो 2019 का है। https://bbc.com/hindi/a"}},
		{"هل انهار الجسر؟ لا. الفيديو من جنوة.", []string{"هل انهار الجسر؟", "لا.", "الفيديو من جنوة."}},
		{"这条帖子具有误导性。视频摄于2019年的热那亚！见 https://x.y/a。", []string{"这条帖子具有误导性。", "视频摄于2019年的热那亚！见 https://x.y/a。"}}, // the citation stays with its sentence
		{"«No es cierto.» El vídeo es de 2019.", []string{"«No es cierto.»", "El vídeo es de 2019."}},
		{"「不是真的。」旧视频。", []string{"「不是真的。」", "旧视频。"}},
	} {
		if got := sentences(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("sentences(%q) =\n %q, want\n %q", tc.in, got, tc.want)
		}
	}
}

// TestNoteDropsWholeSentencesInAnyScript: a model's Hindi or Chinese note
// that is too long loses whole trailing sentences, ended by a danda or a
// CJK full stop, and keeps a link.
func TestNoteDropsWholeSentencesInAnyScript(t *testing.T) {
	for _, tc := range []struct{ first, filler string }{
		{"यह पोस्ट भ्रामक है: वीडियो 2019 में जेनोआ में फ़िल्माया गया था https://www.bbc.com/hindi/a।", "बाल्टीमोर में कोई पुल नहीं गिरा। "},
		{"这条帖子具有误导性：视频摄于2019年的热那亚 https://www.zaobao.com.sg/a 。", "巴尔的摩没有大桥倒塌。"},
	} {
		c := sample()
		// The note links only to the check's pages.
		c.Sources = append(c.Sources, pipeline.Source{URL: "https://www.bbc.com/hindi/a"}, pipeline.Source{URL: "https://www.zaobao.com.sg/a"})
		c.Correction = pipeline.Correction{Text: tc.first + " " + strings.Repeat(tc.filler, 40)}
		n, err := Note(c)
		if err != nil {
			t.Fatalf("Note: %v", err)
		}
		if NoteLength(n) > NoteLimit || !strings.HasPrefix(n, tc.first) || len(urlSpans(n)) == 0 {
			t.Errorf("note (%d) = %q", NoteLength(n), n)
		}
		if rest := strings.TrimPrefix(n, tc.first); strings.TrimSpace(strings.ReplaceAll(rest, strings.TrimSpace(tc.filler), "")) != "" {
			t.Errorf("a sentence was cut: %q", rest)
		}
		if strings.Contains(n, "。 ") {
			t.Errorf("a space put between Chinese sentences: %q", n)
		}
	}
}

func spanish() *pipeline.Check {
	c := sample()
	c.Post.Text, c.Post.Language = "¡El ayuntamiento prohibió todas las bicicletas desde el lunes!", "es"
	c.Correction = pipeline.Correction{Text: "Esta publicación es falsa: el ayuntamiento aprobó nuevos carriles para bicicletas y no ha prohibido su uso, según Reuters. https://www.reuters.com/a",
		URLs: []string{"https://www.reuters.com/a"}}
	return c
}

func TestMarkdownLanguage(t *testing.T) {
	if md := Markdown(spanish()); !strings.HasPrefix(md, "# Correction — Refuted\n\n_The post is in Spanish (es)._\n\nEsta publicación es falsa") {
		t.Errorf("Markdown head:\n%s", md)
	}
	if md := Markdown(sample()); strings.Contains(md, "The post is in") {
		t.Errorf("a post of unknown language is said to have one:\n%s", md)
	}
	// Arabic: the text is kept as written, in its logical order, quotes
	// verbatim with their diacritics.
	c := sample()
	c.Post.Text, c.Post.Language = "عاجل: انهيار جسر بالتيمور الآن!", "ar"
	c.Evidence[0].Quote = "الفيديو المتداول لا يُظهر انهيار جسر في بالتيمور؛ صُوِّر عام 2019."
	c.Sources[1].Publisher = "الجزيرة"
	md := Markdown(c)
	for _, want := range []string{"_The post is in Arabic (ar)._", "> عاجل: انهيار جسر بالتيمور الآن!", "“الفيديو المتداول لا يُظهر انهيار جسر في بالتيمور؛ صُوِّر عام 2019.” — [الجزيرة](https://www.reuters.com/a)"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestClaimReviewLanguage(t *testing.T) {
	r := Reviewer{Name: "Verificado", URL: "https://verificado.example", ReviewURL: "https://verificado.example/1"}
	lang := func(c *pipeline.Check) (review, claim any) {
		t.Helper()
		b, err := ClaimReview(c, r, Rating{AlternateName: "Falso"})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m["inLanguage"], m["itemReviewed"].(map[string]any)["inLanguage"]
	}
	c := spanish()
	if rv, cl := lang(c); rv != "es" || cl != "es" {
		t.Errorf("Spanish post and correction: review %v, claim %v", rv, cl)
	}
	c.Correction.Text = "This post is false: the council approved new cycle lanes and has not banned bicycles, Reuters reported. https://www.reuters.com/a"
	if rv, cl := lang(c); rv != "en" || cl != "es" {
		t.Errorf("Spanish post, English correction: review %v, claim %v", rv, cl)
	}
	c.Post.Text, c.Post.Language = "突发：巴尔的摩大桥刚刚倒塌，快看视频！", "zh"
	c.Correction.Text = "这条帖子具有误导性：视频摄于2019年的热那亚。https://www.zaobao.com.sg/a"
	if rv, cl := lang(c); rv != "zh" || cl != "zh" {
		t.Errorf("Chinese post and correction: review %v, claim %v", rv, cl)
	}
	c = sample()
	if rv, cl := lang(c); rv != "en" || cl != nil {
		t.Errorf("a post of unknown language: review %v, claim %v", rv, cl)
	}
}

// TestClaimReviewClaimCutByGraphemes: a long claim is cut at 1000
// characters as a reader counts them, never inside one.
func TestClaimReviewClaimCutByGraphemes(t *testing.T) {
	c := sample()
	c.Post.Text = strings.Repeat("क्षत्रिय ", 300) // 5 graphemes and a space each
	b, err := ClaimReview(c, Reviewer{Name: "X", URL: "https://x.example"}, Rating{AlternateName: "False"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	claim := m["claimReviewed"].(string)
	if n := uniseg.GraphemeClusterCount(claim); n != 1000 || !strings.HasSuffix(claim, "…") {
		t.Errorf("claim is %d characters: …%q", n, claim[len(claim)-40:])
	}
	if !strings.HasPrefix(strings.Repeat("क्षत्रिय ", 300), strings.TrimSuffix(claim, "…")) {
		t.Error("the claim is not a start of the post")
	}
}
