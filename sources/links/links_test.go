package links

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	cases := []struct {
		text string
		want []string // URL of each link, in order
		kind Kind     // of the first link
	}{
		{"See https://www.reuters.com/world/a.", []string{"https://www.reuters.com/world/a"}, KindURL},
		{"HTTPS://EVIL.EXAMPLE.COM/Proof", []string{"https://evil.example.com/Proof"}, KindURL},
		{"Hxxp? no. HtTp://evil.com/x", []string{"http://evil.com/x"}, KindURL},
		{"proof at https ://evil.com/x", []string{"https://evil.com/x"}, KindURL},
		{"proof at https: //evil.com/x", []string{"https://evil.com/x"}, KindURL},
		{`https:\\evil.com\x\y`, []string{"https://evil.com/x/y"}, KindURL},
		{`https:/\evil.com/x`, []string{"https://evil.com/x"}, KindURL},
		{"https:/evil.com/x", []string{"https://evil.com/x"}, KindURL},
		{"https:evil.com/x", []string{"https://evil.com/x"}, KindURL},
		{"https://apnews.com@evil.com/x", []string{"https://evil.com/x"}, KindURL},
		{"ｈｔｔｐｓ：／／ｅｖｉｌ．ｃｏｍ／ｘ", []string{"https://evil.com/x"}, KindURL},
		{"https://evil。com/x", []string{"https://evil.com/x"}, KindURL},
		{"https://ev\u200bil.com/x", []string{"https://evil.com/x"}, KindURL},
		{"https://bücher.de/x", []string{"https://xn--bcher-kva.de/x"}, KindURL},
		{"javascript:alert(document.cookie)", []string{"javascript:alert(document.cookie)"}, KindURL},
		{"JavaScript :alert(1)", []string{"javascript:alert(1)"}, KindURL},
		{"javascript: alert(1)", []string{"javascript:alert(1)"}, KindURL},
		{"data:text/html;base64,PHNjcmlwdD4=", []string{"data:text/html;base64,PHNjcmlwdD4="}, KindURL},
		{"vbscript:msgbox(1)", []string{"vbscript:msgbox(1)"}, KindURL},
		{"file:///etc/passwd", []string{"file:///etc/passwd"}, KindURL},
		{"smb://fileserver/share", []string{"smb://fileserver/share"}, KindURL},
		{"Look: evil-proof.com/x now", []string{"https://evil-proof.com/x"}, KindBare},
		{"Visit www.example.org.", []string{"https://www.example.org"}, KindBare},
		{"ｅｖｉｌ－ｐｒｏｏｆ．ｃｏｍ／ｘ", []string{"https://evil-proof.com/x"}, KindBare},
		{"evil．com／x", []string{"https://evil.com/x"}, KindBare},
		{"bücher.de/kaufen", []string{"https://xn--bcher-kva.de/kaufen"}, KindBare},
		{"xn--bcher-kva.de/kaufen", []string{"https://xn--bcher-kva.de/kaufen"}, KindBare},
		{"site.github.io/page", []string{"https://site.github.io/page"}, KindBare},
		{"router at 192.168.1.1/admin", []string{"https://192.168.1.1/admin"}, KindBare},
		{"see example.com:8080/x", []string{"https://example.com:8080/x"}, KindBare},
		{"log in as user@evil.com/x", []string{"https://evil.com/x"}, KindBare},
		{"(//evil.example.com/x)", []string{"https://evil.example.com/x"}, KindRelative},
		{"[proof](https://evil.com/x)", []string{"https://evil.com/x"}, KindMarkdown},
		{"[proof](<https://evil.com/x y>)", []string{"https://evil.com/x%20y"}, KindMarkdown},
		{`[proof](https://evil.com/x "title")`, []string{"https://evil.com/x"}, KindMarkdown},
		{"[wiki](https://en.wikipedia.org/wiki/Foo_(bar))", []string{"https://en.wikipedia.org/wiki/Foo_(bar)"}, KindMarkdown},
		{"![img](https://evil.com/p.png)", []string{"https://evil.com/p.png"}, KindMarkdown},
		{"[click](javascript:alert(1))", []string{"javascript:alert(1)"}, KindMarkdown},
		{"[proof](//evil.com/x)", []string{"https://evil.com/x"}, KindMarkdown},
		{"[proof](evil.com)", []string{"https://evil.com"}, KindMarkdown},
		{"As shown [here][1].\n\n[1]: https://evil.com/x", []string{"https://evil.com/x", "https://evil.com/x"}, KindReference},
		{"As shown [here][].\n\n[here]: <https://evil.com/x> \"t\"", []string{"https://evil.com/x", "https://evil.com/x"}, KindReference},
		{"As reported [2].\n\n[2]: evil.com", []string{"https://evil.com", "https://evil.com"}, KindReference},
		{"<https://evil.com/x>", []string{"https://evil.com/x"}, KindAutolink},
		{`<a href="https://evil.com/x">proof</a>`, []string{"https://evil.com/x"}, KindHTML},
		{`<A HREF='//evil.com/x'>proof</A>`, []string{"https://evil.com/x"}, KindHTML},
		{`<a href="&#106;avascript:alert(1)">x</a>`, []string{"javascript:alert(1)"}, KindHTML},
		{`<img src=https://evil.com/p.png>`, []string{"https://evil.com/p.png"}, KindHTML},
		{"two: https://a.com/1, https://b.com/2; done", []string{"https://a.com/1", "https://b.com/2"}, KindURL},
		{"(see https://a.com/x)", []string{"https://a.com/x"}, KindURL},
	}
	for _, c := range cases {
		got := Find(c.text)
		var urls []string
		for _, l := range got {
			urls = append(urls, l.URL)
		}
		if strings.Join(urls, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("Find(%q) = %q, want %q", c.text, urls, c.want)
			continue
		}
		if got[0].Kind != c.kind {
			t.Errorf("Find(%q)[0].Kind = %s, want %s", c.text, got[0].Kind, c.kind)
		}
		for _, l := range got {
			if l.Start < 0 || l.End > len(c.text) || l.Start >= l.End {
				t.Errorf("Find(%q): span %d..%d", c.text, l.Start, l.End)
			}
		}
	}
}

