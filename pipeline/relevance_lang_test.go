package pipeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/lang"
)

// Relevance in the five tested languages: inflected forms meet through
// each language's stemmer, function words count for nothing, Devanagari
// words keep their vowel signs, and a page about something else in the
// same language stays under the gate.
func TestRelevancePerLanguage(t *testing.T) {
	th := Options{}.withDefaults().LexicalThreshold
	cases := []struct {
		code, post, about, other string
	}{
		{"es", "El ayuntamiento prohibió las bicicletas en la avenida",
			"Los concejales no prohíben la bicicleta: el Ayuntamiento desmiente la prohibición en la Avenida.",
			"La selección ganó el partido de fútbol por dos goles a cero en el último minuto."},
		{"de", "Die Stadt hat alle Fahrräder auf der Hauptstraße verboten",
			"Ein Verbot für das Fahrrad auf der Hauptstraße gibt es nicht, sagt die Stadt.",
			"Der Fußballverein gewann das Spiel mit zwei Toren in der letzten Minute."},
		{"pt", "A prefeitura proibiu as bicicletas na avenida central",
			"A prefeitura não proíbe a bicicleta na Avenida Central, disse um porta-voz.",
			"O time venceu a partida de futebol por dois gols no último minuto."},
		{"hi", "नगर निगम ने सड़क पर साइकिलों पर प्रतिबंध लगाया",
			"नगर निगम ने कहा कि सड़क पर साइकिलों पर कोई प्रतिबंध नहीं है।",
			"क्रिकेट टीम ने आखिरी ओवर में मैच जीत लिया।"},
		{"ar", "أمانة عمان حظرت الدراجات في الشارع",
			"قالت أمانة عمان إنه لا يوجد حظر على الدراجات في الشارع.",
			"فاز الفريق بالمباراة بهدفين في الدقيقة الأخيرة."},
	}
	for _, c := range cases {
		post := Text{c.post, c.code}
		if got := Relevance(post, nil, "", Text{c.about, c.code}); got < th {
			t.Errorf("%s: page about the post scores %.2f, under %.2f", c.code, got, th)
		}
		if got := Relevance(post, nil, "", Text{c.other, c.code}); got >= th {
			t.Errorf("%s: page about something else scores %.2f", c.code, got)
		}
	}
	// Stop words are the post's language's: "de la" says nothing in Spanish.
	if ws := words("la casa de la moneda", "es"); slices.Contains(ws, "la") || slices.Contains(ws, "de") {
		t.Errorf("Spanish stop words kept: %q", ws)
	}
	// A Devanagari word is one word, vowel signs and all.
	if ws := words("प्रतिबंध नहीं", "hi"); len(ws) != 1 || ws[0] != "प्रतिबंध" {
		t.Errorf("Hindi words %q", ws)
	}
}

