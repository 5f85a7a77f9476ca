package sources

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// dateLayouts are the absolute date forms pages and APIs write: ISO 8601
// with and without zone, seconds and fractions (JSON-LD, meta tags,
// SearXNG, Brave, Mastodon), bare days, HTTP dates (RFC 1123), and the
// English "Jan 2, 2006" / "2 January 2006" forms that search engines show
// beside a result and X's embed shows under a post.
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z0700",
	"2006-01-02 15:04:05",
	"2006-01-02",
	time.RFC1123Z,
	time.RFC1123,
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Jan 2, 2006",
	"January 2, 2006",
	"2 Jan 2006",
	"2 January 2006",
}

// ParseDate reads a date as a page or an API writes it (see dateLayouts),
// giving the zero time when s is empty or in no known form: a missing date
// is common and never an error. A form without a zone is read as UTC; digits
// of any script are read as ASCII ones.
func ParseDate(s string) time.Time {
	s = strings.TrimSpace(FoldDigits(s))
	if s == "" {
		return time.Time{}
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// RetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number of
// seconds, or an HTTP date counted from now (a date already past is no
// wait). ok is false when the header is absent or unreadable, so a caller
// can fall back to its service's own rate-limit headers. The wait is at
// most MaxRetryAfter.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		// Compared in seconds: multiplying first overflows a Duration
		// (10000000000 s wrapped into a negative wait, read as "no wait").
		if secs > int(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(0, t.Sub(now)), MaxRetryAfter), true
	}
	return 0, false
}

// MaxRetryAfter caps the wait RetryAfter reports. A server asking for more
// than a day is not asking for a retry any caller would make (every caller
// bounds its own wait far below this), and the cap keeps the sum of a wait
// and the time already spent from overflowing.
const MaxRetryAfter = 24 * time.Hour

// Pages print dates as their readers write them: in their own digits
// (٢٠٢٣, ২০২৩, ２０２３), by Japan's era (令和5年2月14日), by the Thai
// Buddhist era (14 กุมภาพันธ์ 2566), in the CJK year-month-day form
// (2023年2月14日), and on Arabic pages beside a Hijri date (23 رجب 1444 هـ).
// NativeDates rewrites those as ISO dates (2023-02-14), and blanks the Hijri
// ones, so that a date search that knows Western digits and the Gregorian
// calendar reads them right rather than wrong: go-htmldate read "令和5年2月14日"
// as 2014-05-02 and "2023年2月14日" as 2023-01-01. A date it cannot convert
// for sure (an era year out of its era's range) is left as it is.
// Digits are folded to ASCII only inside the dates rewritten.
func NativeDates(s string) (string, bool) {
	if strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) < 0 {
		return s, false // English and other ASCII text: nothing to rewrite
	}
	changed := false
	iso := func(y, m, d int) (string, bool) {
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		if t.Year() != y || int(t.Month()) != m || t.Day() != d {
			return "", false // 2月30日
		}
		return t.Format(time.DateOnly), true
	}
	rewrite := func(re *regexp.Regexp, conv func(g []string) (string, bool)) {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			g := re.FindStringSubmatch(m)
			for i := range g {
				g[i] = FoldDigits(g[i])
			}
			if out, ok := conv(g); ok {
				changed = true
				return out
			}
			return m
		})
	}
	rewrite(eraDate, func(g []string) (string, bool) {
		n := 1
		if g[2] != "元" {
			n, _ = strconv.Atoi(g[2])
		}
		era := eras[g[1]]
		m, _ := strconv.Atoi(g[3])
		d, _ := strconv.Atoi(g[4])
		out, ok := iso(era.start.Year()-1+n, m, d)
		if t, _ := time.Parse(time.DateOnly, out); !ok || t.Before(era.start) || !era.end.IsZero() && t.After(era.end) {
			return "", false
		}
		return out, true
	})
	rewrite(cjkDate, func(g []string) (string, bool) {
		y, _ := strconv.Atoi(g[1])
		m, _ := strconv.Atoi(g[2])
		d, _ := strconv.Atoi(g[3])
		return iso(y, m, d)
	})
	rewrite(thaiDate, func(g []string) (string, bool) {
		d, _ := strconv.Atoi(g[1])
		y, _ := strconv.Atoi(g[3])
		if y >= 2400 { // the Buddhist era: 543 years ahead
			y -= 543
		}
		return iso(y, thaiMonths[g[2]], d)
	})
	rewrite(hijriDate, func(g []string) (string, bool) { return strings.Repeat(" ", utf8.RuneCountInString(g[0])), true })
	rewrite(arabicDate, func(g []string) (string, bool) {
		d, _ := strconv.Atoi(g[1])
		y, _ := strconv.Atoi(g[3])
		return iso(y, arabicMonths[strings.Join(strings.Fields(g[2]), " ")], d)
	})
	return s, changed
}

// FoldDigits writes every decimal digit of s (Arabic-Indic, Persian,
// Devanagari, Bengali, Thai, full-width…: Unicode's Nd) as its ASCII digit.
func FoldDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 || !unicode.IsDigit(r) {
			return r
		}
		for _, z := range digitZeros {
			if r >= z && r <= z+9 {
				return '0' + r - z
			}
		}
		return r
	}, s)
}

// digitZeros are the zeros of the scripts' decimal digits (each run of ten
// is contiguous in Unicode).
var digitZeros = []rune{'٠', '۰', '߀', '०', '০', '੦', '૦', '୦', '௦', '౦', '೦', '൦', '෦', '๐', '໐', '༠', '၀', '႐', '០', '᠐', '０'}

const anyDigit = `[\p{Nd}]`

