package llmtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
)

// Transcriber is an OpenAI-compatible POST /audio/transcriptions: it reads
// the multipart form as OpenAI's API does (file, model, response_format,
// timestamp_granularities[]), checks the file is PCM WAV, finds where in it
// someone speaks (runs of 30 ms windows louder than a thousandth of full
// scale), and answers verbose_json whose segments are Script's sentences,
// one per run of speech, at the times the speech is. What the words are
// it cannot know: the test says (Script), as it said to espeak-ng.
type Transcriber struct {
	// Script is what was said, one sentence per stretch of speech; the
	// last ones join the last stretch when there are fewer stretches.
	Script []string
	// Language is what verbose_json's language says (Whisper: "english").
	Language string

	mu       sync.Mutex
	requests []TranscriptionRequest
}

// TranscriptionRequest is what one request carried.
type TranscriptionRequest struct {
	Model, ResponseFormat, FileName string
	Granularities                   []string
	Bytes                           int
}

// Requests are the requests served so far.
func (s *Transcriber) Requests() []TranscriptionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TranscriptionRequest(nil), s.requests...)
}

func (s *Transcriber) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/audio/transcriptions") {
		writeError(w, &Error{Status: http.StatusNotFound, Message: "Unknown request URL: " + r.Method + " " + r.URL.Path})
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Message: "Could not parse multipart form: " + err.Error()})
		return
	}
	f, fh, err := r.FormFile("file")
	if err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Message: "Missing file"})
		return
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	req := TranscriptionRequest{Model: r.FormValue("model"), ResponseFormat: r.FormValue("response_format"),
		FileName: fh.Filename, Granularities: r.MultipartForm.Value["timestamp_granularities[]"], Bytes: len(data)}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if req.Model == "" {
		writeError(w, &Error{Status: http.StatusBadRequest, Message: "you must provide a model parameter"})
		return
	}
	pcm, rate, err := wavPCM(data)
	if err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Message: "Invalid file format: " + err.Error()})
		return
	}
	dur := float64(len(pcm)) / float64(rate)
	runs := speechRuns(pcm, rate)
	type seg struct {
		ID    int     `json:"id"`
		Seek  int     `json:"seek"`
		Start float64 `json:"start"`
		End   float64 `json:"end"`
		Text  string  `json:"text"`
	}
	var segs []seg
	var all []string
	for i, run := range runs {
		if i >= len(s.Script) {
			break
		}
		text := s.Script[i]
		if i == len(runs)-1 && len(s.Script) > len(runs) {
			text = strings.Join(s.Script[i:], " ")
		}
		segs = append(segs, seg{ID: i, Start: round2(run[0]), End: round2(run[1]), Text: " " + text})
		all = append(all, text)
	}
	w.Header().Set("Content-Type", "application/json")
	if req.ResponseFormat != "verbose_json" {
		json.NewEncoder(w).Encode(map[string]any{"text": strings.Join(all, " ")})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"task": "transcribe", "language": s.Language, "duration": round2(dur),
		"text": strings.Join(all, " "), "segments": segs})
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// wavPCM reads 16-bit PCM samples (the first channel) from a RIFF/WAVE file.
func wavPCM(b []byte) ([]int16, int, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, 0, fmt.Errorf("not a WAV file")
	}
	var rate, channels, bits int
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(p+8+size, len(b))]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body) != 1 {
				return nil, 0, fmt.Errorf("not PCM")
			}
			channels, rate, bits = int(binary.LittleEndian.Uint16(body[2:])), int(binary.LittleEndian.Uint32(body[4:])), int(binary.LittleEndian.Uint16(body[14:]))
		case "data":
			if bits != 16 || channels < 1 || rate <= 0 {
				return nil, 0, fmt.Errorf("want 16-bit PCM, got %d bits", bits)
			}
			out := make([]int16, 0, len(body)/2/channels)
			for i := 0; i+2*channels <= len(body); i += 2 * channels {
				out = append(out, int16(binary.LittleEndian.Uint16(body[i:])))
			}
			return out, rate, nil
		}
		p += 8 + size + size%2
	}
	return nil, 0, fmt.Errorf("no data chunk")
}

// speechRuns are the [start, end] seconds of sound, gaps under 0.6 s
// joined.
func speechRuns(pcm []int16, rate int) [][2]float64 {
	win := rate * 30 / 1000
	var runs [][2]float64
	for i := 0; i+win <= len(pcm); i += win {
		var sum float64
		for _, v := range pcm[i : i+win] {
			sum += float64(v) * float64(v)
		}
		if math.Sqrt(sum/float64(win)) < 32.768 {
			continue
		}
		t0, t1 := float64(i)/float64(rate), float64(i+win)/float64(rate)
		if n := len(runs); n > 0 && t0-runs[n-1][1] < 0.6 {
			runs[n-1][1] = t1
		} else {
			runs = append(runs, [2]float64{t0, t1})
		}
	}
	return runs
}
