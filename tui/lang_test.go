package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"
	"golang.org/x/text/unicode/bidi"

	"github.com/musecheck/muse/pipeline"
)

// Posts and pages in other scripts, written for these tests: the same
// story as the English world (an old Genoa video shared as Baltimore's).
var (
	arabicPost = pipeline.Post{
		Text:     "عاجل: انهيار جسر بالتيمور الآن، شاهدوا الفيديو!! السُّلطات تُخفي عدد الضحايا.",
		Author:   "أخبار الحقيقة",
		Handle:   "@haqiqa_news",
		PostedAt: time.Date(2024, 3, 5, 9, 12, 0, 0, time.UTC),
	}
	arabicWorld = world{
		queries: []string{"انهيار جسر بالتيمور فيديو", "فيديو جسر موراندي جنوة 2019", "Baltimore bridge collapse video fact check"},
		pages: []page{
			{URL: "https://www.aljazeera.net/news/2024/3/2/bridge-video", Title: "تحقق: الفيديو لا يُظهر انهيار جسر بالتيمور", Site: "الجزيرة نت",
				Publisher: "الجزيرة", Published: day(2024, 3, 2), Factuality: "high", Bias: "left-center", Lang: "ar",
				Refutes: []string{"الفيديو المتداول لا يُظهر انهيار جسر في بالتيمور؛ صُوِّر عام 2019 في جنوة بإيطاليا."},
				Context: []string{"انهار جسر موراندي في 14 أغسطس 2018."}},
			{URL: "https://www.bbc.com/arabic/articles/c0bridge", Title: "فيديو قديم لجسر جنوة يُنشر على أنه جديد", Site: "BBC News عربي",
				Publisher: "بي بي سي عربي", Published: day(2024, 3, 3), Factuality: "very high", Bias: "least biased", RatedAs: "bbc.com/arabic", Lang: "ar",
				Refutes: []string{"ظهرت اللقطات لأول مرة على الإنترنت عام 2019 وتُظهر ما بعد الانهيار في جنوة."}},
			englishWorld.pages[0],
		},
		lead: "هذا المنشور مضلِّل. ",
		background: "غطى مراسلو %s أيضا نقاش ميزانية المدينة وإضراب عمال السكك الحديدية ونتائج مباريات كرة القدم في نهاية الأسبوع، " +
			"وكتب نحو %d قارئ إلى غرفة الأخبار التي أجابت عن أسئلتهم حول أخبار الأسبوع الأخرى في تغطية مباشرة استمرت حتى وقت متأخر من المساء.",
	}
	chinesePost = pipeline.Post{
		Text:     "突发：巴尔的摩大桥刚刚倒塌，快看视频！！当局在隐瞒死亡人数。",
		Author:   "真相日报",
		Handle:   "@zhenxiang",
		PostedAt: time.Date(2024, 3, 5, 9, 12, 0, 0, time.UTC),
		// whatlanggo needs two words between spaces, which Chinese does
		// not write: the checker gives the language, as in compose.
		Language: "zh",
	}
	chineseWorld = world{
		queries: []string{"巴尔的摩大桥倒塌视频", "热那亚莫兰迪大桥 2019 视频", "Baltimore bridge collapse video fact check"},
		pages: []page{
			{URL: "https://www.zaobao.com.sg/realtime/world/story20240302-bridge", Title: "事实核查：视频并非巴尔的摩大桥倒塌，而是2019年的热那亚", Site: "联合早报",
				Publisher: "联合早报", Published: day(2024, 3, 2), Factuality: "high", Bias: "least biased", Lang: "zh",
				Refutes: []string{"网上流传的视频并非巴尔的摩大桥倒塌，而是2019年在意大利热那亚拍摄的。"},
				Context: []string{"莫兰迪大桥于2018年8月14日倒塌。"}},
			{URL: "https://www.bbc.com/zhongwen/simp/world-bridge", Title: "旧视频被当作新视频传播：热那亚大桥", Site: "BBC News 中文",
				Publisher: "BBC中文", Published: day(2024, 3, 3), Factuality: "very high", Bias: "least biased", RatedAs: "bbc.com/zhongwen", Lang: "zh",
				Refutes: []string{"这段视频最早于2019年出现在网上，显示的是热那亚大桥倒塌后的情景。"}},
			englishWorld.pages[0],
		},
		lead: "这条帖子具有误导性。",
		background: "%s记者还报道了市政预算辩论、铁路罢工以及周末的足球比赛结果。约有%d名读者来信，" +
			"编辑部在一直持续到深夜的直播中回答了他们关于本周其他新闻的问题，并介绍了下周的天气和交通安排。",
	}
	japanesePost = pipeline.Post{
		Text:     "【速報】ボルチモアの橋が今崩落した、動画を見て！！当局は死者の数を隠している。",
		Author:   "真実ニュース",
		Handle:   "@shinjitsu_news",
		PostedAt: time.Date(2024, 3, 5, 9, 12, 0, 0, time.UTC),
	}
	japaneseWorld = world{
		queries: []string{"ボルチモア 橋 崩落 動画", "ジェノバ モランディ橋 2019 動画", "Baltimore bridge collapse video fact check"},
		pages: []page{
			{URL: "https://www3.nhk.or.jp/news/html/20240302/k10014380001000.html", Title: "ファクトチェック：動画はボルチモアの橋ではなく2019年のジェノバ", Site: "NHKニュース",
				Publisher: "NHK", Published: day(2024, 3, 2), Factuality: "very high", Bias: "least biased", Lang: "ja",
				Refutes: []string{"SNSで拡散している動画はボルチモアの橋の崩落ではなく、2019年にイタリアのジェノバで撮影されたものです。"},
				Context: []string{"モランディ橋は2018年8月14日に崩落しました。"}},
			englishWorld.pages[0],
		},
		lead: "この投稿は誤解を招きます。",
		background: "%sの記者は市の予算をめぐる議論や鉄道のストライキ、週末のサッカーの結果も伝えた。およそ%d人の読者から便りが届き、" +
			"編集部は夜遅くまで続いたライブ配信で今週のほかのニュースについての質問に答え、来週の天気と交通の予定も紹介した。",
	}
	hindiPost = pipeline.Post{
		Text:   "ब्रेकिंग: बाल्टीमोर का पुल अभी गिर गया, वीडियो देखिए!! अधिकारी मृतकों की संख्या छिपा रहे हैं।",
		Handle: "@sach_khabar",
	}
	hindiWorld = world{
		queries: []string{"बाल्टीमोर पुल गिरने का वीडियो", "जेनोआ मोरांडी पुल वीडियो 2019", "Baltimore bridge collapse video fact check"},
		pages: []page{
			{URL: "https://www.bbc.com/hindi/articles/c0bridge", Title: "फ़ैक्ट चेक: वीडियो बाल्टीमोर के पुल का नहीं, जेनोआ का है और पुराना है", Site: "BBC News हिंदी",
				Publisher: "बीबीसी हिन्दी", Published: day(2024, 3, 2), Factuality: "very high", Bias: "least biased", RatedAs: "bbc.com/hindi", Lang: "hi",
				Refutes: []string{"सोशल मीडिया पर साझा किया जा रहा वीडियो बाल्टीमोर में पुल गिरने का नहीं है; यह 2019 में इटली के जेनोआ में फ़िल्माया गया था।"}},
			englishWorld.pages[0],
		},
		lead: "यह पोस्ट भ्रामक है। ",
		background: "%s के संवाददाताओं ने शहर के बजट पर बहस, रेल हड़ताल और सप्ताहांत के फ़ुटबॉल मैचों के नतीजों की भी ख़बर दी; " +
			"लगभग %d पाठकों ने पत्र लिखे, और समाचार कक्ष ने देर शाम तक चले लाइव ब्लॉग में सप्ताह की दूसरी ख़बरों के बारे में उनके सवालों के जवाब दिए।",
	}
)

