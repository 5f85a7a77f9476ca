package llm

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// TaskTranscription is the speech-to-text task: its model is
// Config.Models["transcription"] (the setting models.transcription),
// DefaultTranscriptionModel otherwise.
const TaskTranscription = "transcription"

// DefaultTranscriptionModel is OpenAI's Whisper, the name faster-whisper-
// server, LocalAI and vLLM also answer to.
const DefaultTranscriptionModel = openai.Whisper1

// transcriptionUSDPerMinute is what OpenAI charges a minute of audio; a
// model not listed costs nothing (a local server).
var transcriptionUSDPerMinute = map[string]float64{
	openai.Whisper1:            0.006,
	openai.GPT4oTranscribe:     0.006,
	openai.GPT4oMiniTranscribe: 0.003,
}

// Transcript is what was said in a recording, by segment.
type Transcript struct {
	// Language is the language the server detected, as it names it
	// ("english" from Whisper, "en" from some servers).
	Language string
	Duration float64 // seconds
	Text     string
	Segments []Segment
}

// Segment is one stretch of speech, its times in seconds from the start.
type Segment struct {
	Start, End float64
	Text       string
}

// maxTranscriptBytes caps a transcription answer: ten minutes of speech in
// verbose_json with its tokens run to a few hundred kilobytes.
const maxTranscriptBytes = 8 << 20

// TranscriptionModel is the model Transcribe uses.
func (c *Client) TranscriptionModel() string {
	if m := c.cfg.Models[TaskTranscription]; m != "" {
		return m
	}
	return DefaultTranscriptionModel
}

// Transcribe sends the audio file at path to the server's
// /audio/transcriptions (multipart, response_format verbose_json with
// segment timestamps) and returns what was said, with the language
// detected. A server without that endpoint gives an *APIError (404).
func (c *Client) Transcribe(ctx context.Context, path string, seconds float64) (*Transcript, Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Deadline)
	defer cancel()
	model := c.TranscriptionModel()
	ci := callInfo{op: "transcription", task: TaskTranscription, model: model, baseURL: c.cfg.BaseURL, provider: c.provider}
	est := transcriptionUSDPerMinute[model] * math.Ceil(seconds/60)
	var res openai.AudioResponse
	cached := false
	err := c.retry(ctx, func() error {
		settle, err := c.reserve(ctx, Call{Task: TaskTranscription, Model: model, EstUSD: est})
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			settle(0)
			return fmt.Errorf("llm transcription: %w", err)
		}
		defer f.Close()
		info := &respInfo{maxBytes: maxTranscriptBytes}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, respInfoKey{}, info), c.cfg.Timeout)
		defer cancel()
		res, err = c.api.CreateTranscription(actx, openai.AudioRequest{
			Model:                  model,
			FilePath:               filepath.Base(path),
			Reader:                 f,
			Format:                 openai.AudioResponseFormatVerboseJSON,
			TimestampGranularities: []openai.TranscriptionTimestampGranularity{openai.TranscriptionTimestampGranularitySegment},
		})
		_, header := info.get()
		cached = err == nil && fromCache(header)
		if err != nil || cached {
			settle(0)
		} else {
			settle(est)
		}
		return ci.classify(ctx, err, info)
	})
	u := Usage{LLMCalls: 1}
	if err != nil {
		c.record(TaskTranscription, u)
		return nil, u, err
	}
	if cached {
		u.CachedCalls = 1
	} else {
		u.CostUSD = est
	}
	c.record(TaskTranscription, u)
	t := &Transcript{Language: strings.TrimSpace(res.Language), Duration: res.Duration, Text: strings.TrimSpace(res.Text)}
	for _, s := range res.Segments {
		if txt := strings.TrimSpace(s.Text); txt != "" {
			t.Segments = append(t.Segments, Segment{Start: s.Start, End: s.End, Text: txt})
		}
	}
	if len(t.Segments) == 0 && t.Text != "" {
		// A server answering plain json: one segment over the whole.
		t.Segments = []Segment{{Start: 0, End: max(res.Duration, seconds), Text: t.Text}}
	}
	return t, u, nil
}
