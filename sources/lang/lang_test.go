package lang

import (
	"bufio"
	"cmp"
	"os"
	"strings"
	"testing"

	"github.com/RadhiFadlillah/whatlanggo"
	"golang.org/x/text/language"
)

// TestDetectShortPosts measures detection on short social-media posts in
// ten languages (testdata/posts.tsv, written for this test; nothing was
// tuned on them).
func TestDetectShortPosts(t *testing.T) {
	f, err := os.Open("testdata/posts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, ok := 0, 0
	perLang := map[string][2]int{}
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, text, found := strings.Cut(line, "\t")
		if !found {
			t.Fatalf("bad line %q", line)
		}
		got := Detect(text)
		n++
		c := perLang[code]
		c[1]++
		if got.Code == code {
			ok++
			c[0]++
		} else {
			t.Logf("%s read as %q (%.2f): %s", code, got.Code, got.Confidence, text)
		}
		perLang[code] = c
	}
	acc := float64(ok) / float64(n)
	t.Logf("%d posts in %d languages: %.0f%% detected right", n, len(perLang), 100*acc)
	if n < 100 || len(perLang) < 10 {
		t.Fatalf("the test set shrank: %d posts, %d languages", n, len(perLang))
	}
	if acc < 0.9 {
		t.Errorf("accuracy %.2f on short posts, below 0.90", acc)
	}
	for code, c := range perLang {
		if c[0] < c[1]*7/10 {
			t.Errorf("%s: %d of %d right", code, c[0], c[1])
		}
	}
}

func TestDetectIgnoresLinksHandlesAndTags(t *testing.T) {
	if d := Detect("@usuario https://www.example.com/la-noticia #Plandemia"); d.Code != "" {
		t.Errorf("nothing written in a language gave %q", d.Code)
	}
	d := Detect("@reuters https://t.co/x #breaking El gobierno prohíbe circular en bicicleta por el centro desde el lunes")
	if d.Code != "es" {
		t.Errorf("Spanish behind a handle, a link and a tag: %+v", d)
	}
	if d := Detect(""); d.Code != "" {
		t.Errorf("empty text: %+v", d)
	}
}

func TestNormaliseAndLabel(t *testing.T) {
	for in, want := range map[string]string{"es": "es", "ES": "es", "es-MX": "es", "pt_BR": "pt", "spa": "es",
		"German": "de", "arabic": "ar", "hi": "hi", "": "", "klingon-x": "", "zz": ""} {
		if got := Normalise(in); got != want {
			t.Errorf("Normalise(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Catalan": "ca", "català": "ca", "cat": "ca", "Norwegian": "no",
		"Norwegian Bokmål": "nb", "norwegian bokmal": "nb", "Bokmal": "nb", "Español": "es", "Deutsch": "de",
		"Mandarin": "zh", "Chinese": "zh", "Tagalog": "tl", "Filipino": "tl", "tl": "tl", "iw": "he", "Yiddish": "yi", "ydd": "yi", "Saraiki": "skr", "Hebrew": "he", "Slovene": "sl", "Slovenian": "sl",
		"Basque": "eu", "Galician": "gl", "Welsh": "cy", "Irish": "ga", "ga": "ga", "Cebuano": "ceb", "pes": "fa"} {
		if got := Normalise(in); got != want {
			t.Errorf("Normalise(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Label("es"); got != "Spanish (es)" {
		t.Errorf("Label(es) = %q", got)
	}
	if got := Label("pt"); got != "Portuguese (pt)" {
		t.Errorf("Label(pt) = %q", got)
	}
	if Label("") != "" {
		t.Error("Label of no language")
	}
}

// TestDetectScriptsWithoutSpaces: Chinese, Japanese and Thai posts are one
// unbroken run of characters; they are detected all the same, while a
// single short word in them is still too little to go on.
func TestDetectScriptsWithoutSpaces(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"疫苗不会改变人类的基因，这个说法是假的。", "zh"},
		{"ワクチンは人間の遺伝子を変えるというのは誤りです。", "ja"},
		{"วัคซีนไม่ได้เปลี่ยนแปลงพันธุกรรมของมนุษย์", "th"},
		{"백신은 인간의 유전자를 바꾸지 않습니다", "ko"},
		// Heavy with kanji, which the trigrams take for Chinese; its kana
		// say Japanese.
		{"【拡散希望】福岡市が月曜日から天神の渡辺通りで自転車の通行を全面禁止にしたらしい！市長がこっそり命令に署名したって。ひどすぎる #福岡", "ja"},
		{"厚生労働省発表：新型コロナワクチン接種後死亡者数隠蔽疑惑は事実無根", "ja"},
		{"卫生部发布：新冠疫苗接种后死亡人数隐瞒传闻纯属谣言", "zh"},
	} {
		if got := Detect(c.text).Code; got != c.want {
			t.Errorf("Detect(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if got := Detect("好").Code; got != "" {
		t.Errorf("one character detected as %q", got)
	}
}

// TestNormaliseEveryKnownLanguage: every language the detector or the
// stemmer knows normalises from its ISO 639-1 code, its ISO 639-3 code,
// its English name (x/text's, and whatlanggo's where it differs) and back
// from the name Name gives it.
func TestNormaliseEveryKnownLanguage(t *testing.T) {
	want := map[string]string{} // a code as typed → the code
	for l := range whatlanggo.Langs {
		code := cmp.Or(l.Iso6391(), Normalise(l.Iso6393()))
		if code == "" {
			t.Errorf("whatlanggo's %s (%s) normalises to nothing", l, l.Iso6393())
			continue
		}
		want[l.Iso6393()], want[l.String()] = code, code
		if l.Iso6391() != "" {
			want[l.Iso6391()] = code
		}
	}
	for code := range stemmers {
		want[code] = code
		if base, err := language.ParseBase(code); err == nil {
			want[base.ISO3()] = code
		}
	}
	codes := map[string]bool{}
	for in, code := range want {
		codes[code] = true
		if got := Normalise(in); got != code {
			t.Errorf("Normalise(%q) = %q, want %q", in, got, code)
		}
	}
	for code := range codes {
		if n := Name(code); n == code {
			t.Errorf("%s has no English name", code)
		} else if got := Normalise(n); got != code {
			t.Errorf("Normalise(Name(%s) = %q) = %q", code, n, got)
		}
	}
	t.Logf("%d spellings of %d languages", len(want), len(codes))
}

// TestCyrillicLetters: a short Russian post is not Bulgarian (it has ы and
// э, which Bulgarian has not), a Ukrainian one with є or ї is Ukrainian,
// and a Bulgarian one stays Bulgarian.
func TestCyrillicLetters(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"СРОЧНО: мэрия Казани запретила все велосипеды на улице Баумана с понедельника! Мэр подписал указ тайно.", "ru"},
		{"Уряд заявив, що інформація про заборону є неправдивою, і закликав їх перевіряти джерела.", "uk"},
		{"Правителството заяви, че информацията за забраната е невярна и призова хората да проверяват източниците.", "bg"},
		{"Урад паведаміў, што забароны на ровары няма, і заклікаў правяраць крыніцы ў сеціве.", "be"},
	} {
		if got := Detect(c.text).Code; got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}