// finishedIn runs a whole check of post in world.
func finishedIn(t *testing.T, w, h int, post pipeline.Post, in world, st Styles) *Model {
	t.Helper()
	r := newRunner(t, in)
	opts := testOptions(r)
	opts.Post, opts.Styles = post, &st
	m := New(t.Context(), opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	press(t, m, "ctrl+s")
	if m.running || m.check.Correction.Text == "" {
		t.Fatalf("the check did not finish: %+v", m.check.Stages)
	}
	return m
}

// requireFits fails when a line of the view is wider than the terminal
// as the terminal counts it (cells) or taller than it.
func requireFits(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line terminal", len(lines), h)
	}
	for i, l := range lines {
		if n := cells(l); n > w {
			t.Errorf("line %d is %d cells on a %d-column terminal: %q", i+1, n, w, ansi.Strip(l))
		}
	}
}

// TestScriptViews: every pane of a check of an Arabic and of a Chinese
// post, at 80×24 and 160×48, without colour (NO_COLOR: the goldens'
// profile) and with it; each fits the terminal, and the coloured view is
// the plain one plus styling.
func TestScriptViews(t *testing.T) {
	for _, tc := range []struct {
		name  string
		post  pipeline.Post
		world world
		code  string
	}{{"arabic", arabicPost, arabicWorld, "ar"}, {"chinese", chinesePost, chineseWorld, "zh"}} {
		for _, sz := range sizes() {
			plain := finishedIn(t, sz[0], sz[1], tc.post, tc.world, NewStyles(true, false))
			if plain.check.Post.Language != tc.code {
				t.Fatalf("%s post detected as %q", tc.name, plain.check.Post.Language)
			}
			for i, s := range pipeline.Stages {
				t.Run(fmt.Sprintf("%s_%s_%dx%d", tc.name, s, sz[0], sz[1]), func(t *testing.T) {
					plain.sel = i
					v := plain.View()
					requireFits(t, v, sz[0], sz[1])
					golden.RequireEqual(t, v)
				})
			}
			t.Run(fmt.Sprintf("%s_colour_%dx%d", tc.name, sz[0], sz[1]), func(t *testing.T) {
				plain.sel = stageIndex(pipeline.StageSources)
				want := plain.View()
				lipgloss.SetColorProfile(termenv.TrueColor)
				defer lipgloss.SetColorProfile(termenv.Ascii)
				col := finishedIn(t, sz[0], sz[1], tc.post, tc.world, NewStyles(true, true))
				col.sel = stageIndex(pipeline.StageSources)
				v := col.View()
				if !strings.Contains(v, "\x1b[") {
					t.Fatal("the colour view has no colour")
				}
				requireFits(t, v, sz[0], sz[1])
				golden.RequireEqual(t, v)
				if got := ansi.Strip(v); got != want {
					t.Errorf("with colour the view is laid out differently:\n%s\nwithout:\n%s", got, want)
				}
			})
		}
	}
}

