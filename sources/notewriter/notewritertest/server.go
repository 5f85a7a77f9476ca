// Package notewritertest is a loopback server speaking X's AI Note Writer
// API as documented (docs.x.com/x-api/community-notes, twitter/communitynotes
// documentation/api): the four endpoints, OAuth 1.0a HMAC-SHA1 signatures
// verified as RFC 5849 says, X's problem JSON, its rate-limit headers and
// 429s, and the 403 of an account not enrolled.
package notewritertest

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/notewriter"
)

// Keys are the credentials the server accepts.
var Keys = notewriter.Keys{APIKey: "app-key", APISecret: "app-secret-9f8e7d", AccessToken: "1-token-5a4b3c", AccessSecret: "token-secret-1a2b3c"}

// Env is Keys as the environment gives them, with the server's address.
func (s *Server) Env() []string {
	return []string{"MUSE_X_API_URL=" + s.URL, "X_API_KEY=" + Keys.APIKey, "X_API_KEY_SECRET=" + Keys.APISecret,
		"X_ACCESS_TOKEN=" + Keys.AccessToken, "X_ACCESS_TOKEN_SECRET=" + Keys.AccessSecret}
}

// Post is an eligible post the server offers.
type Post struct {
	ID, Text, Lang, AuthorID string
	CreatedAt                time.Time
	Photos                   []string // photo URLs
	Requests                 []notewriter.Request
	Sources                  []notewriter.SuggestedSource
}

// Note is a note the server took.
type Note struct {
	ID, PostID, Text, Classification string
	Tags                             []string
	TestMode                         bool
	// Scores are the evaluator buckets notes_written reports (High,
	// Medium, Low, as X writes them).
	Scores map[string]string
}

// Request is one request the server answered, signature verified.
type Request struct {
	Method, Path string
	Query        url.Values
	Body         map[string]any
}

// Server is the loopback API.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	enrolled bool
	posts    []Post
	notes    []Note // newest first
	reqs     []Request
	// Score gives a note text's ClaimOpinion score and its evaluator
	// buckets; the default scores every note 0.8 and High on all three.
	Score func(text string) (float64, map[string]string)
	// tooMany: the next n requests are answered 429 until reset (or,
	// with tooManyFor, that long after the answer).
	tooMany    int
	tooManyFor time.Duration
	reset      time.Time
	// remaining, when ≥ 0, is sent as x-rate-limit-remaining.
	remaining int
}

