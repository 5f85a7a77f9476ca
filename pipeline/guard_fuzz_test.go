package pipeline

import (
	"slices"
	"testing"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/links"
)

// The guards are what makes a correction checkable, and they run on
// whatever a model writes, so they are fuzzed on model-like text: no URL
// outside the evidence set survives, in any spelling.

var guardAllowed = []string{
	"https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024",
	"http://apnews.com/article/fact-check-springfield-bicycles",
}

func FuzzGuardCorrection(f *testing.F) {
	for _, s := range []string{
		"This post is false (https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024).",
		"See [AP](http://apnews.com/article/fact-check-springfield-bicycles) and [proof](https://evil.example/x).",
		"https://evil.example/a,https://evil.example/b;http://apnews.com/article/fact-check-springfield-bicycles.",
		"[https://evil.example](https://evil.example) [](http://apnews.com/article/fact-check-springfield-bicycles)",
		"HTTPS://WWW.REUTERS.COM/world/us/springfield-bicycle-claim-false-idUS2024?utm_source=x#frag",
		"http://apnews.com/article/fact-check-springfield-bicycles@evil.example/ http://evil.example\\@apnews.com",
		"[a](http://evil.example/)(http://evil.example/) ((https://evil.example/y)) <https://evil.example/z>",
		"http://apnews.com.evil.example/article/fact-check-springfield-bicycles",
	} {
		f.Add(s)
	}
	allowed := map[string]bool{}
	for _, u := range guardAllowed {
		allowed[sources.Key(u)] = true
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, cited, _ := GuardCorrection(text, guardAllowed)
		for _, l := range links.Find(out) {
			if !allowed[sources.Key(l.URL)] {
				t.Fatalf("link %q survived in %q (from %q)", l.URL, out, text)
			}
		}
		for _, u := range cited {
			if !slices.Contains(guardAllowed, u) {
				t.Fatalf("cited %q", u)
			}
		}
		// Running the guard again changes nothing: what it lets through
		// is stable.
		again, _, warns := GuardCorrection(out, guardAllowed)
		if again != out || len(warns) != 0 {
			t.Fatalf("second pass changed %q to %q (%v)", out, again, warns)
		}
	})
}