// TestDevanagariFits: Devanagari's spacing vowel signs take a cell each
// in the terminal (x/ansi counts them as none): every pane of a Hindi
// check still fits 80 columns, the sources table's columns line up, and
// the header shows the language.
func TestDevanagariFits(t *testing.T) {
	m := finishedIn(t, 80, 24, hindiPost, hindiWorld, NewStyles(true, false))
	for i := range pipeline.Stages {
		m.sel = i
		requireFits(t, m.View(), 80, 24)
	}
	m.sel = stageIndex(pipeline.StageSources)
	if v := m.View(); !strings.HasSuffix(strings.Split(v, "\n")[0], " hi · "+m.check.Verdicts().Post.Label()) {
		t.Errorf("the header does not name the language:\n%s", v)
	}
	// The table rows are cut to the same cells, so the column after the
	// Hindi title starts in the same column on every row.
	var starts []int
	for _, l := range strings.Split(m.View(), "\n") {
		if i := strings.Index(l, " 2024-03-0"); i >= 0 {
			starts = append(starts, cells(l[:i]))
		}
	}
	if len(starts) < 2 {
		t.Fatalf("no tier column found:\n%s", m.View())
	}
	for _, s := range starts[1:] {
		if s != starts[0] {
			t.Errorf("the tier column starts at %v: not aligned", starts)
		}
	}
}

