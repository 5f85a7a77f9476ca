package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/video/videotest"
)

func TestTranscribeVerboseJSON(t *testing.T) {
	dir := t.TempDir()
	// Two sentences with a pause between them, spoken by espeak-ng.
	wav := videotest.Speech(t, filepath.Join(dir, "speech.wav"),
		`The bridge closed on Monday. [[_::_::_::_::_::_::_::_::_::_::]] It reopens in June.`)
	srv := &llmtest.Transcriber{Script: []string{"The bridge closed on Monday.", "It reopens in June."}, Language: "english"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := llm.New(llm.Config{BaseURL: ts.URL + "/v1", Model: "m", Models: map[string]string{llm.TaskTranscription: "whisper-large-v3"}})
	if err != nil {
		t.Fatal(err)
	}
	tr, u, err := c.Transcribe(context.Background(), wav, 5)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "whisper-large-v3" || reqs[0].ResponseFormat != "verbose_json" ||
		len(reqs[0].Granularities) != 1 || reqs[0].Granularities[0] != "segment" || reqs[0].FileName != "speech.wav" {
		t.Fatalf("requests: %+v", reqs)
	}
	if tr.Language != "english" || len(tr.Segments) != 2 || tr.Segments[1].Text != "It reopens in June." {
		t.Fatalf("transcript: %+v", tr)
	}
	// The times are where the speech is: the second sentence after the pause.
	if s := tr.Segments; s[0].Start > 0.5 || s[1].Start <= s[0].End || s[1].End > tr.Duration+0.01 {
		t.Errorf("segments %+v over %.2fs", s, tr.Duration)
	}
	if u.LLMCalls != 1 || u.CostUSD != 0 { // a model OpenAI does not price: a local server
		t.Errorf("usage %+v", u)
	}
}

func TestTranscribeNoEndpoint(t *testing.T) {
	wav := videotest.Speech(t, filepath.Join(t.TempDir(), "s.wav"), "Hello.")
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	c, err := llm.New(llm.Config{BaseURL: ts.URL + "/v1", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Transcribe(context.Background(), wav, 1)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Fatalf("err %v, want a 404 APIError", err)
	}
	if c.TranscriptionModel() != "whisper-1" {
		t.Errorf("default model %q", c.TranscriptionModel())
	}
}
