package watch

import (
	"testing"

	"github.com/musecheck/muse/sources/lang"
)

// A post's language is stated only when the detector is sure of it, or
// its author declared one: a short post's unsure guess is often another
// language altogether.
func TestPostLangOnlyWhenSure(t *testing.T) {
	unsure := "#Crime #jobs for Black Anericans will help. @Sheriff"
	if d := lang.Detect(unsure); d.Reliable {
		t.Skipf("the detector is sure of %q (%s); the case needs an unsure one", unsure, d.Code)
	}
	if got := postLang(unsure, nil); got != "" {
		t.Errorf("an unsure guess stated: %q", got)
	}
	if got := postLang(unsure, []string{"en-US"}); got != "en" {
		t.Errorf("the declared language: %q", got)
	}
	sure := "Die Regierung hat die Steuern für alle Familien im letzten Jahr um zehn Prozent erhöht"
	if got := postLang(sure, []string{"en"}); got != "de" {
		t.Errorf("a sure detection beats the declared language: %q", got)
	}
}