// TestJapaneseFits: every pane of a Japanese check fits 80 columns, its
// language is detected (not taken for Chinese), the header names it, no
// line cuts a character in two, and the Japanese quote and correction are
// on screen whole, wrapped between characters.
func TestJapaneseFits(t *testing.T) {
	m := finishedIn(t, 80, 24, japanesePost, japaneseWorld, NewStyles(true, false))
	if m.check.Post.Language != "ja" {
		t.Fatalf("Japanese post detected as %q", m.check.Post.Language)
	}
	screen := map[pipeline.Stage]string{}
	for i, st := range pipeline.Stages {
		m.sel = i
		v := m.View()
		requireFits(t, v, 80, 24)
		if !utf8.ValidString(v) || strings.ContainsRune(v, utf8.RuneError) {
			t.Errorf("%s: a character is cut in two", st)
		}
		screen[st] = v
	}
	if !strings.Contains(strings.TrimRight(strings.Split(screen[pipeline.StageSources], "\n")[0], " ")+" ", " ja ") {
		t.Errorf("the header does not name the language:\n%s", screen[pipeline.StageSources])
	}
	// Read back the right-hand pane's text, lines joined, to find the quote
	// and the correction whole.
	text := func(v string) string {
		var b strings.Builder
		for _, l := range strings.Split(v, "\n") {
			if _, right, ok := strings.Cut(l, "│"); ok {
				b.WriteString(strings.TrimSpace(right))
			}
		}
		return b.String()
	}
	quote := japaneseWorld.pages[0].Refutes[0]
	if ev := text(screen[pipeline.StageEvidence]); !strings.Contains(ev, quote[:len(quote)-len("。")]) {
		t.Errorf("the quote is not shown whole in the evidence pane:\n%s", screen[pipeline.StageEvidence])
	}
	if c := text(screen[pipeline.StageCorrection]); !strings.Contains(c, japaneseWorld.lead) {
		t.Errorf("the correction is not shown whole:\n%s", screen[pipeline.StageCorrection])
	}
}

// TestCellsAsTmuxCounts: the widths are those tmux 3.3a gives (the
// cursor column after printing each string, measured with
// `tmux display -p '#{cursor_x}'`), where x/ansi differs on Devanagari.
func TestCellsAsTmuxCounts(t *testing.T) {
	for s, want := range map[string]int{
		"中文字幕视频": 12,
		"नमस्ते दुनिया क्षत्रिय":            17,
		"كَتَبَ الوَلَدُ":                   9,
		"👨‍👩‍👧 🇺🇦":                          5,
		fsi + "عربي" + pdi:                  4,
		"e\u0301":                           1,
		"\x1b[7mab\x1b[0m 中":                5,
		"\x1b]8;;x\x1b\\link\x1b]8;;\x1b\\": 4,
	} {
		if got := cells(s); got != want {
			t.Errorf("cells(%q) = %d, want %d", s, got, want)
		}
	}
	if ansi.StringWidth("नमस्ते दुनिया क्षत्रिय") == 17 {
		t.Log("x/ansi now counts Devanagari as tmux does")
	}
}

func TestTruncateKeepsCharactersWhole(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"中文字幕", "中…"},                                      // 2+1: the next ideograph does not fit in 1 cell
		{"e\u0301e\u0301e\u0301e\u0301", "e\u0301e\u0301…"}, // the accent stays on its letter
		{"👨‍👩‍👧👨‍👩‍👧", "👨‍👩‍👧…"},
		{"क्षत्रिय", "क्ष…"}, // क्ष 2 cells, त् 1: "…" would not fit after it
		{"abc", "abc"},
	} {
		w := 3
		if got := truncate(tc.in, w, "…"); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, w, got, tc.want)
		}
		if got := truncate(tc.in, w, "…"); cells(got) > w {
			t.Errorf("truncate(%q, %d) is %d cells", tc.in, w, cells(got))
		}
	}
	if got := truncate("\x1b[1m中文字幕\x1b[0m", 3, ""); got != "\x1b[1m中\x1b[0m" {
		t.Errorf("styles lost in a cut: %q", got)
	}
	if got := pad("中文", 6) + "|"; got != "中文  |" {
		t.Errorf("pad = %q", got)
	}
	if got := wrap("中文字幕视频 巴尔的摩", 5); got != "中文\n字幕\n视频\n巴尔\n的摩" {
		t.Errorf("wrap = %q", got)
	}
}

