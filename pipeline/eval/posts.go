package eval

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// Post is one post of a post set: the post, its ID, the corrections given
// with it by system name (people's notes, another tool's output), and for
// AVeriTeC the gold verdict and evidence URLs.
type Post struct {
	ID          string            `json:"id"`
	Post        pipeline.Post     `json:"post"`
	Corrections map[string]string `json:"corrections,omitempty"`
	GoldLabel   string            `json:"gold_label,omitempty"`
	GoldURLs    []string          `json:"gold_urls,omitempty"`
}

// jsonPost is one line of a JSONL post set.
type jsonPost struct {
	ID          any               `json:"id"`
	Text        string            `json:"text"`
	PostedAt    string            `json:"posted_at"`
	Author      string            `json:"author"`
	Handle      string            `json:"handle"`
	URL         string            `json:"url"`
	Language    string            `json:"language"`
	Corrections map[string]string `json:"corrections"`
}

// ReadPosts reads a post set: JSON Lines ({id, text, posted_at, author,
// handle, url, language, corrections: {system: text}}), a CSV with a header
// naming the same columns and a "correction:NAME" column per given system,
// or AVeriTeC's dev.json (a JSON array; claim date as the post's time).
func ReadPosts(path string) ([]Post, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(b)
	switch {
	case len(trimmed) == 0:
		return nil, fmt.Errorf("%s: no posts", path)
	case trimmed[0] == '[':
		return readAVeriTeC(trimmed)
	case strings.HasSuffix(strings.ToLower(path), ".csv"):
		return readCSV(bytes.NewReader(b))
	}
	return readJSONL(bytes.NewReader(b))
}

func readJSONL(r io.Reader) ([]Post, error) {
	var out []Post
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var jp jsonPost
		if err := json.Unmarshal(sc.Bytes(), &jp); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		id := strconv.Itoa(line)
		switch v := jp.ID.(type) {
		case string:
			id = v
		case float64:
			id = strconv.FormatFloat(v, 'f', -1, 64)
		}
		p, err := makePost(id, jp.Text, jp.PostedAt, jp.Author, jp.Handle, jp.URL, jp.Language)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		p.Corrections = jp.Corrections
		out = append(out, p)
	}
	return out, sc.Err()
}

func makePost(id, text, postedAt, author, handle, url, language string) (Post, error) {
	p := Post{ID: id, Post: pipeline.Post{Text: text, Author: author, Handle: handle, URL: url, Language: language}}
	if strings.TrimSpace(text) == "" && url == "" {
		return p, fmt.Errorf("post %s: %w", id, pipeline.ErrEmptyPost)
	}
	if postedAt != "" {
		t, err := pipeline.ParseTime(postedAt)
		if err != nil {
			return p, fmt.Errorf("post %s: posted_at: %w", id, err)
		}
		p.Post.PostedAt = t
	}
	return p, nil
}

func readCSV(r io.Reader) ([]Post, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, errors.New("the CSV has no posts under its header")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	if _, ok := col["text"]; !ok {
		return nil, errors.New(`the CSV has no "text" column`)
	}
	get := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return strings.TrimSpace(row[i])
		}
		return ""
	}
	var out []Post
	for n, row := range rows[1:] {
		id := get(row, "id")
		if id == "" {
			id = strconv.Itoa(n + 1)
		}
		p, err := makePost(id, get(row, "text"), get(row, "posted_at"), get(row, "author"), get(row, "handle"), get(row, "url"), get(row, "language"))
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", n+2, err)
		}
		for name, i := range col {
			if sys, ok := strings.CutPrefix(name, "correction:"); ok && i < len(row) && strings.TrimSpace(row[i]) != "" {
				if p.Corrections == nil {
					p.Corrections = map[string]string{}
				}
				p.Corrections[sys] = strings.TrimSpace(row[i])
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// averitecClaim is one claim of AVeriTeC's dev.json.
type averitecClaim struct {
	Claim     string `json:"claim"`
	Label     string `json:"label"`
	ClaimDate string `json:"claim_date"`
	Speaker   string `json:"speaker"`
	Questions []struct {
		Answers []struct {
			SourceURL string `json:"source_url"`
		} `json:"answers"`
	} `json:"questions"`
}

func readAVeriTeC(b []byte) ([]Post, error) {
	var claims []averitecClaim
	if err := json.Unmarshal(b, &claims); err != nil {
		return nil, fmt.Errorf("read AVeriTeC claims: %w", err)
	}
	out := make([]Post, 0, len(claims))
	for i, c := range claims {
		p := Post{ID: strconv.Itoa(i), Post: pipeline.Post{Text: c.Claim, Author: c.Speaker}, GoldLabel: c.Label}
		if c.ClaimDate != "" {
			t, err := time.Parse("2-1-2006", strings.TrimSpace(c.ClaimDate)) // DD-MM-YYYY, the day not always padded ("9-10-2020")
			if err != nil {
				return nil, fmt.Errorf("claim %d: claim_date %q: %w", i, c.ClaimDate, err)
			}
			// The claim's day is its time (midnight UTC): evidence must
			// predate it, as AVeriTeC's cut-off says.
			p.Post.PostedAt = t
		}
		seen := map[string]bool{}
		for _, q := range c.Questions {
			for _, a := range q.Answers {
				if u := strings.TrimSpace(a.SourceURL); u != "" && !seen[u] {
					seen[u] = true
					p.GoldURLs = append(p.GoldURLs, u)
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}
