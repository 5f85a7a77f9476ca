package export

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
)

// PackFormat names the layout of an evidence pack in its manifest.
const PackFormat = "muse-evidence-pack/1"

// The members of an evidence pack (docs/exports.md describes the layout).
const (
	PackCorrection = "correction.md"
	PackCheck      = "check.json"
	PackManifest   = "manifest.json"
	PackTimestamp  = "manifest.json.tsr"
)

// PackPage is a page as muse read it and the case store keeps it
// (cases.Snapshot).
type PackPage struct {
	URL       string
	FinalURL  string
	FetchedAt time.Time
	Text      string // the extracted text
	HTML      []byte // the page as served; empty when only the text was kept
	// Header is the page's HTTP response headers as received; nil when
	// they were not kept.
	Header http.Header
}

// PackOptions are what an evidence pack holds besides the Check.
type PackOptions struct {
	// Options carries Secrets (redacted from every member) and Versions
	// (in check.json).
	Options
	// Pages are the case's page snapshots; a page the check does not rest
	// on is left out.
	Pages []PackPage
	// Stamp, when set, is asked for an RFC 3161 time-stamp of the
	// manifest's SHA-256 and returns the TimeStampResp (sources/tsa.Stamp).
	Stamp func(ctx context.Context, digest []byte) ([]byte, error)
	// TSA is the authority's URL, named in the manifest when Stamp is set.
	TSA string
	// Now is when the pack is made (time.Now when zero).
	Now time.Time
}

// Manifest is manifest.json: every other member with its SHA-256, and
// each page's address and read time.
type Manifest struct {
	Format string         `json:"format"`
	CaseID string         `json:"case_id"`
	Made   time.Time      `json:"made"`
	Files  []PackFile     `json:"files"`
	Pages  []ManifestPage `json:"pages"`
	// Missing are pages the check rests on that the case kept no
	// snapshot of (a case saved before snapshots were kept).
	Missing []string `json:"missing,omitempty"`
	// TSA is the time-stamping authority asked to stamp this file, when
	// one was; its answer is manifest.json.tsr.
	TSA string `json:"tsa,omitempty"`
}

// PackFile is one member of the pack and its SHA-256 (hex).
type PackFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// ManifestPage is one kept page: where it was read, when, and its files.
type ManifestPage struct {
	URL       string    `json:"url"`
	FinalURL  string    `json:"final_url,omitempty"`
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	// Quoted: the correction's evidence quotes this page (else the page
	// was only used or boosted).
	Quoted     bool   `json:"quoted"`
	Text       string `json:"text"`                  // member path
	TextSHA256 string `json:"text_sha256"`           //
	HTML       string `json:"html,omitempty"`        // member path; absent when only the text was kept
	HTMLSHA256 string `json:"html_sha256,omitempty"` //
	// Headers is the member with the page's HTTP response headers as
	// received (the wire format); absent when they were not kept.
	Headers       string `json:"headers,omitempty"`
	HeadersSHA256 string `json:"headers_sha256,omitempty"`
}

