package extract

import (
	"fmt"
	"strings"
	"testing"
)

// TestDatesNativeForms reads pages dated only in their visible text, as
// pages in Japanese, Chinese, Korean, Thai, Bengali, Greek, Arabic and Hindi
// print dates: era years, Buddhist-era years, year-month-day with 年, and
// full-width, Thai, Bengali, Devanagari digits, a Hijri date beside the
// Gregorian one. A date in no calendar muse can convert for sure (a Hijri
// date alone) is left alone, never misdated.
func TestDatesNativeForms(t *testing.T) {
	body := "<p>" + strings.Repeat("本文の段落です。政府はこの主張を否定した。 ", 20) + "</p>"
	for _, c := range []struct{ lang, byline string }{
		{"ja", "公開日：2023年2月14日"},
		{"ja", "令和5年2月14日 9時30分"},
		{"ja", "公開日：２０２３年２月１４日"},
		{"ja", "令和５年２月１４日"},
		{"zh", "发布时间：2023年2月14日"},
		{"ko", "입력 2023년 2월 14일"},
		{"ko", "2023.02.14 09:30"},
		{"th", "14 กุมภาพันธ์ 2566"},
		{"th", "14 ก.พ. 2566"},
		{"th", "๑๔ กุมภาพันธ์ ๒๕๖๖"},
		{"th", "14 กุมภาพันธ์ 2023"},
		{"bn", "প্রকাশিত: ১৪ ফেব্রুয়ারি ২০২৩"},
		{"el", "Δημοσιεύθηκε: 14 Φεβρουαρίου 2023"},
		{"ar", "الثلاثاء 23 رجب 1444 هـ الموافق 14 فبراير 2023"},
		{"ar", "23 رجب 1444 هـ"},
		{"ar", "الثلاثاء الموافق 14 فبراير 2023"},
		{"ar", "الموافق 14 فبراير 2023"},
		{"ar", "الثلاثاء 14 فبراير 2023"},
		{"ar", "14 فبراير 2023 الموافق 23 رجب 1444 هـ"},
		{"hi", "१४ फ़रवरी २०२३"},
	} {
		page := fmt.Sprintf(`<!DOCTYPE html><html lang="%s"><head><meta charset="utf-8"><title>記事</title></head><body><main><article><h1>記事の見出し</h1><p class="byline">%s</p>%s</article></main></body></html>`, c.lang, c.byline, body)
		a, err := Options{Now: testNow}.Extract([]byte(page), "")
		if err != nil {
			t.Fatal(err)
		}
		want := "2023-02-14"
		if strings.HasSuffix(c.byline, "هـ") && !strings.Contains(c.byline, "2023") {
			want = ""
		}
		if got := day(a.Published); got != want {
			t.Errorf("%s %q: published %q, want %q", c.lang, c.byline, got, want)
		}
	}
}