// A page in another language than the post is judged by the queries in its
// language: the Spanish post's English query lets the English page through,
// names and numbers meet across languages, and a page in a language that
// no text is in, or whose words are not cut apart, is never kept out for it.
func TestRelevanceAcrossLanguages(t *testing.T) {
	th := Options{}.withDefaults().LexicalThreshold
	post := Text{"El Ayuntamiento de Sevilla prohibió todas las bicicletas en la Avenida de la Constitución", "es"}
	english := Text{"The city council of Seville has not banned bicycles from the Avenida de la Constitucion, a spokesperson said.", "en"}
	alone := Relevance(post, nil, "", english)
	if alone == 0 {
		t.Error("the names of the post are not found on the English page")
	}
	queries := []Text{{"Sevilla prohíbe bicicletas", "es"}, {"Seville bicycles ban", "en"}}
	if got := Relevance(post, queries, "", english); got < th || got <= alone {
		t.Errorf("the English query does not bridge the English page: %.2f (post alone %.2f)", got, alone)
	}
	if !sharesLanguage("en", post, queries) || sharesLanguage("de", post, queries) {
		t.Error("sharesLanguage")
	}
	// The engine keeps a page in a language of no text, whatever it scores.
	c := &Check{Post: Post{Text: post.Text, Language: "es"},
		Queries: []Query{{Text: "Sevilla prohíbe bicicletas", Enabled: true}, {Text: "Seville bicycle ban", Enabled: true, Language: "en"}},
		Sources: []Source{
			{URL: "http://www.dw.com/de/a", Title: "Radfahren in Europa", Language: "de", Status: StatusPending,
				Paragraphs: []string{strings.Repeat("Die Städte Europas bauen mehr Radwege für den Verkehr. ", 20)}},
			{URL: "http://www.nikkei.com/c", Title: "市場", Language: "ja", Status: StatusPending,
				Paragraphs: []string{strings.Repeat("火曜日の株式市場は企業の決算を好感して上昇した。", 20)}},
			{URL: "http://www.reuters.com/b", Title: "Markets", Language: "en", Status: StatusPending,
				Paragraphs: []string{strings.Repeat("Stocks rose on Tuesday as investors cheered earnings. ", 20)}},
		}}
	w := newWorld()
	e, err := New(Deps{Model: &fakeModel{}, Fetcher: w, Extract: w.extract, Rater: w}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{e: e, c: c}
	r.relevance(t.Context(), StageSources, 0)
	if s := c.Sources[0]; s.Status == StatusIrrelevant || !strings.Contains(s.Reason, "German (de)") {
		t.Errorf("German page: %s (%s)", s.Status, s.Reason)
	}
	if s := c.Sources[1]; s.Status == StatusIrrelevant || !strings.Contains(s.Reason, "Japanese (ja), as neither the post nor a query is") {
		t.Errorf("Japanese page: %s (%s)", s.Status, s.Reason)
	}
	if s := c.Sources[2]; s.Status != StatusIrrelevant {
		t.Errorf("unrelated English page: %s (%.2f)", s.Status, s.Relevance)
	}
}

// A page written without spaces between words is as long as its words, not
// its few spaces: a Chinese story of a few hundred characters is read, and
// a one-line blurb is still too short.
func TestTextWordsWithoutSpaces(t *testing.T) {
	story := strings.Repeat("网上流传的视频并非巴尔的摩大桥倒塌，而是二零一九年在意大利热那亚拍摄的。", 8)
	if n := lang.Words(story); n < 100 || n > 200 {
		t.Errorf("a story of %d characters counts %d words", len([]rune(story)), n)
	}
	if n := lang.Words("A video of the Genoa bridge, shared as Baltimore's."); n != 9 {
		t.Errorf("English: %d words", n)
	}
	if n := lang.Words("BBC中文 报道：大桥倒塌"); n != 5 { // BBC, and 8 characters
		t.Errorf("mixed: %d words", n)
	}
	w := newWorld()
	const u = "https://www.zaobao.com.sg/bridge"
	w.pages[u] = fakePage{title: "事实核查", date: "2024-01-05", paras: []string{story}}
	w.results[5] = append(w.results[5], u)
	e := newTestEngine(t, w, &fakeModel{evidence: quoting}, Options{})
	c := e.NewCheck(Post{Text: post, Language: "en"}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if s := c.SourceByURL(u); s.Status == StatusTooShort {
		t.Errorf("a Chinese story was kept out as too short: %q", s.Reason)
	}
	blurb := "https://www.zaobao.com.sg/blurb"
	w.pages[blurb] = fakePage{title: "快讯", date: "2024-01-05", paras: []string{"大桥倒塌视频系旧闻。"}}
	w.results[5] = append(w.results[5], blurb)
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if s := c.SourceByURL(blurb); s.Status != StatusTooShort {
		t.Errorf("a one-line blurb: %s", s.Status)
	}
}

// In a script written without spaces, words are compared as overlapping
// two-character terms: a page about the post shares many of them and
// clears the gate, a page about something else in the same language does
// not, and the passage most about the post is ranked first.
func TestRelevanceWithoutSpaces(t *testing.T) {
	th := Options{}.withDefaults().LexicalThreshold
	for _, c := range []struct {
		code, post, about, other string
	}{
		{"ja", "【拡散希望】厚生労働省がワクチン接種後の死亡者数を隠していると内部告発！",
			"厚生労働省は5日、ワクチン接種後の死亡者数を隠しているという投稿について、副反応疑い報告はすべて公開されており事実ではないと発表した。",
			"東京株式市場は火曜日、企業の好決算を受けて日経平均株価が大幅に上昇し、取引を終えた。"},
		{"zh", "网传：卫生部隐瞒了疫苗接种后的死亡人数，内部人士爆料！",
			"卫生部周二表示，网传隐瞒疫苗接种后死亡人数的说法不实，所有不良反应报告均已公开。",
			"上海证券交易所周二收盘，受企业财报利好影响，股市大幅上涨。"},
		{"th", "กระทรวงสาธารณสุขปกปิดจำนวนผู้เสียชีวิตหลังฉีดวัคซีน",
			"กระทรวงสาธารณสุขชี้แจงว่าข่าวการปกปิดจำนวนผู้เสียชีวิตหลังฉีดวัคซีนไม่เป็นความจริง รายงานทั้งหมดเปิดเผยต่อสาธารณะ",
			"ตลาดหลักทรัพย์ปิดตลาดวันอังคารปรับตัวสูงขึ้นจากผลประกอบการของบริษัทจดทะเบียน"},
	} {
		post := Text{c.post, c.code}
		about := Relevance(post, nil, "", Text{c.about, c.code})
		other := Relevance(post, nil, "", Text{c.other, c.code})
		t.Logf("%s: about the post %.2f, about something else %.2f", c.code, about, other)
		if about < 2*th || other >= th {
			t.Errorf("%s: a page about the post scores %.2f, one about something else %.2f (gate %.2f)", c.code, about, other, th)
		}
		q := newParaQuery(post, nil, c.code)
		if got := rankParagraphs(q, []string{c.other, c.about}); got[0] != 1 {
			t.Errorf("%s: the paragraph about the post is not ranked first: %v", c.code, got)
		}
	}
	page := "厚生労働省は5日に発表した。感染症の専門家も同じ見解を示しており、報告は公開されている。"
	if m := LocateQuote("感染症の専門家はまったく違う見解を示している", page); m.Verified || m.Closest != "感染症の専門家も同じ見解を示しており、報告は公開されている。" {
		t.Errorf("closest passage %q", m.Closest)
	}
}
