// Package notewriter is a client of X's AI Note Writer API
// (docs.x.com/x-api/community-notes): GET
// /2/notes/search/posts_eligible_for_notes, the posts offered for a note;
// POST /2/evaluate_note, which scores a note's text against a post
// (ClaimOpinion); POST /2/notes, which submits a note, in test mode unless
// asked otherwise; and GET /2/notes/search/notes_written, the notes written
// with the evaluator's scores, from which the admission Ledger is read.
// Requests are signed with OAuth 1.0a in user context
// (github.com/dghubble/oauth1), as the API requires, and wait in a Limiter
// holding X's limits.
package notewriter

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dghubble/oauth1"
)

// DefaultBaseURL is X's API.
const DefaultBaseURL = "https://api.x.com"

// Keys are the four OAuth 1.0a credentials of the writer's X app and
// account: the app's API key and secret, the account's access token and
// secret.
type Keys struct {
	APIKey, APISecret, AccessToken, AccessSecret string
}

// Missing names the keys not given.
func (k Keys) Missing() []string {
	var out []string
	for name, v := range map[string]string{"X_API_KEY": k.APIKey, "X_API_KEY_SECRET": k.APISecret,
		"X_ACCESS_TOKEN": k.AccessToken, "X_ACCESS_TOKEN_SECRET": k.AccessSecret} {
		if strings.TrimSpace(v) == "" {
			out = append(out, name)
		}
	}
	return out
}

// Client calls the AI Note Writer API, each request through its Limiter.
type Client struct {
	base  string
	http  *http.Client
	limit *Limiter
}

// New is a client of the API at base (DefaultBaseURL when ""), signing
// each request with keys; transport carries the requests (http.DefaultTransport
// when nil).
func New(base string, keys Keys, transport http.RoundTripper) *Client {
	if base == "" {
		base = DefaultBaseURL
	}
	if transport == nil {
		transport = http.DefaultTransport
	}
	cfg := oauth1.NewConfig(keys.APIKey, keys.APISecret)
	ctx := context.WithValue(context.Background(), oauth1.HTTPClient, &http.Client{Transport: transport})
	return &Client{base: strings.TrimRight(base, "/"), http: cfg.Client(ctx, oauth1.NewToken(keys.AccessToken, keys.AccessSecret)),
		limit: NewLimiter(DefaultLimits, "")}
}

// WithLimiter has the client's requests wait in l's queue.
func (c *Client) WithLimiter(l *Limiter) *Client {
	c.limit = l
	return c
}

// Note is a note as POST /2/notes takes it.
type Note struct {
	PostID         string
	Text           string
	Classification string
	MisleadingTags []string
}

// ErrNotEnrolled is the API's 403 "client-not-enrolled".
var ErrNotEnrolled = errors.New("this X account is not enrolled in the AI Note Writer API")

// APIError is an answer other than 2xx, with X's problem fields.
type APIError struct {
	Status int
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Reason string `json:"reason"`
	Type   string `json:"type"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

func (e *APIError) Error() string {
	if e.Reason == "client-not-enrolled" {
		return "X answered 403 client-not-enrolled: the X account and app these keys belong to are not signed up " +
			"for the AI Note Writer API (sign up at https://x.com/i/flow/cn-api-signup; for new accounts X grants " +
			"access through its sales team). Until then, export the note and submit it by hand: " +
			"muse cases export ID --format note"
	}
	msg := cmp.Or(e.Detail, e.Title)
	if msg == "" && len(e.Errors) > 0 {
		msg = e.Errors[0].Message
	}
	return fmt.Sprintf("X answered %d: %s", e.Status, cmp.Or(msg, http.StatusText(e.Status)))
}

func (e *APIError) Is(target error) bool {
	return target == ErrNotEnrolled && e.Reason == "client-not-enrolled"
}

// Evaluate asks X's evaluator for the note's ClaimOpinion score on the
// post (POST /2/evaluate_note).
func (c *Client) Evaluate(ctx context.Context, postID, text string) (float64, error) {
	var out struct {
		Data struct {
			ClaimOpinionScore *float64 `json:"claim_opinion_score"`
		} `json:"data"`
	}
	if err := c.do(ctx, http.MethodPost, "/2/evaluate_note", map[string]any{"note_text": text, "post_id": postID}, false, &out); err != nil {
		return 0, fmt.Errorf("evaluate note: %w", err)
	}
	if out.Data.ClaimOpinionScore == nil {
		return 0, fmt.Errorf("evaluate note: X's answer holds no claim_opinion_score")
	}
	return *out.Data.ClaimOpinionScore, nil
}

// Submit submits the note (POST /2/notes), in test mode unless live, and
// returns the note's ID.
func (c *Client) Submit(ctx context.Context, n Note, live bool) (string, error) {
	info := map[string]any{"text": n.Text, "classification": n.Classification, "trustworthy_sources": true}
	if len(n.MisleadingTags) > 0 {
		info["misleading_tags"] = n.MisleadingTags
	}
	var out struct {
		Data struct {
			NoteID string `json:"note_id"`
		} `json:"data"`
	}
	if err := c.do(ctx, http.MethodPost, "/2/notes", map[string]any{"test_mode": !live, "post_id": n.PostID, "info": info}, true, &out); err != nil {
		return "", fmt.Errorf("submit note: %w", err)
	}
	if out.Data.NoteID == "" {
		return "", fmt.Errorf("submit note: X's answer holds no note_id")
	}
	return out.Data.NoteID, nil
}

// do sends one request (body as JSON unless nil) once the limiter gives
// it a slot, and again after X's 429 (up to Limits.Retries times), and
// decodes the answer into out.
func (c *Client) do(ctx context.Context, method, pathQuery string, body any, submit bool, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		if err := c.limit.Acquire(ctx, submit); err != nil {
			return err
		}
		var rd io.Reader
		if b != nil {
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.base+pathQuery, rd)
		if err != nil {
			return err
		}
		if b != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		if err != nil {
			return err
		}
		if c.limit.Observe(resp) {
			if attempt < c.limit.lim.Retries {
				continue
			}
			return fmt.Errorf("%w %d times", ErrRateLimited, attempt+1)
		}
		if resp.StatusCode/100 != 2 {
			e := &APIError{Status: resp.StatusCode}
			json.Unmarshal(data, e) // a body that is not X's problem JSON leaves the status
			return e
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("X's answer is not JSON: %w", err)
		}
		return nil
	}
}
