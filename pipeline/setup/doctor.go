package setup

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/sources/video"
)

// Doctor findings.
const (
	DoctorOK   = "ok"
	DoctorWarn = "warn"
	DoctorFail = "fail"
)

// DoctorItem is one finding of `muse doctor`: what was looked at, how it
// is, and what to do when it is not fine.
type DoctorItem struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok|warn|fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Doctor looks at everything a check needs: configuration, the model
// server and its models, each search provider (with one real query), the
// publisher ratings and the archive. It never fails; each problem is an
// item saying what to do.
func Doctor(ctx context.Context, cfg *Config) []DoctorItem {
	var out []DoctorItem
	file := cfg.File
	if file == "" {
		file = "none (environment and defaults)"
	}
	conf := DoctorItem{Name: "configuration", Status: DoctorOK,
		Detail: fmt.Sprintf("config file: %s; data: %s; cache: %s", file, cfg.DataDir, cfg.CacheDir)}
	if len(cfg.Problems) > 0 {
		conf.Status = DoctorFail
		conf.Detail += "; " + strings.Join(cfg.Problems, "; ")
		conf.Fix = "correct or remove those keys (`muse config init --print` shows every key with its type)"
	}
	out = append(out, conf)
	out = append(out, doctorFiles(cfg))
	out = append(out, doctorModel(ctx, cfg)...)
	out = append(out, doctorSearch(ctx, cfg)...)
	out = append(out, doctorRatings(cfg))
	out = append(out, doctorArchive(ctx, cfg))
	out = append(out, doctorTesseract())
	out = append(out, doctorFFmpeg())
	return out
}

// doctorModel is the model item, and the prices item when there is a model.
func doctorModel(ctx context.Context, cfg *Config) []DoctorItem {
	it := DoctorItem{Name: "model"}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	client, err := NewLLMClient(ctx, cfg, pipeline.Options{})
	if err != nil {
		it.Status, it.Detail, it.Fix = DoctorFail, err.Error(), ""
		if detail, fix := modelProblem(ctx, cfg); detail != "" {
			it.Detail, it.Fix = detail, fix
		}
		return []DoctorItem{it}
	}
	prices := doctorPrices(cfg, client)
	models, err := listModels(ctx, client.BaseURL(), cfg.OpenAIAPIKey)
	if err != nil {
		it.Status, it.Detail = DoctorFail, fmt.Sprintf("%s: %v", maskURL(client.BaseURL()), err)
		it.Fix = "check that the server is running and OPENAI_BASE_URL and OPENAI_API_KEY are right"
		return []DoctorItem{it, prices}
	}
	want := client.ModelFor(llm.TaskCorrection)
	it.Status = DoctorOK
	it.Detail = fmt.Sprintf("%s answers; using %s; it offers %s", maskURL(client.BaseURL()), want, listOrNone(models, 12))
	if len(models) > 0 && !slices.Contains(models, want) {
		it.Status = DoctorWarn
		it.Fix = fmt.Sprintf("the server does not list %s: set MUSE_MODEL to one of its models", want)
	}
	return []DoctorItem{it, prices}
}

// doctorPrices says which of the models in use have a price: without one,
// costs show as $0 and a spend cap cannot count their calls.
func doctorPrices(cfg *Config, client *llm.Client) DoctorItem {
	it := DoctorItem{Name: "prices", Status: DoctorOK}
	var priced, unpriced []string
	for _, p := range ModelPrices(client) {
		if p.Priced {
			priced = append(priced, fmt.Sprintf("%s $%g/$%g per million tokens", p.Model, p.Price.PromptPerMTok, p.Price.CompletionPerMTok))
		} else {
			unpriced = append(unpriced, p.Model)
		}
	}
	it.Detail = "priced: " + listOrNone(priced, 6)
	if len(priced) == 0 {
		it.Detail = "priced: none"
	}
	if len(unpriced) > 0 {
		it.Detail += "; no price (cost shown as $0): " + strings.Join(unpriced, ", ")
		it.Status = DoctorWarn
		it.Fix = fmt.Sprintf("add [prices.\"%s\"] prompt = … completion = … (US dollars per million tokens) to %s", unpriced[0], cfg.configFileName())
		if err := checkCaps(cfg, cfg.SpendCapCheckUSD, client); err != nil {
			it.Status = DoctorFail
			it.Detail += "; a spend cap is set, so checks will not start"
		}
	}
	return it
}

func listOrNone(s []string, n int) string {
	if len(s) == 0 {
		return "no model list"
	}
	if len(s) > n {
		return strings.Join(s[:n], ", ") + fmt.Sprintf(" and %d more", len(s)-n)
	}
	return strings.Join(s, ", ")
}

// listModels is GET {base}/models, the OpenAI model list.
func listModels(ctx context.Context, base, key string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("HTTP 401: the API key was refused (OPENAI_API_KEY)")
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("HTTP %d listing models", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the model list is not JSON: %w", err)
	}
	var out []string
	for _, m := range list.Data {
		out = append(out, m.ID)
	}
	return out, nil
}

