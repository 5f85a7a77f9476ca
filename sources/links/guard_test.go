package links

import (
	"regexp"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources"
)

// The correction guard (pipeline/guard.go) is to switch to Remove; these
// are its test cases and fuzz seeds, with keep comparing sources.Canonical
// forms as it does.

func canonicalKeep(allowed ...string) func(string) bool {
	keys := map[string]bool{}
	for _, u := range allowed {
		if k, err := sources.Canonical(u); err == nil {
			keys[k] = true
		}
	}
	return func(u string) bool {
		k, err := sources.Canonical(u)
		return err == nil && keys[k]
	}
}

func TestGuardCorrectionCases(t *testing.T) {
	keep := canonicalKeep("https://www.reuters.com/world/a", "http://apnews.com/b")
	text := "This post is misleading. Reuters reported the opposite (https://reuters.com/world/a/?utm_source=x). " +
		"See also [AP](https://apnews.com/b) and [this blog](https://fake.example/post), or https://invented.example/x."
	got, removed := Remove(text, keep)
	if strings.Contains(got, "fake.example") || strings.Contains(got, "invented.example") {
		t.Fatalf("invented URL kept: %q", got)
	}
	if !strings.Contains(got, "https://reuters.com/world/a/?utm_source=x") || !strings.Contains(got, "[AP](https://apnews.com/b)") {
		t.Fatalf("evidence URL removed: %q", got)
	}
	if !strings.Contains(got, "and this blog, or") {
		t.Errorf("label of removed link not kept: %q", got)
	}
	if strings.Join(removed, " ") != "https://fake.example/post https://invented.example/x" {
		t.Errorf("removed = %q", removed)
	}
	if got, removed := Remove("  This post is accurate.  ", keep); got != "  This post is accurate.  " || removed != nil {
		t.Errorf("no links: %q %q", got, removed)
	}
}

var anyHTTP = regexp.MustCompile(`(?i)https?://[^\s<>"'\x60\]\[(){}]+`)

func TestGuardFuzzSeeds(t *testing.T) {
	keep := canonicalKeep("https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024",
		"http://apnews.com/article/fact-check-springfield-bicycles")
	for _, s := range []string{
		"This post is false (https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024).",
		"See [AP](http://apnews.com/article/fact-check-springfield-bicycles) and [proof](https://evil.example/x).",
		"https://evil.example/a,https://evil.example/b;http://apnews.com/article/fact-check-springfield-bicycles.",
		"[https://evil.example](https://evil.example) [](http://apnews.com/article/fact-check-springfield-bicycles)",
		"HTTPS://WWW.REUTERS.COM/world/us/springfield-bicycle-claim-false-idUS2024?utm_source=x#frag",
		"http://apnews.com/article/fact-check-springfield-bicycles@evil.example/ http://evil.example\\@apnews.com",
		"[a](http://evil.example/)(http://evil.example/) ((https://evil.example/y)) <https://evil.example/z>",
		"http://apnews.com.evil.example/article/fact-check-springfield-bicycles",
		"Proof: https ://evil.example/proof https://evil.example/decoy",
	} {
		out, _ := Remove(s, keep)
		for _, m := range anyHTTP.FindAllString(out, -1) {
			if !keep(trimEnd(m)) {
				t.Errorf("URL %q survived in %q (from %q)", m, out, s)
			}
		}
		if strings.Contains(out, "evil") {
			t.Errorf("evil survived: %q (from %q)", out, s)
		}
	}
}
