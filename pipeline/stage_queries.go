package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/lang"
)

// keyPhrases picks up to n search queries from a post without a model:
// its names and numbers as one query, and its most frequent content words
// in post order as another, each in the post's language.
func keyPhrases(p Text, n int) []string {
	post, code := p.Text, lang.Base(p.Lang)
	var out []string
	add := func(q string) {
		q = strings.TrimSpace(q)
		if q != "" && !slices.Contains(out, q) && len(out) < n {
			out = append(out, q)
		}
	}
	// Capitalised runs and numbers: names, places, figures. A sentence's
	// capitalised first word is a name only when something else says so
	// ("False positives…" is not about "False"): the next word is
	// capitalised too, it has a capital inside (NASA, McDonald), or the
	// post capitalises it again in mid-sentence.
	fields := strings.Fields(post)
	clean := make([]string, len(fields))
	initial := make([]bool, len(fields))
	midCaps := map[string]bool{}
	for i, f := range fields {
		clean[i] = strings.Trim(f, ".,;:!?\"'“”‘’()[]#")
		if i > 0 {
			prev := strings.TrimRight(fields[i-1], "\"'”’)]")
			last, _ := utf8.DecodeLastRuneInString(prev)
			initial[i] = strings.ContainsRune(".!?:…", last)
		} else {
			initial[i] = true
		}
		if w := clean[i]; w != "" && !initial[i] && unicode.IsUpper([]rune(w)[0]) {
			midCaps[strings.ToLower(w)] = true
		}
	}
	capitalised := func(i int) bool {
		return i < len(clean) && clean[i] != "" && unicode.IsUpper([]rune(clean[i])[0])
	}
	var names []string
	var run []string
	flush := func() {
		if n := strings.Join(run, " "); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
		run = nil
	}
	for i, f := range fields {
		w := clean[i]
		lw := strings.ToLower(w)
		if w == "" || strings.Contains(lw, "://") || strings.HasPrefix(w, "@") {
			flush()
			continue
		}
		r := []rune(w)
		name := unicode.IsUpper(r[0])
		if name && initial[i] {
			name = !isStop(lw, code) && (midCaps[lw] || strings.IndexFunc(string(r[1:]), unicode.IsUpper) >= 0 ||
				!strings.ContainsAny(f, ".,;:!?") && capitalised(i+1) && !isStop(strings.ToLower(clean[i+1]), code))
		}
		if name || isDigits(strings.ReplaceAll(w, ",", "")) {
			if !isStop(lw, code) {
				run = append(run, w)
			}
		} else {
			flush()
		}
		if strings.ContainsAny(f, ".,;:!?") {
			flush()
		}
	}
	flush()
	// Words are counted by stem and written as the post first wrote them:
	// a search engine is asked for words, not stems.
	surface := contentWords(post, code)
	ws := make([]string, len(surface))
	freq := map[string]int{}
	written := map[string]string{}
	for i, w := range surface {
		ws[i] = stem(w, code)
		freq[ws[i]]++
		if written[ws[i]] == "" {
			written[ws[i]] = w
		}
	}
	distinct := slices.Compact(slices.Clone(ws))
	seen := map[string]bool{}
	var uniq []string
	for _, w := range distinct {
		if !seen[w] {
			seen[w] = true
			uniq = append(uniq, w)
		}
	}
	top := slices.Clone(uniq)
	sort.SliceStable(top, func(a, b int) bool { return freq[top[a]] > freq[top[b]] })
	if len(top) > 8 {
		top = top[:8]
	}
	keep := termSet(top)
	var content []string
	for _, w := range uniq {
		if keep[w] {
			content = append(content, written[w])
		}
	}
	if len(names) > 0 {
		add(strings.Join(firstN(names, 6), " "))
	}
	add(strings.Join(content, " "))
	if len(uniq) > 8 {
		var first []string
		for _, w := range firstN(uniq, 8) {
			first = append(first, written[w])
		}
		add(strings.Join(first, " "))
	}
	return out
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// fallbackQuery is the post's own text made into one search query: URLs and
// handles dropped, cut to 32 words, which search engines still accept.
func fallbackQuery(post string) string {
	var keep []string
	for _, f := range strings.Fields(post) {
		lf := strings.ToLower(f)
		if strings.Contains(lf, "://") || strings.HasPrefix(lf, "www.") || strings.HasPrefix(f, "@") {
			continue
		}
		if !hasLetterOrDigit(f) {
			continue
		}
		keep = append(keep, f)
		if len(keep) == 32 {
			break
		}
	}
	return strings.Join(keep, " ")
}

func hasLetterOrDigit(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// queries writes the search queries. The person's own queries are kept;
// the model's are replaced.
func (r *run) queries(ctx context.Context) (int, error) {
	c := r.c
	r.detectLanguage()
	var kept []Query
	for _, q := range c.Queries {
		if q.Origin == OriginUser {
			kept = append(kept, q)
		}
	}
	c.Queries = kept
	n := 3
	if len(c.Images) > 0 || len(c.Post.Images) > 0 || promptVideo(c.Video) != "" {
		n = 5 // the paper asks for five when the post has images (a video's frames are images)
	}
	add := func(text, origin, code string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		for _, q := range c.Queries {
			if strings.EqualFold(q.Text, text) {
				return
			}
		}
		q := Query{Text: text, Origin: origin, Enabled: true, Language: code}
		c.Queries = append(c.Queries, q)
		r.item(StageQueries, q, "query added")
	}
	if r.e.opts.NoLLM {
		for _, q := range keyPhrases(postText(c), n) {
			add(q, OriginFallback, c.Post.Language)
		}
		return len(c.Queries), nil
	}
	var (
		qs, claims  []string
		informative bool
		u           CallUsage
		err         error
	)
	in := QueriesInput{Post: c.Post, Images: c.Images, Video: c.Video, N: n}
	if cm, ok := r.e.deps.Model.(ClaimsModel); ok {
		qs, claims, informative, u, err = cm.QueriesClaims(ctx, in)
	} else {
		qs, informative, u, err = r.e.deps.Model.Queries(ctx, in)
	}
	r.addUsage(StageQueries, u)
	if err == nil {
		r.setClaims(claims)
	}
	switch {
	case err != nil && errors.Is(err, ErrBadAnswer):
		r.warn(StageQueries, "the model's queries could not be used (%v); searching the post's own text", err)
		informative = false
	case err != nil:
		return 0, fmt.Errorf("write search queries: %w", err)
	}
	if informative {
		// A post in another language may have one query in English besides.
		limit := prompts.MaxQueries(promptPost(c.Post, nil, nil), n)
		for i, q := range qs {
			switch {
			case i >= n && i < limit:
				add(q, OriginModel, "en") // the one the prompt asks for in English
			case i < n:
				add(q, OriginModel, "")
			}
		}
	}
	if !informative || len(qs) == 0 {
		if err == nil {
			r.warn(StageQueries, "the model found the post not informative; searching the post's own text")
		}
		add(fallbackQuery(postForSearch(c)), OriginFallback, c.Post.Language)
	}
	if len(c.Queries) == 0 {
		r.warn(StageQueries, "the post has no words to search for")
	}
	return len(c.Queries), nil
}

func describedImages(ims []Image) int {
	n := 0
	for _, im := range ims {
		if strings.TrimSpace(im.Description) != "" {
			n++
		}
	}
	return n
}

// postForSearch is the post text with image descriptions and the context
// the checker kept, as the extractive mode and the fallback query see it.
func postForSearch(c *Check) string {
	parts := []string{c.Post.Text}
	if ctx := c.Post.contextForSearch(); ctx != "" {
		parts = append(parts, ctx)
	}
	for _, im := range c.Images {
		if d := imageNotes(im); d != "" {
			parts = append(parts, d)
		}
	}
	if d := promptVideo(c.Video); d != "" {
		parts = append(parts, d)
	}
	return strings.Join(parts, " ")
}

// detectLanguage sets the post's language, when the checker has not, from
// its text and the text read from its images, so the queries and the
// correction are written in it.
func (r *run) detectLanguage() {
	c := r.c
	if c.Post.Language != "" {
		return
	}
	text := c.Post.Text
	for _, im := range c.Images {
		text += "\n" + im.OCRText
	}
	text += "\n" + c.Video.text()
	d := lang.Detect(text)
	if d.Code == "" {
		return
	}
	c.Post.Language = d.Code
	r.emit(Event{Kind: EventProgress, Stage: StageQueries, Message: "the post is in " + lang.Label(d.Code)})
}
