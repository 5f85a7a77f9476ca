package pipeline

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// Quotes in other scripts are verified as English ones are: up to form
// (composed or decomposed accents, presentation forms, the tatweel,
// typographic quotes and dashes), never up to wording; word boundaries
// count marks as parts of words, and an ellipsis may not leave out a
// negation in any tested language.
func TestVerifyQuoteOtherScripts(t *testing.T) {
	es := "El Ministerio de Sanidad afirmó el martes que la vacuna «no altera» el ADN humano, según un comunicado publicado en Madrid."
	de := "Das Robert Koch-Institut teilte am Dienstag mit, dass der Impfstoff das Erbgut „nicht verändert“ – eine Behauptung, die im Netz kursiert."
	hi := "स्वास्थ्य मंत्रालय ने मंगलवार को कहा कि टीका मानव डीएनए को नहीं बदलता है और यह दावा पूरी तरह ग़लत है।"
	ar := "قالت وزارة الصحة يوم الثلاثاء إن اللقاح لا يغير الحمض النووي للإنسان، وإن هذا الادعاء كاذب تماما."
	cases := []struct {
		name, quote, page string
		want              bool
	}{
		{"es verbatim", "la vacuna «no altera» el ADN humano", es, true},
		{"es straight quotes", `la vacuna "no altera" el ADN humano`, es, true},
		{"es decomposed accents", norm.NFD.String("El Ministerio de Sanidad afirmó el martes que la vacuna"), es, true},
		{"es accent dropped", "El Ministerio de Sanidad afirmo el martes que la vacuna", es, false},
		{"es negation elided", "El Ministerio de Sanidad afirmó el martes que la vacuna … altera» el ADN humano", es, false},
		{"es word cut", "El Ministerio de Sanidad afirmó el martes que la vac", es, false},
		{"de typographic", `dass der Impfstoff das Erbgut "nicht verändert" - eine Behauptung`, de, true},
		{"de decomposed umlaut", norm.NFD.String("dass der Impfstoff das Erbgut „nicht verändert“"), de, true},
		{"de negation elided", "dass der Impfstoff das Erbgut … verändert“ – eine Behauptung, die im Netz kursiert", de, false},
		{"hi verbatim", "टीका मानव डीएनए को नहीं बदलता है", hi, true},
		{"hi nukta composed either way", norm.NFC.String("यह दावा पूरी तरह ग़लत है"), norm.NFD.String(hi), true},
		{"hi vowel sign is part of the word", "स्वास्थ्य मंत्रालय ने मंगलवार को कहा कि टीका मानव डीएनए क", hi, false},
		{"hi negation elided", "स्वास्थ्य मंत्रालय ने मंगलवार को कहा कि टीका मानव डीएनए को … बदलता है और यह दावा पूरी तरह ग़लत है", hi, false},
		{"ar verbatim", "إن اللقاح لا يغير الحمض النووي للإنسان", ar, true},
		{"ar tatweel", "إن اللقـــاح لا يغير الحمض النووي للإنسان", ar, true},
		{"ar presentation forms", norm.NFC.String("\ufe8d\ufee0\ufedf\ufed8\ufe8e\ufea3") + " لا يغير الحمض النووي للإنسان", ar, true},
		{"ar negation elided", "قالت وزارة الصحة يوم الثلاثاء إن اللقاح … يغير الحمض النووي للإنسان", ar, false},
		{"ar wording changed", "إن اللقاح يغير الحمض النووي للإنسان", ar, false},
	}
	for _, c := range cases {
		if got := VerifyQuote(c.quote, c.page); got != c.want {
			t.Errorf("%s: VerifyQuote(%q) = %v, want %v", c.name, c.quote, got, c.want)
		}
		if m := LocateQuote(c.quote, c.page); strings.HasSuffix(c.name, "negation elided") && m.Reason != "the ellipsis leaves out a negation" {
			t.Errorf("%s: reason %q", c.name, m.Reason)
		}
	}
	// The page's own wording is what is kept, in the page's script.
	if m := LocateQuote(norm.NFD.String("la vacuna «no altera» el ADN humano"), es); !m.Verified || m.PageQuote != "la vacuna «no altera» el ADN humano" {
		t.Errorf("page quote %q (verified %v)", m.PageQuote, m.Verified)
	}
}
