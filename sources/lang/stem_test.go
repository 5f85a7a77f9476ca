package lang

import (
	"strings"
	"testing"
)

// The stemmer and the stop lists in the five languages of the loopback
// worlds, plus English: inflections meet, function words go, names stay.
func TestStemAndStopWords(t *testing.T) {
	same := []struct{ code, a, b string }{
		{"en", "vaccines", "vaccine"},
		{"en", "running", "run"},
		{"es", "vacunas", "vacuna"},
		{"es", "elecciones", "elección"},
		{"de", "Impfungen", "Impfung"},
		{"de", "Wahlen", "Wahl"},
		{"pt", "vacinas", "vacina"},
		{"pt", "governos", "governo"},
		{"ar", "الكتاب", "كتاب"},
	}
	for _, c := range same {
		a, b := Stem(strings.ToLower(c.a), c.code), Stem(strings.ToLower(c.b), c.code)
		if a != b {
			t.Errorf("%s: %q → %q and %q → %q; want one stem", c.code, c.a, a, c.b, b)
		}
	}
	if got := Stem("café", "xx"); got != "cafe" {
		t.Errorf("a language without a stemmer folds accents only: %q", got)
	}
	if got := Stem("फ़रवरी", "hi"); got != "फ़रवरी" {
		t.Errorf("Hindi has no Snowball stemmer here and its marks are letters: %q", got)
	}
	stops := map[string][]string{
		"en": {"the", "which", "would"}, "es": {"el", "que", "para"}, "de": {"und", "nicht", "diese"},
		"pt": {"não", "para", "uma"}, "hi": {"और", "के", "है"}, "ar": {"في", "من", "على"},
	}
	for code, ws := range stops {
		for _, w := range ws {
			if !IsStopWord(w, code) {
				t.Errorf("%s: %q is not a stop word", code, w)
			}
		}
	}
	for code, w := range map[string]string{"en": "vaccine", "es": "vacuna", "de": "impfung", "pt": "vacina", "hi": "टीका", "ar": "لقاح"} {
		if IsStopWord(w, code) {
			t.Errorf("%s: %q is a content word", code, w)
		}
	}
	if IsStopWord("the", "xx") {
		t.Error("a language without a list has no stop words")
	}
	if got := Base("pt-BR"); got != "pt" {
		t.Errorf("Base(pt-BR) = %q", got)
	}
	if got := Base(""); got != "en" {
		t.Errorf("Base() = %q", got)
	}
}