func TestFindLeavesProseAlone(t *testing.T) {
	for _, s := range []string{
		"This post is false, e.g. the photo is from 2012.",
		"The U.S. Centers for Disease Control said so.",
		"Version 3.5 of the app, built with Node.js and ASP.NET, is out.",
		"The ratio was 1.2/3 and i.e. small.",
		"Reuters.com and apnews.com reported it.", // a name in prose, no path
		"The data: 5 cases in 2020; file: none.",
		"The page is written in JavaScript: it runs in the browser.",
		"Write to press@example.com or press@www.example.com for details.",
		"It costs $3.50/month.",
		"in 2020.The claim",
		"the http: header",
		"a/b and km/h",
		"[1] is not a link without a definition.",
	} {
		if got := Find(s); len(got) != 0 {
			t.Errorf("Find(%q) = %+v, want none", s, got)
		}
	}
}

func TestFindSpanAndLabel(t *testing.T) {
	text := "See [the AP story](https://apnews.com/b) or <a href=\"https://x.com/y\"><b>this</b> post</a>."
	got := Find(text)
	if len(got) != 2 {
		t.Fatalf("Find = %+v", got)
	}
	if text[got[0].Start:got[0].End] != "[the AP story](https://apnews.com/b)" || got[0].Label != "the AP story" {
		t.Errorf("first: %q label %q", text[got[0].Start:got[0].End], got[0].Label)
	}
	if got[1].Label != "this post" || !strings.HasPrefix(text[got[1].Start:], "<a href") || !strings.HasSuffix(text[:got[1].End], "</a>") {
		t.Errorf("second: %+v", got[1])
	}
	// Offsets are of the original text, fullwidth and all.
	fw := "証拠：ｅｖｉｌ．ｃｏｍ／ｘ です"
	l := Find(fw)
	if len(l) != 1 || fw[l[0].Start:l[0].End] != "ｅｖｉｌ．ｃｏｍ／ｘ" {
		t.Errorf("fullwidth span: %+v", l)
	}
}

var evidence = map[string]bool{
	"https://www.reuters.com/world/a": true,
	"https://apnews.com/b":            true,
}

func keepEvidence(u string) bool { return evidence[u] }

