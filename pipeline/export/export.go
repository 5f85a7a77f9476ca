// Package export turns a Check into what a newsroom publishes: Markdown for
// editors, the Check as JSON, a Community Notes-ready note, and schema.org
// ClaimReview JSON-LD for fact-checkers who publish it. Exports read only
// the Check: no network, no store; Options.Secrets are redacted from
// every format.
package export

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/links"
	"github.com/musecheck/muse/sources/sanitize"
	"github.com/musecheck/muse/sources/video"
)

// Formats lists the export formats by the names the CLI and the TUI use.
var Formats = []string{"md", "json", "note", "note-json", "claimreview"}

// JSON is the Check as indented JSON with snake_case keys, URLs unescaped:
// the one JSON shape of a Check, which `muse check --json`, the app's and
// `muse cases export`'s json format all print (Check.ForOutput: without the
// pages' extracted text).
func JSON(c *pipeline.Check) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("export JSON: no check given")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c.ForOutput()); err != nil {
		return nil, fmt.Errorf("export JSON of case %s: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// Markdown renders the check for an editor: the correction (and whether a
// person edited it), the quotes it rests on with links and the date each
// page was read, the quotes left out (not found on their page, or
// unticked) and why, so what the model proposed is never hidden, every
// source with its tier and why it was used or not, the post, the queries
// and the cost.
func Markdown(c *pipeline.Check) string { return sanitize.String(markdown(c, true)) }

// Report is Markdown as `muse check` prints it: the same document.
func Report(c *pipeline.Check) string { return Markdown(c) }

func markdown(c *pipeline.Check, leftOut bool) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range c.FactChecks {
		b.WriteString(factCheckLine(f) + "\n\n")
	}
	b.WriteString("# Correction" + verdictHeading(c) + "\n\n")
	note := c.NotJudgedNote()
	if note != "" && !strings.HasPrefix(strings.TrimSpace(c.Correction.Text), pipeline.NotJudgedLead) {
		// Said before the correction: it rests on fewer pages than were found.
		b.WriteString("> **Not judged:** " + inline(note) + ".\n\n")
	}
	if c.Post.Language != "" {
		b.WriteString("_The post is in " + inline(lang.Label(c.Post.Language)) + "._\n\n")
	}
	if t := strings.TrimSpace(c.Correction.Text); t != "" {
		b.WriteString(correctionMarkdown(c, t) + "\n\n")
		var notes []string
		notes = append(notes, fmt.Sprintf("%d/%d characters as a note (each link counts as 1)", NoteLength(t), NoteLimit))
		if c.Correction.Edited {
			notes = append(notes, "edited by a person")
		} else if c.Correction.Model != "" {
			notes = append(notes, "written by "+inline(c.Correction.Model))
		}
		if c.NoLLM {
			notes = append(notes, "extractive digest made without a language model, not a verdict")
		}
		b.WriteString("_" + strings.Join(notes, "; ") + "._\n\n")
	} else {
		b.WriteString("_No correction was written._\n\n")
	}
	for _, w := range c.CorrectionWarnings() {
		b.WriteString("> **Warning:** " + inline(w) + "\n\n")
	}
	writeSupport(&b, c)
	writeClaims(&b, c)
	writeEvidence(&b, c)
	if leftOut {
		writeLeftOut(&b, c)
	}
	writeSources(&b, c)
	writePost(&b, c)
	if qs := c.EnabledQueries(); len(qs) > 0 {
		b.WriteString("## Searches\n\n")
		for _, q := range qs {
			b.WriteString("- " + inline(q) + "\n")
		}
		b.WriteString("\n")
	}
	u := c.Usage
	prompt := fmt.Sprintf("%d prompt", u.PromptTokens)
	if u.CachedPromptTokens > 0 {
		prompt = fmt.Sprintf("%d prompt tokens (%d of them from the server's prompt cache)", u.PromptTokens+u.CachedPromptTokens, u.CachedPromptTokens)
	}
	fmt.Fprintf(&b, "## Cost\n\n%d model calls, %s and %d completion tokens, %s, %.0f s.\n",
		u.LLMCalls, prompt, u.CompletionTokens, u.CostText(), u.Seconds)
	if line := c.EvidenceLine(); line != "" {
		b.WriteString("\n" + strings.ToUpper(line[:1]) + line[1:] + ".\n")
	}
	if c.ID != "" {
		fmt.Fprintf(&b, "\nCase %s, checked %s.\n", c.ID, day(c.CreatedAt))
	}
	return b.String()
}

// VerdictLine is the post's verdict and its claims' in one line:
// "Misleading (the correction's, within what the evidence allows); claim 1
// supported, claim 2 refuted".
func VerdictLine(v pipeline.Verdicts) string {
	s := v.Post.Label() + verdictBy(v.By)
	if len(v.Claims) > 1 {
		var parts []string
		for _, cv := range v.Claims {
			parts = append(parts, fmt.Sprintf("claim %d %s", cv.Claim, strings.ToLower(cv.Verdict.Label())))
		}
		s += "; " + strings.Join(parts, ", ")
	}
	return s
}

// verdictHeading ends the report's heading with the post's verdict: "—
// Refuted"; "" for the extractive digest, which has none.
func verdictHeading(c *pipeline.Check) string {
	v := c.Verdicts()
	if v.Post == "" {
		return ""
	}
	return " — " + v.Post.Label() + verdictBy(v.By)
}

// writeClaims lists the claims of a post that has several, each with its
// verdict.
func writeClaims(b *strings.Builder, c *pipeline.Check) {
	v := c.Verdicts()
	if len(v.Claims) < 2 {
		return
	}
	b.WriteString("## Claims\n\n")
	for _, cv := range v.Claims {
		fmt.Fprintf(b, "%d. %s — **%s**%s\n", cv.Claim, inline(cv.Text), cv.Verdict.Label(), verdictBy(cv.By))
	}
	b.WriteString("\n")
}

// verdictBy says who set a verdict, when it is not the evidence alone.
func verdictBy(by string) string {
	switch by {
	case pipeline.VerdictByChecker:
		return " (set by the checker)"
	case pipeline.VerdictByCorrection:
		return " (the correction's, within what the evidence allows)"
	}
	return ""
}

func writeEvidence(b *strings.Builder, c *pipeline.Check) {
	var ev []pipeline.Evidence
	for _, e := range c.Evidence {
		if e.Included {
			ev = append(ev, e)
		}
	}
	if len(ev) == 0 {
		return
	}
	b.WriteString("## Evidence\n\n")
	for _, e := range ev {
		src := c.SourceByURL(e.SourceURL)
		name, link, read := e.SourceURL, e.SourceURL, "date read unknown"
		if src != nil {
			name = src.Label()
			if !src.FetchedAt.IsZero() {
				read = "read " + day(src.FetchedAt)
			}
		}
		mark := ""
		if !e.Verified {
			mark = " (not found word for word in the page)"
		}
		if len(c.Claims) > 1 {
			mark = fmt.Sprintf(" (claim %d)", e.ClaimOf()) + mark
		}
		fmt.Fprintf(b, "- **%s**%s: “%s” — %s, %s\n", e.Kind, mark, inline(e.Quote), mdLink(inline(name), link), read)
	}
	b.WriteString("\n")
}

// writeLeftOut lists the quotes the correction does not rest on, each with
// why it was left out.
func writeLeftOut(b *strings.Builder, c *pipeline.Check) {
	var ev []pipeline.Evidence
	for _, e := range c.Evidence {
		if !e.Included {
			ev = append(ev, e)
		}
	}
	if len(ev) == 0 {
		return
	}
	b.WriteString("## Left out\n\n")
	for _, e := range ev {
		name := e.SourceURL
		if src := c.SourceByURL(e.SourceURL); src != nil {
			name = src.Label()
		}
		why := "left out by you"
		if !e.Verified {
			why = "not found on the page"
		}
		if e.Reason != "" {
			why += ": " + e.Reason
		}
		fmt.Fprintf(b, "- **%s**: “%s” — %s; %s\n", e.Kind, inline(e.Quote), mdLink(inline(name), e.SourceURL), inline(why))
	}
	b.WriteString("\n")
}

func writeSources(b *strings.Builder, c *pipeline.Check) {
	if len(c.Sources) == 0 {
		return
	}
	srcs := slices.Clone(c.Sources)
	used := func(s pipeline.Source) bool {
		return s.Status == pipeline.StatusUsed || s.Status == pipeline.StatusBoosted
	}
	// Used pages first; otherwise keep the engine's ranking.
	slices.SortStableFunc(srcs, func(x, y pipeline.Source) int {
		if used(x) == used(y) {
			return 0
		}
		if used(x) {
			return -1
		}
		return 1
	})
	b.WriteString("## Sources\n\n")
	// What became of the search, from the check's accounting.
	b.WriteString("_" + inline(c.Account().Summary) + "._\n\n")
	if o := c.OriginsSummary(); o != "" {
		b.WriteString("_Quoted: " + inline(o) + "._\n\n")
	}
	for _, s := range srcs {
		title := cmp.Or(s.Title, s.Label())
		fmt.Fprintf(b, "- %s — %s", mdLink(inline(title), cmp.Or(s.FinalURL, s.URL)), inline(s.Label()))
		tier := cmp.Or(s.Tier, pipeline.TierUnrated)
		fmt.Fprintf(b, "; %s tier", tier)
		if s.Factuality != "" || s.Bias != "" {
			fmt.Fprintf(b, " (factuality %s, bias %s)", cmp.Or(s.Factuality, "unknown"), cmp.Or(s.Bias, "unknown"))
		}
		fmt.Fprintf(b, "; %s", strings.ReplaceAll(string(cmp.Or(s.Status, "unknown")), "_", " "))
		if s.Reason != "" {
			fmt.Fprintf(b, ": %s", inline(s.Reason))
		}
		if s.Sent != nil && !s.Sent.Whole {
			fmt.Fprintf(b, "; the model was shown %s", s.Sent.Part())
		}
		if !s.Published.IsZero() {
			fmt.Fprintf(b, "; published %s", day(s.Published))
		} else if !s.PublishedPartial.IsZero() {
			fmt.Fprintf(b, "; published %s (no day stated)", s.PublishedPartial)
		}
		if !s.FetchedAt.IsZero() {
			fmt.Fprintf(b, "; read %s", day(s.FetchedAt))
		}
		if f := s.FlagsText(); f != "" {
			fmt.Fprintf(b, "; **flagged:** %s", inline(f))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writePost(b *strings.Builder, c *pipeline.Check) {
	b.WriteString("## Post\n\n")
	// The post is quoted as text: its links defanged, its markup escaped.
	for _, line := range strings.Split(strings.TrimSpace(c.Post.Text), "\n") {
		b.WriteString(strings.TrimRight("> "+escapeMD(defangLinks(strings.TrimSpace(line))), " ") + "\n")
	}
	var who []string
	for _, s := range []string{c.Post.Author, c.Post.Handle, c.Post.Platform} {
		if s != "" {
			who = append(who, inline(s))
		}
	}
	if !c.Post.PostedAt.IsZero() {
		who = append(who, c.Post.PostedAt.Format("2006-01-02 15:04 MST"))
	}
	if c.Post.URL != "" {
		who = append(who, urlText(c.Post.URL))
	}
	if len(who) > 0 {
		b.WriteString("\n— " + strings.Join(who, ", ") + "\n")
	}
	// What the post points at is context, never the author's words.
	for i, it := range c.Post.Context {
		head := c.Post.ItemLabel(i)
		if w := it.Who(); w != "" {
			head += ", by " + w
		}
		if it.Excluded {
			head += " (left out by the checker)"
		}
		fmt.Fprintf(b, "\nContext — %s: %s", inline(head), inline(it.Body()))
		if it.URL != "" {
			b.WriteString(" (" + urlText(it.URL) + ")")
		}
		b.WriteString("\n")
	}
	for _, n := range c.Post.Notes {
		fmt.Fprintf(b, "\nNote: %s\n", inline(n))
	}
	for _, im := range c.Images {
		if d := cmp.Or(im.Description, im.Caption, im.AltText); d != "" {
			fmt.Fprintf(b, "\nImage %s: %s\n", inline(im.Source), inline(d))
		}
	}
	writeVideo(b, c.Video)
	b.WriteString("\n")
}

// writeVideo is the post's video as read: its keyframes with their times,
// the text on them and their captions, and what is said with its times;
// the person's description when they wrote one; why it was not read.
func writeVideo(b *strings.Builder, v *pipeline.Video) {
	if v == nil {
		return
	}
	fmt.Fprintf(b, "\nVideo %s", inline(v.Source))
	if v.Duration > 0 {
		fmt.Fprintf(b, " (%s)", video.Clock(seconds(v.Duration)))
	}
	b.WriteString(":\n")
	if v.Error != "" {
		fmt.Fprintf(b, "- not read: %s\n", inline(v.Error))
	}
	if v.Edited {
		fmt.Fprintf(b, "- described by the checker: %s\n", inline(v.Description))
	}
	for _, f := range v.Frames {
		var parts []string
		if f.Caption != "" {
			parts = append(parts, inline(f.Caption))
		}
		if f.OCR != "" {
			parts = append(parts, "text on screen: “"+inline(f.OCR)+"”")
		}
		if len(parts) == 0 {
			parts = append(parts, "nothing read")
		}
		fmt.Fprintf(b, "- at %s: %s\n", video.Clock(seconds(f.At)), strings.Join(parts, "; "))
	}
	for _, s := range v.Transcript {
		fmt.Fprintf(b, "- said at %s–%s: “%s”\n", video.Clock(seconds(s.Start)), video.Clock(seconds(s.End)), inline(s.Text))
	}
	if len(v.Transcript) == 0 && v.TranscriptNote != "" {
		fmt.Fprintf(b, "- sound: %s\n", inline(v.TranscriptNote))
	}
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// inline makes text safe inside one Markdown line: no line breaks, every
// link in it defanged (links.Defang: a renderer would autolink a bare
// URL), and the characters that would start a link, emphasis, an entity or
// HTML escaped.
func inline(s string) string {
	return escapeMD(defangLinks(strings.Join(strings.Fields(s), " ")))
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`, "`", "\\`", "<", `\<`, ">", `\>`, "&", `\&`)

// escapeMD escapes the characters of s that Markdown would read as markup
// in a line: links, emphasis, code, HTML and entities.
func escapeMD(s string) string { return mdEscaper.Replace(s) }

// defangLinks writes every link in s (sources/links) defanged, with its
// label: text is never a link.
func defangLinks(s string) string {
	var b strings.Builder
	last := 0
	for _, l := range links.Find(s) {
		if defanged(l.URL) {
			continue
		}
		b.WriteString(s[last:l.Start])
		if l.Label != "" {
			b.WriteString(l.Label + " ")
		}
		b.WriteString(links.Defang(l.URL))
		last = l.End
	}
	if last > 0 {
		s = b.String() + s[last:]
	}
	return defangRest(s)
}

// defanged says whether u is written defanged already ("hxxps://…"): no
// renderer follows it.
func defanged(u string) bool {
	u = strings.ToLower(u)
	return strings.HasPrefix(u, "hxxp") || strings.HasPrefix(u, "fxp")
}

// defangRest defangs what a renderer links that is no link to
// sources/links (a host under no public suffix, "www.anything").
func defangRest(s string) string {
	return reLinkable.ReplaceAllStringFunc(s, func(m string) string {
		if strings.EqualFold(m, "www.") {
			return m[:3] + "[.]"
		}
		return links.Defang(m)
	})
}

// reLinkable is what renderers autolink in text whatever follows it.
var reLinkable = regexp.MustCompile(`(?i)\b(?:https?|ftps?)://|\bwww\.`)

// pctUnsafe percent-encodes what may not stand in a Markdown autolink or
// link destination: blanks, control characters, "<", ">", quotes, the
// backquote, the backslash and every byte outside ASCII. A browser encodes
// them the same way, so the
// URL is the one given.
func pctUnsafe(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c <= ' ' || c >= 0x7f || strings.IndexByte(`<>"'\`+"`", c) >= 0:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mdDest is u written as a Markdown link destination: encoded (pctUnsafe),
// with the parentheses that would end it escaped and "&" written as the
// entity, so that what follows it is never read as one.
func mdDest(u string) string {
	return strings.NewReplacer("(", `\(`, ")", `\)`, "&", `&amp;`).Replace(pctUnsafe(u))
}

// mdLink is a Markdown link with label (already escaped) to u when u is
// an http(s) URL; any other URL (javascript:, data:, a relative one) is
// no link: the label is followed by the URL defanged.
func mdLink(label, u string) string {
	if !isHTTPURL(u) {
		return label + " (" + inline(u) + ")"
	}
	return "[" + label + "](" + mdDest(u) + ")"
}

// urlText is u on its own: an autolink when it is an http(s) URL,
// defanged text otherwise.
func urlText(u string) string {
	if !isHTTPURL(u) {
		return inline(u)
	}
	return "<" + pctUnsafe(u) + ">"
}

// factCheckLine announces a fact-check, its page linked when its reviewer
// is verified.
func factCheckLine(f pipeline.FactCheck) string {
	u := f.URL
	s := inline(strings.TrimSuffix(f.String(), " ("+u+")"))
	switch {
	case u == "":
	case f.ReviewerVerified:
		s += " (" + urlText(u) + ")"
	default:
		s += " (" + inline(u) + ")" // not a page muse vouches for: no link
	}
	return s
}

// ownURL is the http(s) URL of the check's page that u links to, as the
// check holds it; "" when u links to no page of the check.
func ownURL(c *pipeline.Check, u string) string {
	src := c.SourceByURL(u)
	if src == nil {
		return ""
	}
	own := src.URL
	if sources.Key(own) != sources.Key(u) {
		own = src.FinalURL
	}
	if !isHTTPURL(own) {
		return ""
	}
	return own
}

// correctionMarkdown writes the correction as Markdown: its lines escaped
// as text, and its links to the check's own http(s) sources kept as links
// (a bare URL as an autolink, a Markdown one with its label); any other
// link is written defanged, as text.
func correctionMarkdown(c *pipeline.Check, t string) string {
	lines := strings.Split(t, "\n")
	for i, line := range lines {
		var b strings.Builder
		last := 0
		for _, l := range links.Find(line) {
			b.WriteString(escapeMD(defangRest(line[last:l.Start])))
			last = l.End
			label := strings.Join(strings.Fields(l.Label), " ")
			u := ownURL(c, l.URL)
			switch {
			case u == "":
				if label != "" {
					b.WriteString(inline(label) + " ")
				}
				b.WriteString(escapeMD(links.Defang(l.URL)))
			case label != "" && !strings.HasPrefix(line[l.Start:], "!"):
				b.WriteString(mdLink(inline(label), u))
			default:
				b.WriteString(urlText(u))
			}
		}
		b.WriteString(escapeMD(defangRest(line[last:])))
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}

func day(t time.Time) string { return t.Format(time.DateOnly) }

// Options picks an export format for Render; Reviewer and Rating are used
// by "claimreview" only.
type Options struct {
	Format   string // one of Formats
	Reviewer Reviewer
	Rating   Rating
	// Secrets are replaced by "[redacted]" in the export (sources.Redactor):
	// a key a model echoed into the correction never reaches a file.
	Secrets []string
	// Versions are the correction's versions the case keeps, oldest
	// first; the JSON export carries them as "versions".
	Versions []Version
	// LinkClient, when set, fetches every link of a "note-json" export
	// (LivePreflight): the safe fetcher's client.
	LinkClient *http.Client
}

// Version is one version of the correction, as the case keeps it: the
// model's draft or a person's edit.
type Version struct {
	Time   time.Time `json:"time"`
	Text   string    `json:"text"`
	Edited bool      `json:"edited"` // a person wrote or changed it
	By     string    `json:"by,omitempty"`
}

// Render exports the check in o.Format, so the CLI and the TUI share one
// switch. Text formats end with a newline.
func Render(c *pipeline.Check, o Options) ([]byte, error) {
	b, err := render(c, o)
	return sources.NewRedactor(o.Secrets...).Bytes(b), err
}

func render(c *pipeline.Check, o Options) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("export %s: no check given", o.Format)
	}
	switch strings.ToLower(strings.TrimSpace(o.Format)) {
	case "md", "markdown":
		return []byte(Markdown(c)), nil
	case "json":
		return jsonWithVersions(c, o.Versions)
	case "note":
		n, err := Note(c)
		if err != nil {
			return nil, err
		}
		return []byte(n + "\n"), nil
	case "note-json":
		return noteJSON(NoteFor(context.Background(), c, o.LinkClient))
	case "claimreview":
		return ClaimReview(c, o.Reviewer, o.Rating)
	case "pack":
		return nil, fmt.Errorf("export: a pack is a zip made with the case's page snapshots (Pack; muse cases export ID --format pack -o FILE)")
	default:
		return nil, fmt.Errorf("export: unknown format %q; use one of %s", o.Format, strings.Join(Formats, ", "))
	}
}

// jsonWithVersions is the Check's JSON with the correction's versions
// beside its fields, as "versions" (the Check alone when there are none).
func jsonWithVersions(c *pipeline.Check, vs []Version) ([]byte, error) {
	b, err := JSON(c)
	if err != nil || len(vs) == 0 {
		return b, err
	}
	out, err := withKey(b, "versions", vs)
	if err != nil {
		return nil, fmt.Errorf("export JSON of case %s: versions: %w", c.ID, err)
	}
	return out, nil
}

// noteJSON is a NoteDoc as indented JSON, URLs unescaped.
func noteJSON(d NoteDoc) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("export note JSON: %w", err)
	}
	return b.Bytes(), nil
}

// writeSupport lists each sentence of the correction with what the quotes
// it cites say of it (pipeline.Check.SupportMap).
func writeSupport(b *strings.Builder, c *pipeline.Check) {
	sm := c.SupportMap()
	if len(sm) == 0 {
		return
	}
	b.WriteString("**Support:** each sentence against the quotes it cites (✓ supported, ◐ partly, ✗ unsupported, ○ uncited, ? not judged by a model).\n\n")
	for _, s := range sm {
		fmt.Fprintf(b, "%d. %s %s — %s\n", s.N, pipeline.SupportMark(s.Status), inline(Clip(s.Text, 80)), inline(s.Line()))
	}
	b.WriteString("\n")
}
