package extract

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	dps "github.com/markusmobius/go-dateparser"

	"github.com/musecheck/muse/sources"
)

// precision is how much of a date the page states.
type precision int

const (
	precYear precision = iota
	precMonth
	precDay
)

// statedPrecision is how much of t, go-htmldate's answer, the text src it
// read it from states. go-htmldate answers with a day even when the page
// gives less: a copyright line or "since 2008" becomes 2008-01-01, "03/2020"
// 2020-03-01, and go-dateparser fills a missing day or month from the
// current date. Its Result keeps the text it read (SrcString), and the day
// is stated only when that text writes t's day next to its month and year:
// numerically (2008-03-14, 14.03.2008, 3/14/2008, 20080314, a URL's
// /2008/03/14/, a Unix timestamp), or in words that go-dateparser reads as
// that day ("14. März 2008", "March 14th, 2008"). The month is stated
// when the text writes t's year and month as numbers side by side (2008-03,
// 03/2008), or when go-dateparser, with cfg's languages, reads a short text
// as that month ("März 2008"). Anything less is the year. When in doubt
// this says less, never more.
func statedPrecision(src string, t time.Time, cfg *dps.Configuration) precision {
	src = sources.FoldDigits(src) // the tokens' offsets are into the folded text
	toks := dateTokens(src)
	y, m, d := t.Year(), int(t.Month()), t.Day()
	isYear := func(k dateToken, short bool) bool {
		return k.digits && (len(k.s) == 4 && k.n == y || short && len(k.s) == 2 && k.n == y%100)
	}
	isNum := func(k dateToken, v int) bool { return k.digits && len(k.s) <= 2 && k.n == v }
	// joined reports whether toks[i] and toks[i+1] are digits written
	// together as parts of one date: separated by a dash, dot or slash,
	// and perhaps a space ("2008-03", "4. 2.", "03/2020"), not a comma.
	joined := func(i int) bool {
		if i+1 >= len(toks) || !toks[i].digits || !toks[i+1].digits {
			return false
		}
		sep := toks[i+1].sep
		return len(sep) <= 3 && strings.ContainsAny(sep, "-./") && strings.Trim(sep, "-./ ") == ""
	}
	month := false
	for i, k := range toks {
		if k.digits && (len(k.s) >= 8 && k.s[:8] == t.Format("20060102") || unixOnDay(k, t)) {
			return precDay
		}
		if joined(i) && joined(i+1) {
			a, b, c := k, toks[i+1], toks[i+2]
			if isYear(a, false) && isNum(b, m) && isNum(c, d) || // 2008-03-14
				isNum(a, d) && isNum(b, m) && isYear(c, true) || // 14.03.2008, 14.03.08
				isNum(a, m) && isNum(b, d) && isYear(c, true) { // 3/14/2008
				return precDay
			}
		}
		if isNum(k, d) && inWords(src, toks, i, t, cfg) {
			return precDay
		}
		if joined(i) && (isYear(k, false) && isNum(toks[i+1], m) || isNum(k, m) && isYear(toks[i+1], false)) {
			month = true
		}
	}
	if month || monthInWords(src, toks, t, cfg) {
		return precMonth
	}
	return precYear
}

// monthInWords reports whether go-dateparser reads a word and t's year
// written after it in toks ("März 2008", "Published March 2008") as t's
// month. cfg gives the languages (nil: go-dateparser's own).
func monthInWords(src string, toks []dateToken, t time.Time, cfg *dps.Configuration) bool {
	year := strconv.Itoa(t.Year())
	for j := 1; j < len(toks); j++ {
		if !toks[j].digits || toks[j].s != year || toks[j-1].digits {
			continue
		}
		c := &dps.Configuration{RequiredParts: []string{"month", "year"}, CurrentTime: t}
		if cfg != nil {
			c.Languages = cfg.Languages
		}
		d, err := dps.Parse(c, src[toks[j-1].at:toks[j].at+4])
		if err == nil && !d.IsZero() && d.Time.Year() == t.Year() && d.Time.Month() == t.Month() {
			return true
		}
	}
	return false
}

// dateToken is a run of digits or of letters in a date's text, with the
// other characters (sep) between it and the token before.
type dateToken struct {
	s, sep string
	at     int // the byte offset of s in the text
	digits bool
	n      int // the value of a run of digits
}

func dateTokens(s string) []dateToken {
	var toks []dateToken
	sepStart := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		digit, letter := r >= '0' && r <= '9', isLetter(r)
		if !digit && !letter {
			i += size
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if digit && !(r >= '0' && r <= '9') || !digit && !isLetter(r) {
				break
			}
			j += n
		}
		k := dateToken{s: s[i:j], sep: s[sepStart:i], at: i, digits: digit}
		if digit {
			k.n, _ = strconv.Atoi(k.s[:min(len(k.s), 9)])
		}
		toks = append(toks, k)
		i, sepStart = j, j
	}
	return toks
}

// inWords reports whether the day number toks[i] begins, or follows the
// first word of, a date written in words that go-dateparser reads as t's
// day: "14. März 2008", "March 14th, 2008", "Le 11 septembre 2018". The
// year must follow within a few tokens; a year run into the next date's
// digits ("28. Juni 201914. Januar 2020") counts by its first four.
func inWords(src string, toks []dateToken, i int, t time.Time, cfg *dps.Configuration) bool {
	year := strconv.Itoa(t.Year())
	for j := i + 1; j < min(len(toks), i+6); j++ {
		if !toks[j].digits || len(toks[j].s) < 4 || toks[j].s[:4] != year {
			continue
		}
		c := &dps.Configuration{StrictParsing: true, IgnoreSurroundingText: true, CurrentTime: t}
		if cfg != nil {
			c.Languages = cfg.Languages
		}
		// The day first ("13. Januar 2014"), else the word before it too
		// ("March 14, 2008").
		for _, from := range []int{i, i - 1} {
			if from < 0 || from < i && toks[from].digits {
				continue
			}
			text := src[toks[from].at : toks[j].at+4]
			if k := toks[i+1]; !k.digits && k.sep == "" && utf8.RuneCountInString(k.s) <= 2 {
				// An ordinal suffix (16th, 1er) is dropped: "Dezember
				// 16th" mixes languages go-dateparser reads one at a time.
				text = src[toks[from].at:k.at] + src[k.at+len(k.s):toks[j].at+4]
			}
			d, err := dps.Parse(c, text)
			if err == nil && !d.IsZero() && d.Time.Format(time.DateOnly) == t.Format(time.DateOnly) {
				return true
			}
		}
		return false
	}
	return false
}

// unixOnDay reports whether k is a Unix timestamp, in seconds or
// milliseconds, that falls on t's day in some time zone (UTC-12 to UTC+14):
// go-htmldate reads those too (1507287600 is 2017-10-06).
func unixOnDay(k dateToken, t time.Time) bool {
	if !k.digits || len(k.s) != 10 && len(k.s) != 13 {
		return false
	}
	sec, err := strconv.ParseInt(k.s[:10], 10, 64)
	if err != nil {
		return false
	}
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	at := time.Unix(sec, 0)
	return !at.Before(day.Add(-14*time.Hour)) && at.Before(day.Add(36*time.Hour))
}

// isLetter counts the marks that scripts write on their letters (the nukta
// of फ़रवरी) as part of a word.
func isLetter(r rune) bool { return unicode.IsLetter(r) || unicode.IsMark(r) }