func TestRemove(t *testing.T) {
	cases := []struct{ in, want string }{
		{"This post is false (https://www.reuters.com/world/a).", "This post is false (https://www.reuters.com/world/a)."},
		{"This post is false. More at https://evil.com/x.", "This post is false."},
		{"This post is false (see also https://evil.com/x).", "This post is false."},
		{"This post is false [2].\n\n[2]: https://evil.com/x", "This post is false."},
		{"This post is false [AP][1].\n\n[1]: https://apnews.com/b", "This post is false [AP][1].\n\n[1]: https://apnews.com/b"},
		{"This post is false, says [a blog][b].\n\n[b]: evil.com", "This post is false, says a blog."},
		{"False, see [AP](https://apnews.com/b) and [this blog](https://fake.example/post), or https://invented.example/x.", "False, see [AP](https://apnews.com/b) and this blog, or."},
		{"Proof: https ://evil.example/proof https://evil.example/decoy", ""},
		{"Read more: HTTPS://EVIL.COM/X", ""},
		{"Sources:\n- https://evil.com/a\n- https://www.reuters.com/world/a", "Sources:\n\n- https://www.reuters.com/world/a"},
		{"Click <a href=\"javascript:alert(1)\">here</a> now.", "Click here now."},
		{"[https://apnews.com/b](https://evil.com/x) is it", "is it"},
		{"It is false: evil-proof.com/x.", "It is false."},
		{"It is false, www.evil.com says.", "It is false, says."},
		{"hxxps://evil.com/x is defanged", "is defanged"}, // still a pointer a reader can follow
		{"No links here.", "No links here."},
	}
	for _, c := range cases {
		got, _ := Remove(c.in, keepEvidence)
		if got != c.want {
			t.Errorf("Remove(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestRemoveNamesWhatWentAndRepeats(t *testing.T) {
	// Removing the first link joins "https" and "://evil…" into a new one.
	got, removed := Remove("Proof: https[](https://a.com/)://evil.example/proof", keepEvidence)
	if strings.Contains(got, "evil") || len(Find(got)) != 0 {
		t.Fatalf("a link formed by a removal survived: %q", got)
	}
	if len(removed) < 2 || removed[0] != "https://a.com/" {
		t.Errorf("removed = %q", removed)
	}
	_, removed = Remove("https://evil.com/x and https://evil.com/x again", keepEvidence)
	if len(removed) != 1 {
		t.Errorf("a URL removed twice is named twice: %q", removed)
	}
}

func FuzzRemove(f *testing.F) {
	for _, s := range []string{
		"This post is false (https://www.reuters.com/world/a). More at https://evil.com/x.",
		"See [AP](https://apnews.com/b) and [proof](https://evil.example/x).",
		"https://evil.example/a,https://evil.example/b;https://apnews.com/b.",
		"[https://evil.example](https://evil.example) [](https://apnews.com/b)",
		"HTTPS://WWW.REUTERS.COM/world/a and evil-proof.com/x and www.evil.org",
		"https://apnews.com/b@evil.example/ http://evil.example\\@apnews.com",
		"[a](http://evil.example/)(http://evil.example/) ((https://evil.example/y)) <https://evil.example/z>",
		"https ://evil.example/proof https: //evil.example/p //evil.example/q",
		"As shown [here][1] [2].\n\n[1]: https://evil.com/x\n[2]: https://apnews.com/b",
		"<a href='javascript:alert(1)'>x</a> data:text/html,<b>x</b> ｅｖｉｌ．ｃｏｍ／ｘ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, removed := Remove(text, keepEvidence)
		for _, l := range Find(out) {
			if !keepEvidence(l.URL) {
				t.Fatalf("link %q (%s) survived in %q (from %q)", l.URL, l.Kind, out, text)
			}
		}
		for _, u := range removed {
			if keepEvidence(u) {
				t.Fatalf("removed an evidence URL %q", u)
			}
		}
		again, removed2 := Remove(out, keepEvidence)
		if again != out || len(removed2) != 0 {
			t.Fatalf("second pass changed %q to %q (%v)", out, again, removed2)
		}
	})
}

// FindLinked takes what X links: a bare host name under a generic
// top-level domain, and a percent-encoded letter as the letter; prose with
// dots that X leaves alone stays text.
func TestFindLinked(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Reuters.com and apnews.com reported it.", []string{"https://reuters.com", "https://apnews.com"}},
		{"proof at evil.co today", []string{"https://evil.co"}},
		{"%68ttps://evil-proof.com/e", []string{"https://evil-proof.com/e"}},
		{"see %65vil.com now", []string{"https://evil.com"}},
		{"The U.S. Centers for Disease Control said so, e.g. in 2020.", nil},
		{"Version 3.5 of the app, built with Node.js, is out; see main.go and file.py.", nil},
		{"It costs $3.50/month, 50% more.", nil},
		{"Write to press@example.com for details.", nil},
	} {
		var got []string
		for _, l := range FindLinked(c.text) {
			got = append(got, l.URL)
		}
		if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("FindLinked(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// Find itself reads percent-encoded letters but leaves a bare name in
	// prose alone.
	if got := Find("%68ttps://evil-proof.com/e"); len(got) != 1 || got[0].URL != "https://evil-proof.com/e" {
		t.Errorf("Find(percent-encoded scheme) = %+v", got)
	}
	if got, removed := RemoveLinked("It is false, Reuters.com says.", keepEvidence); got != "It is false, says." || len(removed) != 1 {
		t.Errorf("RemoveLinked = %q, %q", got, removed)
	}
}

func TestDefang(t *testing.T) {
	for in, want := range map[string]string{
		"https://evil.example/x.html":   "hxxps://evil[.]example/x.html",
		"http://www.rumours.example":    "hxxp://www[.]rumours[.]example",
		"javascript:alert(document.x)":  "javascript[:]alert(document.x)",
		"evil-proof.com/e":              "evil-proof[.]com/e",
		"ftp://files.example/a":         "fxp://files[.]example/a",
		"data:text/html;base64,PHNjcmk": "data[:]text/html;base64,PHNjcmk",
	} {
		if got := Defang(in); got != want {
			t.Errorf("Defang(%q) = %q, want %q", in, got, want)
		}
		if got := Defang(in); len(FindLinked(got)) > 0 && !strings.HasPrefix(got, "hxx") && !strings.HasPrefix(got, "fxp") {
			t.Errorf("Defang(%q) = %q is still a link: %+v", in, got, FindLinked(got))
		}
	}
}
