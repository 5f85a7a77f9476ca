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

// In a script written without spaces any two characters may be two words,
// so a quote may start and end inside a run of characters; a sentence
// ends at the script's own full stop, which the page quote keeps; an
// ellipsis may not leave out a negation there either.
func TestVerifyQuoteScriptsWithoutSpaces(t *testing.T) {
	ja := "厚生労働省は5日、ワクチンが人のDNAを変えるという投稿について「科学的根拠はない」と発表した。専門家も同じ見解を示している。"
	zh := "卫生部门周二表示，网传疫苗会改变人类基因的说法没有科学依据。专家也持相同观点。"
	th := "กระทรวงสาธารณสุขระบุว่าวัคซีนไม่ได้เปลี่ยนแปลงดีเอ็นเอของมนุษย์ และข้อกล่าวอ้างนี้เป็นเท็จ"
	ko := "보건복지부는 화요일 백신이 인간의 유전자를 바꾸지 않는다고 밝혔다. 전문가들도 같은 의견이다."
	el := "Το υπουργείο Υγείας ανέφερε την Τρίτη ότι το εμβόλιο δεν αλλάζει το DNA του ανθρώπου. Οι ειδικοί συμφωνούν."
	cases := []struct {
		name, quote, page string
		want              bool
	}{
		{"ja inside a sentence", "ワクチンが人のDNAを変えるという投稿について", ja, true},
		{"ja whole sentence", "厚生労働省は5日、ワクチンが人のDNAを変えるという投稿について「科学的根拠はない」と発表した。", ja, true},
		{"ja wording changed", "ワクチンが人のDNAを変えたという投稿について", ja, false},
		{"ja negation elided", "厚生労働省は5日、ワクチンが人のDNAを…と発表した", ja, false},
		{"zh inside a sentence", "网传疫苗会改变人类基因的说法没有科学依据", zh, true},
		{"zh negation elided", "卫生部门周二表示，网传疫苗会改变…人类基因的说法", zh, true},
		{"zh negation elided 2", "网传疫苗会改变人类基因的说法…科学依据。专家也持相同观点", zh, false},
		{"th inside", "วัคซีนไม่ได้เปลี่ยนแปลงดีเอ็นเอของมนุษย์", th, true},
		{"th negation dropped", "วัคซีนเปลี่ยนแปลงดีเอ็นเอของมนุษย์", th, false},
		{"th mark cut off", "กระทรวงสาธารณสุขระบุว่าวัคซีนไม่ได้เปลี่ยนแปลงดีเอ็นเอของมนุษย์ และข้อกล่าวอ้างนี้เป็นเท", th, false},
		{"ko verbatim", "백신이 인간의 유전자를 바꾸지 않는다고 밝혔다", ko, true},
		{"ko negation elided", "보건복지부는 화요일 백신이 인간의 유전자를 … 밝혔다. 전문가들도 같은 의견이다", ko, false},
		{"el verbatim", "το εμβόλιο δεν αλλάζει το DNA του ανθρώπου", el, true},
		{"el negation elided", "Το υπουργείο Υγείας ανέφερε την Τρίτη ότι το εμβόλιο … αλλάζει το DNA του ανθρώπου", el, false},
	}
	for _, c := range cases {
		if got := VerifyQuote(c.quote, c.page); got != c.want {
			t.Errorf("%s: VerifyQuote(%q) = %v (%s), want %v", c.name, c.quote, got, LocateQuote(c.quote, c.page).Reason, c.want)
		}
	}
	// A quote that ends where the page's sentence does keeps its full stop.
	for quote, want := range map[string]string{
		"ワクチンが人のDNAを変えるという投稿について「科学的根拠はない」と発表した": "ワクチンが人のDNAを変えるという投稿について「科学的根拠はない」と発表した。",
		"网传疫苗会改变人类基因的说法没有科学依据":                   "网传疫苗会改变人类基因的说法没有科学依据。",
	} {
		if m := LocateQuote(quote, ja+zh); !m.Verified || m.PageQuote != want {
			t.Errorf("page quote %q (verified %v), want %q", m.PageQuote, m.Verified, want)
		}
	}
	hi := "स्वास्थ्य मंत्रालय ने मंगलवार को कहा कि टीका मानव डीएनए को नहीं बदलता है। यह दावा ग़लत है।"
	if m := LocateQuote("टीका मानव डीएनए को नहीं बदलता है", hi); !m.Verified || !strings.HasSuffix(m.PageQuote, "है।") {
		t.Errorf("Hindi page quote %q (verified %v)", m.PageQuote, m.Verified)
	}
}