// Pack writes the evidence pack of c to w as one zip: the report as
// Markdown (correction.md), the Check's JSON with the kept pages' hashes
// (check.json, key "snapshots"), each page the check rests on as muse read
// it (pages/NNN/page.html, text.txt and headers.txt, the HTTP response
// headers as received), manifest.json with every member's
// SHA-256 and, when o.Stamp is set, manifest.json.tsr: the authority's
// RFC 3161 answer over the manifest's SHA-256. It returns the manifest.
func Pack(ctx context.Context, w io.Writer, c *pipeline.Check, o PackOptions) (*Manifest, error) {
	if c == nil {
		return nil, fmt.Errorf("export pack: no check given")
	}
	red := sources.NewRedactor(o.Secrets...)
	m := &Manifest{Format: PackFormat, CaseID: c.ID, Made: cmp.Or(o.Now, time.Now()).UTC().Truncate(time.Second)}
	type member struct {
		path string
		body []byte
		at   time.Time
	}
	var members []member
	add := func(path string, body []byte, at time.Time) string {
		body = red.Bytes(body)
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		members = append(members, member{path, body, cmp.Or(at, m.Made)})
		m.Files = append(m.Files, PackFile{Path: path, SHA256: h, Bytes: len(body)})
		return h
	}

	quoted, rests := packURLs(c)
	byURL := map[string]*PackPage{}
	for i := range o.Pages {
		p := &o.Pages[i]
		for _, u := range []string{p.URL, p.FinalURL} {
			if k := sources.Key(u); k != "" && byURL[k] == nil {
				byURL[k] = p
			}
		}
	}
	done := map[*PackPage]bool{}
	for _, u := range rests {
		p := byURL[sources.Key(u)]
		if p == nil {
			if src := c.SourceByURL(u); src != nil && src.FinalURL != "" {
				p = byURL[sources.Key(src.FinalURL)]
			}
		}
		if p == nil {
			m.Missing = append(m.Missing, u)
			continue
		}
		if done[p] {
			continue
		}
		done[p] = true
		dir := fmt.Sprintf("pages/%03d/", len(m.Pages)+1)
		mp := ManifestPage{URL: p.URL, FinalURL: p.FinalURL, FetchedAt: p.FetchedAt.UTC(), Quoted: quoted[sources.Key(u)], Text: dir + "text.txt"}
		mp.TextSHA256 = add(mp.Text, []byte(p.Text), p.FetchedAt)
		if len(p.HTML) > 0 {
			mp.HTML = dir + "page.html"
			mp.HTMLSHA256 = add(mp.HTML, p.HTML, p.FetchedAt)
		}
		if len(p.Header) > 0 {
			var hb bytes.Buffer
			if err := p.Header.Write(&hb); err != nil {
				return nil, fmt.Errorf("export pack of case %s: headers of %s: %w", c.ID, p.URL, err)
			}
			mp.Headers = dir + "headers.txt"
			mp.HeadersSHA256 = add(mp.Headers, hb.Bytes(), p.FetchedAt)
		}
		m.Pages = append(m.Pages, mp)
	}
	pagesFirst := members
	members = nil

	add(PackCorrection, []byte(Markdown(c)), time.Time{})
	js, err := jsonWithVersions(c, o.Versions)
	if err != nil {
		return nil, err
	}
	if js, err = withKey(js, "snapshots", m.Pages); err != nil {
		return nil, fmt.Errorf("export pack of case %s: %w", c.ID, err)
	}
	add(PackCheck, js, time.Time{})
	// The correction and the Check come first, then the pages.
	members = append(members, pagesFirst...)
	m.Files = slices.Concat(m.Files[len(pagesFirst):], m.Files[:len(pagesFirst)])
	if o.Stamp != nil {
		m.TSA = o.TSA
	}
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export pack of case %s: manifest: %w", c.ID, err)
	}
	man = append(man, '\n')
	members = append(members, member{PackManifest, man, m.Made})
	if o.Stamp != nil {
		sum := sha256.Sum256(man)
		tok, err := o.Stamp(ctx, sum[:])
		if err != nil {
			return nil, fmt.Errorf("export pack of case %s: %w", c.ID, err)
		}
		members = append(members, member{PackTimestamp, tok, m.Made})
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, mb := range members {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: mb.path, Method: zip.Deflate, Modified: mb.at.UTC()})
		if err == nil {
			_, err = f.Write(mb.body)
		}
		if err != nil {
			return nil, fmt.Errorf("export pack of case %s: %s: %w", c.ID, mb.path, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("export pack of case %s: %w", c.ID, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("export pack of case %s: %w", c.ID, err)
	}
	return m, nil
}

// packURLs returns the pages a pack keeps, in the order the check names
// them: each page quoted as evidence, then each source used or boosted
// (what cases.Snapshotter stores), and which of them are quoted, by
// sources.Key.
func packURLs(c *pipeline.Check) (quoted map[string]bool, urls []string) {
	quoted = map[string]bool{}
	seen := map[string]bool{}
	take := func(u string) {
		k := sources.Key(u)
		if u == "" || seen[k] {
			return
		}
		seen[k] = true
		urls = append(urls, u)
	}
	for _, e := range c.Evidence {
		quoted[sources.Key(e.SourceURL)] = true
		take(e.SourceURL)
	}
	for _, s := range c.Sources {
		if s.Status == pipeline.StatusUsed || s.Status == pipeline.StatusBoosted {
			take(s.URL)
		}
	}
	return quoted, slices.Clip(urls)
}

// withKey adds "key": v as the last field of the JSON object b (indented
// as JSON writes it).
func withKey(b []byte, key string, v any) ([]byte, error) {
	vb, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return nil, err
	}
	body := bytes.TrimRight(b, "\n")
	body = bytes.TrimSuffix(body, []byte("}"))
	body = bytes.TrimRight(body, "\n")
	return append(append(append(body, []byte(",\n  \""+key+"\": ")...), vb...), []byte("\n}\n")...), nil
}