// New starts a server offering posts, its keys Keys, the account enrolled.
func New(t testing.TB, posts ...Post) *Server {
	s := &Server{enrolled: true, posts: posts, remaining: -1,
		Score: func(string) (float64, map[string]string) {
			return 0.8, map[string]string{"ClaimOpinion": "High", "UrlValidity": "High", "HarassmentAbuse": "High"}
		}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// SetEnrolled says whether the account is enrolled (403 client-not-enrolled when not).
func (s *Server) SetEnrolled(b bool) { s.mu.Lock(); s.enrolled = b; s.mu.Unlock() }

// TooMany answers the next n requests 429 with x-rate-limit-reset at reset.
func (s *Server) TooMany(n int, reset time.Time) {
	s.mu.Lock()
	s.tooMany, s.reset = n, reset
	s.mu.Unlock()
}

// TooManyFor answers the next n requests 429, each with
// x-rate-limit-reset d after the answer.
func (s *Server) TooManyFor(n int, d time.Duration) {
	s.mu.Lock()
	s.tooMany, s.tooManyFor = n, d
	s.mu.Unlock()
}

// Remaining sends x-rate-limit-remaining n (and the reset) from now on.
func (s *Server) Remaining(n int, reset time.Time) {
	s.mu.Lock()
	s.remaining, s.reset = n, reset
	s.mu.Unlock()
}

// AddNotes adds notes written before, newest first, after the ones there.
func (s *Server) AddNotes(ns ...Note) { s.mu.Lock(); s.notes = append(s.notes, ns...); s.mu.Unlock() }

// Notes are the notes taken, newest first.
func (s *Server) Notes() []Note { s.mu.Lock(); defer s.mu.Unlock(); return slices.Clone(s.notes) }

// Requests are the requests answered (signed right), in order.
func (s *Server) Requests() []Request { s.mu.Lock(); defer s.mu.Unlock(); return slices.Clone(s.reqs) }

func problem(w http.ResponseWriter, status int, title, detail string) {
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"title": title, "detail": detail, "type": "about:blank", "status": status})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := Verify(r, Keys); err != nil {
		problem(w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tooMany > 0 {
		s.tooMany--
		if s.tooManyFor > 0 {
			s.reset = time.Now().Add(s.tooManyFor)
		}
		w.Header().Set("x-rate-limit-limit", "90")
		w.Header().Set("x-rate-limit-remaining", "0")
		w.Header().Set("x-rate-limit-reset", strconv.FormatInt(s.reset.Unix(), 10))
		problem(w, http.StatusTooManyRequests, "Too Many Requests", "Too Many Requests")
		return
	}
	if s.remaining >= 0 {
		w.Header().Set("x-rate-limit-limit", "90")
		w.Header().Set("x-rate-limit-remaining", strconv.Itoa(s.remaining))
		w.Header().Set("x-rate-limit-reset", strconv.FormatInt(s.reset.Unix(), 10))
	}
	if !s.enrolled {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"client_id":"1","detail":"This request must be made using an approved developer account that is enrolled in the requested endpoint.","registration_url":"https://developer.x.com/","title":"Client Forbidden","required_enrollment":"Appropriate Level of API Access","reason":"client-not-enrolled","type":"https://api.twitter.com/2/problems/client-forbidden"}`))
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query()}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&req.Body); err != nil {
			problem(w, http.StatusBadRequest, "Invalid Request", "the body is not JSON: "+err.Error())
			return
		}
	}
	s.reqs = append(s.reqs, req)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/2/notes/search/posts_eligible_for_notes":
		s.eligible(w, req.Query)
	case r.Method == http.MethodGet && r.URL.Path == "/2/notes/search/notes_written":
		s.written(w, req.Query)
	case r.Method == http.MethodPost && r.URL.Path == "/2/evaluate_note":
		s.evaluate(w, req.Body)
	case r.Method == http.MethodPost && r.URL.Path == "/2/notes":
		s.submit(w, req.Body)
	default:
		problem(w, http.StatusNotFound, "Not Found Error", r.Method+" "+r.URL.Path)
	}
}

func testMode(q url.Values) (bool, error) {
	v := q.Get("test_mode")
	if v != "true" && v != "false" {
		return false, fmt.Errorf("The `test_mode` query parameter value [%s] is not one of [true,false]", v)
	}
	return v == "true", nil
}

func maxResults(q url.Values, def int) (int, error) {
	if q.Get("max_results") == "" {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get("max_results"))
	if err != nil || n < 1 || n > 100 {
		return 0, fmt.Errorf("The `max_results` query parameter value [%s] is not between 1 and 100", q.Get("max_results"))
	}
	return n, nil
}

func (s *Server) eligible(w http.ResponseWriter, q url.Values) {
	if _, err := testMode(q); err != nil {
		problem(w, http.StatusBadRequest, "Invalid Request", err.Error())
		return
	}
	n, err := maxResults(q, 10)
	if err != nil {
		problem(w, http.StatusBadRequest, "Invalid Request", err.Error())
		return
	}
	feed := "en"
	for _, part := range strings.Split(q.Get("post_selection"), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), ":"); ok && strings.TrimSpace(k) == "feed_lang" {
			feed = strings.TrimSpace(v)
		}
	}
	fields := strings.Split(q.Get("tweet.fields"), ",")
	expand := strings.Split(q.Get("expansions"), ",")
	var data []map[string]any
	var media []map[string]any
	for _, p := range s.posts {
		if feed != "all" && p.Lang != feed {
			continue
		}
		if len(data) == n {
			break
		}
		d := map[string]any{"id": p.ID, "text": p.Text, "edit_history_tweet_ids": []string{p.ID}}
		set := func(field string, v any) {
			if slices.Contains(fields, field) {
				d[field] = v
			}
		}
		set("author_id", p.AuthorID)
		set("created_at", p.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"))
		set("lang", p.Lang)
		if len(p.Requests) > 0 {
			set("note_request_suggestions", p.Requests)
		}
		if len(p.Sources) > 0 {
			set("suggested_source_links_with_counts", p.Sources)
		}
		var keys []string
		for i, u := range p.Photos {
			k := fmt.Sprintf("3_%s%d", p.ID, i)
			keys = append(keys, k)
			if slices.Contains(expand, "attachments.media_keys") {
				media = append(media, map[string]any{"media_key": k, "type": "photo", "url": u, "width": 1200, "height": 675})
			}
		}
		if len(keys) > 0 {
			d["attachments"] = map[string]any{"media_keys": keys}
		}
		data = append(data, d)
	}
	out := map[string]any{"data": data, "meta": map[string]any{"result_count": len(data)}}
	if len(media) > 0 {
		out["includes"] = map[string]any{"media": media}
	}
	if len(data) == 0 {
		out = map[string]any{"meta": map[string]any{"result_count": 0}}
	}
	json.NewEncoder(w).Encode(out)
}

func (s *Server) written(w http.ResponseWriter, q url.Values) {
	test, err := testMode(q)
	if err != nil {
		problem(w, http.StatusBadRequest, "Invalid Request", err.Error())
		return
	}
	n, err := maxResults(q, 10)
	if err != nil {
		problem(w, http.StatusBadRequest, "Invalid Request", err.Error())
		return
	}
	var mine []Note
	for _, nt := range s.notes {
		if nt.TestMode == test {
			mine = append(mine, nt)
		}
	}
	from, _ := strconv.Atoi(q.Get("pagination_token"))
	var data []map[string]any
	for _, nt := range mine[min(from, len(mine)):min(from+n, len(mine))] {
		d := map[string]any{"id": nt.ID, "info": map[string]any{"post_id": nt.PostID, "text": nt.Text,
			"classification": nt.Classification, "misleading_tags": nt.Tags, "trustworthy_sources": true}}
		if test {
			var outs []map[string]string
			for _, typ := range []string{"UrlValidity", "HarassmentAbuse", "ClaimOpinion"} {
				if b := nt.Scores[typ]; b != "" {
					outs = append(outs, map[string]string{"evaluator_type": typ, "evaluator_score_bucket": b})
				}
			}
			if len(outs) > 0 {
				d["test_result"] = map[string]any{"evaluation_outcome": outs}
			}
		} else {
			d["status"] = "needs_more_ratings"
		}
		data = append(data, d)
	}
	meta := map[string]any{"result_count": len(data)}
	if from+n < len(mine) {
		meta["next_token"] = strconv.Itoa(from + n)
	}
	json.NewEncoder(w).Encode(map[string]any{"data": data, "meta": meta})
}

func (s *Server) evaluate(w http.ResponseWriter, b map[string]any) {
	text, _ := b["note_text"].(string)
	post, _ := b["post_id"].(string)
	if text == "" || post == "" {
		problem(w, http.StatusBadRequest, "Invalid Request", "note_text and post_id are required")
		return
	}
	score, _ := s.Score(text)
	json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"claim_opinion_score": score}})
}

var tags = []string{"disputed_claim_as_fact", "factual_error", "manipulated_media", "misinterpreted_satire",
	"missing_important_context", "outdated_information", "other"}

func (s *Server) submit(w http.ResponseWriter, b map[string]any) {
	test, ok := b["test_mode"].(bool)
	post, _ := b["post_id"].(string)
	info, _ := b["info"].(map[string]any)
	if !ok || post == "" || info == nil {
		problem(w, http.StatusBadRequest, "Invalid Request", "test_mode, post_id and info are required")
		return
	}
	text, _ := info["text"].(string)
	class, _ := info["classification"].(string)
	if _, ok := info["trustworthy_sources"].(bool); !ok || text == "" {
		problem(w, http.StatusBadRequest, "Invalid Request", "info.text and info.trustworthy_sources are required")
		return
	}
	var ts []string
	raw, _ := info["misleading_tags"].([]any)
	for _, t := range raw {
		if s, _ := t.(string); slices.Contains(tags, s) {
			ts = append(ts, s)
		} else {
			problem(w, http.StatusBadRequest, "Invalid Request", fmt.Sprintf("misleading tag %v is not one of %v", t, tags))
			return
		}
	}
	switch {
	case class == "misinformed_or_potentially_misleading" && len(ts) == 0:
		problem(w, http.StatusBadRequest, "Invalid Request", "a misleading note needs misleading_tags")
		return
	case class != "misinformed_or_potentially_misleading" && class != "not_misleading":
		problem(w, http.StatusBadRequest, "Invalid Request", "classification "+class+" is not known")
		return
	}
	if !slices.ContainsFunc(s.posts, func(p Post) bool { return p.ID == post }) {
		problem(w, http.StatusBadRequest, "Invalid Request", "post "+post+" is not eligible for notes")
		return
	}
	id := strconv.FormatInt(1940000000000000000+int64(len(s.notes)+1), 10)
	_, scores := s.Score(text)
	s.notes = append([]Note{{ID: id, PostID: post, Text: text, Classification: class, Tags: ts, TestMode: test, Scores: scores}}, s.notes...)
	json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"note_id": id, "deleted": false}})
}

// pct is RFC 3986 percent-encoding, as OAuth 1.0a (RFC 5849 §3.6) asks.
func pct(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Verify checks r's OAuth 1.0a HMAC-SHA1 signature as X does (RFC 5849
// §3.4): the base string of the method, the URL and the sorted oauth_ and
// query parameters, signed with the app's and the user's secrets; a
// timestamp more than five minutes off is refused.
func Verify(r *http.Request, k notewriter.Keys) error {
	h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "OAuth ")
	if !ok {
		return fmt.Errorf("no OAuth Authorization header")
	}
	params := map[string]string{}
	for _, p := range strings.Split(h, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		v, err := url.PathUnescape(strings.Trim(val, `"`))
		if err != nil {
			return err
		}
		params[name] = v
	}
	if params["oauth_consumer_key"] != k.APIKey || params["oauth_token"] != k.AccessToken || params["oauth_signature_method"] != "HMAC-SHA1" {
		return fmt.Errorf("wrong consumer key, token or signature method")
	}
	if ts, err := strconv.ParseInt(params["oauth_timestamp"], 10, 64); err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("oauth_timestamp %q is not now", params["oauth_timestamp"])
	}
	sig := params["oauth_signature"]
	delete(params, "oauth_signature")
	var pairs []string
	for name, v := range params {
		pairs = append(pairs, pct(name)+"="+pct(v))
	}
	for name, vs := range r.URL.Query() {
		for _, v := range vs {
			pairs = append(pairs, pct(name)+"="+pct(v))
		}
	}
	sort.Strings(pairs)
	base := r.Method + "&" + pct("http://"+r.Host+r.URL.Path) + "&" + pct(strings.Join(pairs, "&"))
	mac := hmac.New(sha1.New, []byte(pct(k.APISecret)+"&"+pct(k.AccessSecret)))
	mac.Write([]byte(base))
	if want := base64.StdEncoding.EncodeToString(mac.Sum(nil)); sig != want {
		return fmt.Errorf("the signature does not verify")
	}
	return nil
}
