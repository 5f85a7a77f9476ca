package lang

import (
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
	"unicode/utf8"
)

// The same news paragraph, written in each script, is about the same
// length in Words: within a factor of two of the English one's count,
// where counting at spaces gives 1 to 3 "words" for Chinese, Japanese and
// Thai.
func TestWordsSameTextEveryScript(t *testing.T) {
	para := testkit.SameNews()
	en := Words(para["en"])
	if en != len(strings.Fields(para["en"])) {
		t.Errorf("English: %d words, %d between spaces", en, len(strings.Fields(para["en"])))
	}
	for code, p := range para {
		n := Words(p)
		t.Logf("%s: %d words (%d between spaces)", code, n, len(strings.Fields(p)))
		if n*2 < en || n > en*2 {
			t.Errorf("%s: %d words for the English %d (%d between spaces)", code, n, en, len(strings.Fields(p)))
		}
	}
}

func TestWordsCounts(t *testing.T) {
	for text, want := range map[string]int{
		"":                               0,
		"— … ,":                          0,
		"A well-known 3.5% rise in 2024": 7, // well, known
		"東京都":                            2, // three characters
		"東京都は5日":                         4, // 5 characters, and the digit
		"ภาษาไทย":                        4, // 7 characters
	} {
		if got := Words(text); got != want {
			t.Errorf("Words(%q) = %d, want %d", text, got, want)
		}
	}
	// A Thai vowel sign or tone mark is part of its character.
	if a, b := Words("ที่นี่"), Words("ทน"); a != b {
		t.Errorf("Thai marks counted as characters: %d for ที่นี่, %d for ทน", a, b)
	}
}

func TestSentencesEveryScript(t *testing.T) {
	for text, want := range map[string][]string{
		"यह दावा गलत है। सरकार ने इनकार किया।":            {"यह दावा गलत है।", "सरकार ने इनकार किया।"},
		"政府は否定した。動画は2018年のものだ。":                           {"政府は否定した。", "動画は2018年のものだ。"},
		"هل هذا صحيح؟ لا، ليس كذلك.":                      {"هل هذا صحيح؟", "لا، ليس كذلك."},
		"网上视频是假的！警方说明了情况。":                                {"网上视频是假的！", "警方说明了情况。"},
		"Prices rose 3.5 percent. U.S. officials agreed.": {"Prices rose 3.5 percent.", "U.S. officials agreed."},
		"«Это фейк», — сказал он. Видео старое.":          {"«Это фейк», — сказал он.", "Видео старое."},
	} {
		if got := Sentences(text); !slices.Equal(got, want) {
			t.Errorf("Sentences(%q) = %q", text, got)
		}
	}
}

func TestSentenceCut(t *testing.T) {
	s := "政府は否定した。動画は2018年のものだ。警察が発表した。"
	for n := 0; n <= len(s); n++ {
		i := SentenceCut(s, n)
		if i > n || !utf8.ValidString(s[:i]) {
			t.Fatalf("SentenceCut(%d) = %d", n, i)
		}
		if i > 0 && !strings.HasSuffix(s[:i], "。") {
			t.Errorf("SentenceCut(%d) = %q, not at a sentence end", n, s[:i])
		}
	}
	if i := SentenceCut(s, len(s)); i != len(s) {
		t.Errorf("the whole text is cut at %d of %d", i, len(s))
	}
	if i := SentenceCut("First one. Second one. Third", 24); i != len("First one. Second one.") {
		t.Errorf("English cut at %d", i)
	}
}
