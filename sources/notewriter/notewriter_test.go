package notewriter

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
)

var keys = Keys{APIKey: "app-key", APISecret: "app-secret", AccessToken: "123-user-token", AccessSecret: "user-secret"}

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

// verify checks r's OAuth 1.0a HMAC-SHA1 signature as X does (RFC 5849
// §3.4): the base string of the method, the URL and the sorted oauth_ and
// query parameters, signed with the app's and the user's secrets.
func verify(r *http.Request, k Keys) error {
	h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "OAuth ")
	if !ok {
		return fmt.Errorf("no OAuth Authorization header: %q", r.Header.Get("Authorization"))
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
		return fmt.Errorf("wrong key, token or method: %v", params)
	}
	sig := params["oauth_signature"]
	delete(params, "oauth_signature")
	for name, vs := range r.URL.Query() {
		params[name] = vs[0]
	}
	var pairs []string
	for name, v := range params {
		pairs = append(pairs, pct(name)+"="+pct(v))
	}
	sort.Strings(pairs)
	base := r.Method + "&" + pct("http://"+r.Host+r.URL.Path) + "&" + pct(strings.Join(pairs, "&"))
	mac := hmac.New(sha1.New, []byte(pct(k.APISecret)+"&"+pct(k.AccessSecret)))
	mac.Write([]byte(base))
	if want := base64.StdEncoding.EncodeToString(mac.Sum(nil)); sig != want {
		return fmt.Errorf("signature %q, want %q", sig, want)
	}
	return nil
}

// fakeX speaks the two endpoints as X documents them, refusing a request
// whose signature does not verify (401) and, when enrolled is false, any
// signed one with X's 403 client-not-enrolled problem.
func fakeX(t *testing.T, enrolled bool, got *[]map[string]any) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := verify(r, keys); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"title":"Unauthorized","type":"about:blank","status":401,"detail":%q}`, err.Error())
			return
		}
		if !enrolled {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"client_id":"1","detail":"This request must be made using an approved developer account that is enrolled in the requested endpoint.","registration_url":"https://developer.x.com/","title":"Client Forbidden","required_enrollment":"Appropriate Level of API Access","reason":"client-not-enrolled","type":"https://api.twitter.com/2/problems/client-forbidden"}`))
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		*got = append(*got, body)
		switch r.URL.Path {
		case "/2/evaluate_note":
			w.Write([]byte(`{"data":{"claim_opinion_score":0.71}}`))
		case "/2/notes":
			w.Write([]byte(`{"data":{"note_id":"1933333333333333333","deleted":false}}`))
		default:
			http.NotFound(w, r)
		}
	}))
}

func TestEvaluateAndSubmit(t *testing.T) {
	var got []map[string]any
	srv := fakeX(t, true, &got)
	defer srv.Close()
	c := New(srv.URL, keys, nil)
	score, err := c.Evaluate(context.Background(), "1900", "The council approved lanes. https://www.reuters.com/a")
	if err != nil || score != 0.71 {
		t.Fatalf("evaluate: %v %v", score, err)
	}
	id, err := c.Submit(context.Background(), Note{PostID: "1900", Text: "The council approved lanes. https://www.reuters.com/a",
		Classification: "misinformed_or_potentially_misleading", MisleadingTags: []string{"factual_error"}}, false)
	if err != nil || id != "1933333333333333333" {
		t.Fatalf("submit: %q %v", id, err)
	}
	if got[0]["post_id"] != "1900" || got[0]["note_text"] == nil {
		t.Errorf("evaluate body: %v", got[0])
	}
	info, _ := got[1]["info"].(map[string]any)
	if got[1]["test_mode"] != true || got[1]["post_id"] != "1900" || info["classification"] != "misinformed_or_potentially_misleading" ||
		fmt.Sprint(info["misleading_tags"]) != "[factual_error]" || info["trustworthy_sources"] != true {
		t.Errorf("submit body: %v", got[1])
	}

	// A wrong secret does not verify.
	bad := keys
	bad.AccessSecret = "stolen"
	if _, err := New(srv.URL, bad, nil).Evaluate(context.Background(), "1900", "x"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong secret: %v", err)
	}
}

func TestNotEnrolled(t *testing.T) {
	var got []map[string]any
	srv := fakeX(t, false, &got)
	defer srv.Close()
	_, err := New(srv.URL, keys, nil).Submit(context.Background(), Note{PostID: "1900", Text: "t", Classification: "not_misleading"}, false)
	if !errors.Is(err, ErrNotEnrolled) || !strings.Contains(err.Error(), "not signed up for the AI Note Writer API") ||
		!strings.Contains(err.Error(), "muse cases export ID --format note") {
		t.Errorf("403: %v", err)
	}
	if len(got) != 0 {
		t.Errorf("the refused note was taken: %v", got)
	}
}