var (
	eraDate    = regexp.MustCompile(`(令和|平成|昭和)\s*(元|` + anyDigit + `{1,2})\s*年\s*(` + anyDigit + `{1,2})\s*月\s*(` + anyDigit + `{1,2})\s*日`)
	cjkDate    = regexp.MustCompile(`(` + anyDigit + `{4})\s*[年년]\s*(` + anyDigit + `{1,2})\s*[月월]\s*(` + anyDigit + `{1,2})\s*[日일]`)
	thaiDate   = regexp.MustCompile(`(` + anyDigit + `{1,2})\s*(` + monthPattern(thaiMonths, " ") + `)\s*(?:พ\.ศ\.\s*|ค\.ศ\.\s*)?(` + anyDigit + `{4})`)
	arabicDate = regexp.MustCompile(`(` + anyDigit + `{1,2})\s+(` + monthPattern(arabicMonths, `\s+`) + `)\s+(` + anyDigit + `{4})`)
	hijriDate  = regexp.MustCompile(`(?:` + anyDigit + `{1,2}\s+)?(?:محرم|صفر|ربيع\s+(?:الأول|الآخر|الثاني)|جمادى\s+(?:الأولى|الآخرة|الثانية)|رجب|شعبان|رمضان|شوال|ذو\s+القعدة|ذو\s+الحجة)\s+` + anyDigit + `{4}\s*(?:هـ|ه)`)
)

// arabicMonths are the Gregorian months as Arabic pages name them: the
// Egyptian and Gulf names and the Levantine ones.
var arabicMonths = func() map[string]int {
	m := map[string]int{}
	for i, names := range [][]string{{"يناير", "كانون الثاني"}, {"فبراير", "شباط"}, {"مارس", "آذار"}, {"أبريل", "ابريل", "إبريل", "نيسان"},
		{"مايو", "أيار"}, {"يونيو", "حزيران"}, {"يوليو", "تموز"}, {"أغسطس", "اغسطس", "آب"}, {"سبتمبر", "أيلول"},
		{"أكتوبر", "اكتوبر", "تشرين الأول"}, {"نوفمبر", "تشرين الثاني"}, {"ديسمبر", "كانون الأول"}} {
		for _, n := range names {
			m[n] = i + 1
		}
	}
	return m
}()

// eras are the Japanese eras whose years pages print, from their first day
// (the first year is 元年, "year one").
var eras = map[string]struct{ start, end time.Time }{
	"令和": {start: time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)},
	"平成": {start: time.Date(1989, 1, 8, 0, 0, 0, 0, time.UTC), end: time.Date(2019, 4, 30, 0, 0, 0, 0, time.UTC)},
	"昭和": {start: time.Date(1926, 12, 25, 0, 0, 0, 0, time.UTC), end: time.Date(1989, 1, 7, 0, 0, 0, 0, time.UTC)},
}

// thaiMonths are the Thai month names, full and abbreviated.
var thaiMonths = func() map[string]int {
	m := map[string]int{}
	for i, names := range [][2]string{{"มกราคม", "ม.ค."}, {"กุมภาพันธ์", "ก.พ."}, {"มีนาคม", "มี.ค."}, {"เมษายน", "เม.ย."},
		{"พฤษภาคม", "พ.ค."}, {"มิถุนายน", "มิ.ย."}, {"กรกฎาคม", "ก.ค."}, {"สิงหาคม", "ส.ค."}, {"กันยายน", "ก.ย."},
		{"ตุลาคม", "ต.ค."}, {"พฤศจิกายน", "พ.ย."}, {"ธันวาคม", "ธ.ค."}} {
		m[names[0]], m[names[1]] = i+1, i+1
	}
	return m
}()

// monthPattern matches any of months' names, the longest first, with
// space standing for the spaces inside a name.
func monthPattern(months map[string]int, space string) string {
	var alts []string
	for name := range months {
		alts = append(alts, strings.ReplaceAll(regexp.QuoteMeta(name), " ", space))
	}
	sort.Slice(alts, func(i, j int) bool { return len(alts[i]) > len(alts[j]) })
	return strings.Join(alts, "|")
}

// PartialDate is a date known only to its year, or to its year and month:
// what a page states when it gives no day ("since 2008", "03/2020"). It is
// written in ISO 8601's reduced precision, "2008" or "2008-03", never as a
// day, so that nothing reads it as the first of the month or of the year,
// and it has no order with times: it is shown, not compared. The zero
// value is no date.
type PartialDate struct {
	Year  int
	Month time.Month // 0 when only the year is known
}

// IsZero reports whether p holds no date.
func (p PartialDate) IsZero() bool { return p.Year == 0 }

// String is p in ISO 8601 reduced precision ("2008", "2008-03"), "" when
// zero.
func (p PartialDate) String() string {
	switch {
	case p.IsZero():
		return ""
	case p.Month == 0:
		return fmt.Sprintf("%04d", p.Year)
	}
	return fmt.Sprintf("%04d-%02d", p.Year, int(p.Month))
}

// MarshalText writes p as String does.
func (p PartialDate) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads "YYYY" or "YYYY-MM"; an empty text is the zero date.
func (p *PartialDate) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		*p = PartialDate{}
		return nil
	}
	if t, err := time.Parse("2006-01", s); err == nil {
		*p = PartialDate{Year: t.Year(), Month: t.Month()}
		return nil
	}
	t, err := time.Parse("2006", s)
	if err != nil {
		return fmt.Errorf("partial date %q: want YYYY or YYYY-MM", s)
	}
	*p = PartialDate{Year: t.Year()}
	return nil
}
