package lang

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/RadhiFadlillah/whatlanggo"

	"github.com/musecheck/muse/internal/testkit"
)

// equivalenceTexts are texts of many languages and scripts: the posts of
// testdata/posts.tsv, a few in scripts they lack, and the real tweets and
// claims of ../shared/data with pieces of each (a short post is where the
// scores come close).
func equivalenceTexts(t *testing.T) []string {
	t.Helper()
	out := []string{"", " ", "a", "ab", "12 34", "...", "Ça va? Très bien!!", "ÀÉÎ ÕÜ ǅ ǈ",
		"Все люди рождаются свободными и равными в своём достоинстве и правах.",
		"Усі люди народжуються вільними і рівними у своїй гідності та правах.",
		"Сите човечки суштества се раѓаат слободни и еднакви по достоинство и права.",
		"يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق.",
		"تمام انسان آزاد اور حقوق و عزت کے اعتبار سے برابر پیدا ہوئے ہیں۔",
		"सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता प्राप्त है।",
		"सर्व मानवी व्यक्ति जन्मतःच स्वतंत्र आहेत व त्यांना समान प्रतिष्ठा व समान अधिकार आहेत.",
		"כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם.",
		"אַלע מענטשן װערן געבױרן פֿרײַ און גלײַך אין כּבֿוד און רעכט.",
		"የሰው፡ልጅ፡ሁሉ፡ሲወለድ፡ነጻና፡በክብርና፡በመብትም፡እኩልነት፡ያለው፡ነው።",
		"人人生而自由，在尊严和权利上一律平等。", "すべての人間は、生まれながらにして自由であり",
		"Όλοι οι άνθρωποι γεννιούνται ελεύθεροι", "모든 인간은 태어날 때부터 자유로우며",
	}
	f, err := os.Open("testdata/posts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if _, text, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(sc.Text(), "#") {
			out = append(out, text)
		}
	}
	var tweets map[string]struct {
		Raw string `json:"OriginalTweetContent_Raw"`
	}
	b, err := os.ReadFile(filepath.Join(testkit.SharedData(t, "factcheck-tweets-vo-lee-2020"), "politifact", "queries_content.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tweets); err != nil {
		t.Fatal(err)
	}
	for _, tw := range tweets {
		out = append(out, tw.Raw)
	}
	lf, err := os.Open(filepath.Join(testkit.SharedData(t, "liar-plus"), "test2.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	r := csv.NewReader(lf)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if len(row) > 3 {
			out = append(out, row[3])
		}
	}
	n := len(out)
	for _, s := range out[:n] {
		if ws := strings.Fields(s); len(ws) > 3 {
			out = append(out, strings.Join(ws[:2], " "), strings.Join(ws[1:4], " "), prose(s))
		}
	}
	return out
}

// TestByFunctionWordsCountsEachList: counting a text's function words for
// every list in one pass settles each guess as counting them list by list
// does.
func TestByFunctionWordsCountsEachList(t *testing.T) {
	byList := func(text, guess string) string {
		words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && r != '\''
		})
		count := func(code string) int {
			n := 0
			for _, w := range words {
				if IsStopWord(w, code) {
					n++
				}
			}
			return n
		}
		best, most := guess, count(guess)
		for _, code := range stopListCodes {
			if n := count(code); n > most && n >= 2 {
				best, most = code, n
			}
		}
		return best
	}
	changed := 0
	for _, s := range equivalenceTexts(t) {
		s = prose(s)
		for _, guess := range []string{whatlanggo.Detect(s).Lang.Iso6391(), "en", "da", "nb", "xx"} {
			got, want := byFunctionWords(s, guess), byList(s, guess)
			if got != want {
				t.Fatalf("%q, guessed %s: %s, list by list %s", s, guess, got, want)
			}
			if got != guess {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Error("no guess was changed: the texts do not test the rule")
	}
}