// firstStrong is the direction a bidi terminal gives a line (rule P2 of
// the Unicode bidi algorithm: the first strong letter outside isolates).
func firstStrong(s string) bidi.Class {
	depth := 0
	for _, r := range s {
		switch string(r) {
		case fsi:
			depth++
			continue
		case pdi:
			depth = max(depth-1, 0)
			continue
		}
		p, _ := bidi.LookupRune(r)
		if c := p.Class(); depth == 0 && (c == bidi.L || c == bidi.R || c == bidi.AL) {
			return c
		}
	}
	return bidi.ON
}

func TestIsolateRTL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"▸ [x] انهيار جسر بالتيمور (user)", "▸ [x] " + fsi + "انهيار جسر بالتيمور" + pdi + " (user)"},
		// digits between Arabic words belong to the run; a trailing "…"
		// stays outside it, at the line's end
		{"فيديو جنوة 2019 في… x", fsi + "فيديو جنوة 2019 في" + pdi + "… x"},
		{"▸ [x] فيديو جسر 2019 (user)", "▸ [x] " + fsi + "فيديو جسر 2019" + pdi + " (user)"},
		{"Reuters · الجزيرة · medium", "Reuters · " + fsi + "الجزيرة" + pdi + " · medium"},
		// styling inside a run does not split it
		{"\x1b[7m▸ عاجل: انهيار\x1b[0m", "\x1b[7m▸ " + fsi + "عاجل: انهيار" + pdi + "\x1b[0m"},
		{"שלום world", fsi + "שלום" + pdi + " world"},
		{"no RTL here 123", "no RTL here 123"},
	} {
		got := isolateRTL(tc.in)
		if got != tc.want {
			t.Errorf("isolateRTL(%q) =\n %q, want\n %q", tc.in, got, tc.want)
		}
		if cells(got) != cells(tc.in) {
			t.Errorf("isolating changed the width of %q", tc.in)
		}
		if strings.Count(got, fsi) != strings.Count(got, pdi) {
			t.Errorf("unbalanced isolates in %q", got)
		}
	}
	// A row that starts with its marks keeps its left-to-right layout on
	// a bidi terminal once isolated; not isolated, it would turn around.
	row := "▸ [ ] انهيار جسر بالتيمور (user)"
	if firstStrong(row) != bidi.AL || firstStrong(isolateRTL(row)) != bidi.L {
		t.Errorf("paragraph direction: %v before, %v after", firstStrong(row), firstStrong(isolateRTL(row)))
	}
}

// TestOutsideBidiControlsRemoved: a post's own override cannot reverse
// the rest of a row (Trojan Source): safe drops them, so the app's
// isolates are the only ones on screen.
func TestOutsideBidiControlsRemoved(t *testing.T) {
	m := finishedIn(t, 80, 24, pipeline.Post{Text: "Breaking \u202eevil\u202c news \u2067x\u2069 about the bridge video today"}, world{
		queries: []string{"bridge video"}, pages: englishWorld.pages[:1], lead: "This post is misleading. ", background: englishBackground}, NewStyles(true, false))
	v := m.View()
	for _, c := range []string{"\u202e", "\u202c", "\u2067"} {
		if strings.Contains(v, c) {
			t.Errorf("view keeps the post's bidi control %q", c)
		}
	}
	if strings.Contains(v, fsi) || strings.Contains(v, pdi) {
		t.Errorf("isolates in a view with no right-to-left text:\n%q", v)
	}
}

