package llm

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
)

// The same paragraph costs about as many tokens in every script (1 to 1.8
// times English; Greek, which o200k splits finely, 2.1 times), where four
// bytes a token made it 2.6 times as costly in Hindi and 2.7 times in
// Thai, and so gave a page in them less than half of an English one's
// text.
func TestCountTokensEveryScript(t *testing.T) {
	news := testkit.SameNews()
	en := CountTokens(news["en"])
	if en < 35 || en > 60 {
		t.Fatalf("English: %d tokens", en)
	}
	for code, p := range news {
		n := CountTokens(p)
		t.Logf("%s: %d tokens, %d at four bytes a token", code, n, (len(p)+3)/4)
		if n < en || n*4 > 9*en {
			t.Errorf("%s: %d tokens for the English %d", code, n, en)
		}
	}
	if n := (len(news["hi"]) + 3) / 4; n < 2*en {
		t.Errorf("four bytes a token gives Hindi %d for the English %d: not the fault this fixes", n, en)
	}
}

// BenchmarkCountTokens is the cost of counting a 20,000-byte page (the
// most the evidence stage ever reads of one) in English and in Hindi.
func BenchmarkCountTokens(b *testing.B) {
	CountTokens("") // the vocabulary is read once, on first use
	news := testkit.SameNews()
	for _, code := range []string{"en", "hi", "ja"} {
		page := strings.Repeat(news[code]+"\n\n", 20000/len(news[code]))
		b.Run(code, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				CountTokens(page)
			}
		})
	}
}