func doctorSearch(ctx context.Context, cfg *Config) []DoctorItem {
	so := SearchOptions(cfg)
	var out []DoctorItem
	for _, p := range so.Problems() {
		out = append(out, DoctorItem{Name: "search", Status: DoctorWarn, Detail: p, Fix: search.SetupHint})
	}
	if it, ok := googleCSEEnd(cfg); ok {
		out = append(out, it)
	}
	providers := search.Providers(so)
	if len(providers) == 0 {
		return append(out, DoctorItem{Name: "search", Status: DoctorWarn,
			Detail: "no web search provider: only the local archive will be searched", Fix: search.SetupHint})
	}
	for _, p := range providers {
		it := DoctorItem{Name: "search " + p.Name()}
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		hits, err := p.Search(qctx, search.Query{Text: "fact check", Count: 3})
		cancel()
		if err != nil {
			it.Status, it.Detail = DoctorFail, err.Error()
			it.Fix = "check the provider's URL or key; the error above says what it answered"
		} else {
			it.Status, it.Detail = DoctorOK, fmt.Sprintf("answers (%d results for a test query)", len(hits))
		}
		out = append(out, it)
	}
	return out
}

func doctorRatings(cfg *Config) DoctorItem {
	it := DoctorItem{Name: "ratings"}
	r, err := ratings.Load(RatingsOptions(cfg))
	if err != nil {
		it.Status, it.Detail = DoctorFail, err.Error()
		it.Fix = "fix or remove the file named above (MUSE_RATINGS, --ratings, overrides.toml)"
		return it
	}
	n, date, files := r.Info()
	it.Status = DoctorOK
	it.Detail = fmt.Sprintf("%d publishers rated (%s)", n, date)
	if len(files) > 0 {
		it.Detail += " from " + strings.Join(files, ", ")
	} else {
		it.Status = DoctorWarn
		it.Detail += " from the built-in table only"
		it.Fix = "run `muse sources update` for the full ratings file, or set MUSE_RATINGS"
	}
	return it
}

func doctorArchive(ctx context.Context, cfg *Config) DoctorItem {
	it := DoctorItem{Name: "archive"}
	st, err := archive.Open(ctx, cfg.ArchivePath())
	if err != nil {
		it.Status, it.Detail = DoctorFail, err.Error()
		it.Fix = "check that the data folder is writable (MUSE_DATA_DIR or XDG_DATA_HOME)"
		return it
	}
	defer st.Close()
	n, err := st.Count(ctx)
	if err != nil {
		it.Status, it.Detail = DoctorFail, err.Error()
		it.Fix = "the archive database may be damaged: move it aside and muse will start a new one"
		return it
	}
	it.Status = DoctorOK
	it.Detail = fmt.Sprintf("%s: %d documents", st.Path(), n)
	if fi, err := os.Stat(cfg.ArchivePath()); err == nil { // a file, not the newsroom's database
		it.Detail += fmt.Sprintf(", %.1f MB", float64(fi.Size())/1e6)
	}
	return it
}

// doctorTesseract reports whether the text in images can be read.
func doctorTesseract() DoctorItem {
	it := DoctorItem{Name: "tesseract"}
	if v, ok := images.TesseractVersion(); ok {
		it.Status, it.Detail = DoctorOK, "tesseract "+v+": the text in post images is read"
		return it
	}
	it.Status = DoctorWarn
	it.Detail = "tesseract not found on PATH: the text in post images is not read (images are still described by a vision model, or from their alt text)"
	it.Fix = "apt-get install tesseract-ocr (Debian, Ubuntu; brew install tesseract on macOS)"
	return it
}

// doctorFFmpeg reports whether post videos can be read.
func doctorFFmpeg() DoctorItem {
	it := DoctorItem{Name: "ffmpeg"}
	if v, ok := video.Version(); ok {
		it.Status, it.Detail = DoctorOK, "ffmpeg "+v+": post videos are read (keyframes like images, the sound sent to the model server's /audio/transcriptions)"
		return it
	}
	it.Status = DoctorWarn
	it.Detail = "ffmpeg not found on PATH: post videos are not read (only their poster image is)"
	it.Fix = "apt-get install ffmpeg (Debian, Ubuntu; brew install ffmpeg on macOS)"
	return it
}

// googleCSEEnd warns, while a Google CSE key is set, that the API ends on
// 2027-01-01 and takes no new customers.
func googleCSEEnd(cfg *Config) (DoctorItem, bool) {
	if cfg.GoogleCSEKey == "" {
		return DoctorItem{}, false
	}
	return DoctorItem{Name: "search google", Status: DoctorWarn, Detail: search.GoogleCSEWarning,
		Fix: "set SERPER_API_KEY, TAVILY_API_KEY, EXA_API_KEY or BRAVE_API_KEY (or run SearXNG)"}, true
}