// TestFitFrameTrimsPadding: a line lipgloss padded from a short count
// (a Devanagari cell it counts as none) loses that padding, not text.
func TestFitFrameTrimsPadding(t *testing.T) {
	hi := "पुल गिरा" // 8 cells in tmux, 6 for lipgloss
	block := lipgloss.JoinHorizontal(lipgloss.Top, "ab", " │ ", lipgloss.NewStyle().Width(10).Render(hi))
	if cells(block) <= 15 && lipgloss.Width(block) == 15 {
		t.Skip("lipgloss counts Devanagari as the terminal does now")
	}
	got := fitFrame(block, 15)
	if cells(got) > 15 || !strings.Contains(got, hi) {
		t.Errorf("fitFrame(%q) = %q (%d cells)", block, got, cells(got))
	}
}

func TestComposeLanguage(t *testing.T) {
	m := newTestModel(t, 80, 24, newRunner(t))
	for in, want := range map[string]string{"": "", "Spanish": "es", "ES": "es", "pt-BR": "pt", "ara": "ar"} {
		m.compose.inputs[fieldLanguage].SetValue(in)
		c, err := m.compose.check(fixedNow)
		if err != nil || c.Post.Language != want {
			t.Errorf("language field %q: %q, %v; want %q", in, c.Post.Language, err, want)
		}
	}
	m.compose.inputs[fieldLanguage].SetValue("Klingonese")
	press(t, m, "ctrl+s")
	if m.screen != screenCompose || !strings.Contains(m.View(), `language: "Klingonese" is not a language`) {
		t.Errorf("a wrong language started the check or was not explained:\n%s", m.View())
	}
	// --language prefills the field, and the check carries it to the engine.
	r := newRunner(t)
	opts := testOptions(r)
	opts.Post.Language = "es"
	m = New(t.Context(), opts)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	press(t, m, "ctrl+s")
	if _, seen := r.runs(); len(seen) == 0 || seen[0].Post.Language != "es" {
		t.Fatalf("the engine did not get the checker's language")
	}
	if h := strings.Split(m.View(), "\n")[0]; !strings.Contains(h, "Spanish (es)") {
		t.Errorf("header lacks the language: %q", h)
	}
}

// TestLanguageKeyWritesQueriesAgain: t sets the language of a checked post
// and runs again from the queries, which the engine writes in it; a word
// that is not a language runs nothing.
func TestLanguageKeyWritesQueriesAgain(t *testing.T) {
	m, r := finished(t, 80, 24)
	if m.check.Post.Language != "en" {
		t.Fatalf("detected %q", m.check.Post.Language)
	}
	press(t, m, "t")
	if m.overlay != overlayPrompt || m.prompt.input.Value() != "en" {
		t.Fatalf("t did not ask for the language (overlay %v, %q)", m.overlay, m.prompt.input.Value())
	}
	m.prompt.input.SetValue("Portuguese")
	press(t, m, "enter")
	froms, seen := r.runs()
	if last := froms[len(froms)-1]; last != pipeline.StageQueries || seen[len(seen)-1].Post.Language != "pt" {
		t.Fatalf("ran from %s with language %q, want queries with pt", last, seen[len(seen)-1].Post.Language)
	}
	if m.check.Post.Language != "pt" || !strings.Contains(strings.Split(m.View(), "\n")[0]+" ", " pt ") {
		t.Errorf("language after the rerun: %q\n%s", m.check.Post.Language, m.View())
	}
	n := len(froms)
	press(t, m, "t")
	m.prompt.input.SetValue("Elvish")
	press(t, m, "enter")
	if froms, _ := r.runs(); len(froms) != n || m.check.Post.Language != "pt" || !strings.Contains(m.status, `"Elvish" is not a language`) {
		t.Errorf("a wrong language: %d runs (want %d), language %q, status %q", len(froms), n, m.check.Post.Language, m.status)
	}
	// Empty: the engine detects it again.
	press(t, m, "t")
	m.prompt.input.SetValue("")
	press(t, m, "enter")
	if _, seen := r.runs(); seen[len(seen)-1].Post.Language != "" || m.check.Post.Language != "en" {
		t.Errorf("empty did not leave the language to detection: sent %q, now %q", seen[len(seen)-1].Post.Language, m.check.Post.Language)
	}
}
