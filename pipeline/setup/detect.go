package setup

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/llm"
)

// Finding is one thing Detect looked for.
type Finding struct {
	Name   string `json:"name"`  // what was looked for: OPENAI_API_KEY, ollama, searxng, archive…
	Found  bool   `json:"found"` // it is there and usable
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // what to set when it is not
	// Search marks a web search provider's finding.
	Search bool `json:"search,omitempty"`
	// Env names the setting that turns it on.
	Env string `json:"env,omitempty"`
	// Tool marks a program muse runs (tesseract, ffmpeg): not needed for
	// a check, but what it reads is not read without it.
	Tool bool `json:"tool,omitempty"`
}

// Detection is what muse can use on this machine, as the first-run setup
// screen shows it.
type Detection struct {
	Findings []Finding `json:"findings"`
	// Model names the model a check would use; empty when none can be.
	Model string `json:"model"`
	// Search is true when there is something to search: a web provider,
	// or a local archive with pages in it.
	Search bool `json:"search"`
}

// searchKeys are the search providers' settings, as Detect reports them.
var searchKeys = []struct{ name, env, what string }{
	{"searxng", "SEARXNG_URL", "a SearXNG instance (self-hosted; settings.yml search.formats must include json)"},
	{"brave", "BRAVE_API_KEY", "the Brave Search API"},
	{"google", "GOOGLE_CSE_KEY and GOOGLE_CSE_CX", "Google Programmable Search"},
	{"serper", "SERPER_API_KEY", "Serper (Google results)"},
	{"tavily", "TAVILY_API_KEY", "Tavily search"},
	{"exa", "EXA_API_KEY", "Exa search"},
	{"serpapi", "SERPAPI_API_KEY", "SerpAPI (Google results and reverse image search)"},
	{"factcheck", "GOOGLE_FACTCHECK_API_KEY", "Google Fact Check Tools"},
}

// Detect looks, without paying for anything, for what a check needs: an
// OpenAI key, OPENAI_BASE_URL and a model named for it, an Ollama on
// localhost and its models, each search provider, and the local archive.
// It asks only Ollama (one request, 2 s at most) and opens the archive.
func Detect(ctx context.Context, cfg *Config) Detection {
	var d Detection
	add := func(f Finding) { d.Findings = append(d.Findings, f) }
	add(Finding{Name: "OPENAI_API_KEY", Found: cfg.OpenAIAPIKey != "", Detail: setOrNot(cfg.OpenAIAPIKey != "", "set (masked)"),
		Fix: "export OPENAI_API_KEY=sk-… for OpenAI (MUSE_MODEL picks the model, default " + llm.DefaultModel + ")"})
	base := Finding{Name: "OPENAI_BASE_URL", Found: cfg.OpenAIBaseURL != "", Detail: setOrNot(cfg.OpenAIBaseURL != "", maskURL(cfg.OpenAIBaseURL)),
		Fix: "export OPENAI_BASE_URL=http://host:port/v1 MUSE_MODEL=name for any OpenAI-compatible server (vLLM, llama.cpp, LM Studio)"}
	if cfg.OpenAIBaseURL != "" && cfg.Model == "" && !isOpenAI(cfg.OpenAIBaseURL) {
		base.Found = false
		base.Detail = "set, but no model is named for it"
		base.Fix = "set MUSE_MODEL (or model in config.toml) to a model the server at " + maskURL(cfg.OpenAIBaseURL) + " serves"
	}
	add(base)
	add(detectOllama(ctx, cfg))
	if c, err := NewLLMClient(ctx, cfg, pipeline.Options{}); err == nil {
		d.Model = c.ModelFor(llm.TaskCorrection)
	}
	so := SearchOptions(cfg)
	set := map[string]bool{"searxng": so.SearXNGURL != "", "brave": so.BraveAPIKey != "",
		"google": so.GoogleCSEKey != "" && so.GoogleCSECX != "", "serpapi": so.SerpAPIKey != "", "factcheck": so.FactCheckAPIKey != "",
		"serper": so.SerperAPIKey != "", "tavily": so.TavilyAPIKey != "", "exa": so.ExaAPIKey != ""}
	for _, k := range searchKeys {
		f := Finding{Name: k.name, Found: set[k.name], Detail: setOrNot(set[k.name], k.env+" set"), Fix: "set " + k.env + " for " + k.what,
			Search: true, Env: k.env}
		d.Search = d.Search || f.Found
		add(f)
	}
	add(detectArchive(ctx, cfg, &d))
	return d
}

// DetectTools looks for the programs that read what a post carries besides
// its text (tesseract, ffmpeg): not needed for a check, but without them
// images' text and videos are not read, which the setup screen says before
// the first check. It runs each program, so it is asked only when that
// screen is shown, not at every start.
func DetectTools() []Finding {
	var out []Finding
	for _, it := range []DoctorItem{doctorTesseract(), doctorFFmpeg()} {
		out = append(out, Finding{Name: it.Name, Found: it.Status == DoctorOK, Detail: it.Detail, Fix: it.Fix, Tool: true})
	}
	return out
}

func detectOllama(ctx context.Context, cfg *Config) Finding {
	at := OllamaURL(cfg)
	f := Finding{Name: "ollama", Fix: "install Ollama (ollama.com), then `ollama pull llama3.1`; muse finds it on " + at + " by itself"}
	models, ok := llm.DetectOllama(ctx, &http.Client{Timeout: ollamaDetectTimeout}, at)
	chat, _ := llm.SplitEmbeddingModels(models)
	switch {
	case !ok:
		f.Detail = "no Ollama answers at " + at
	case len(chat) == 0:
		f.Detail = "Ollama answers at " + at + " but has no model pulled"
		f.Fix = "ollama pull llama3.1 (or any chat model)"
	default:
		f.Found = true
		f.Detail = fmt.Sprintf("Ollama at %s has %s", at, listOrNone(chat, 6))
		f.Fix = ""
		if cfg.OpenAIBaseURL != "" || cfg.OpenAIAPIKey != "" {
			f.Detail += " (not used: OPENAI_* is set)"
		}
	}
	return f
}

func detectArchive(ctx context.Context, cfg *Config, d *Detection) Finding {
	f := Finding{Name: "archive", Fix: "muse archive add PATH|URL... imports pages and fact-checks (HTML files, folders, URLs, JSONL)"}
	st, err := archive.Open(ctx, cfg.ArchivePath())
	if err != nil {
		f.Detail = err.Error()
		return f
	}
	defer st.Close()
	n, err := st.Count(ctx)
	if err != nil {
		f.Detail = err.Error()
		return f
	}
	f.Found = n > 0
	f.Detail = fmt.Sprintf("%d pages in %s", n, st.Path())
	if f.Found {
		f.Fix = ""
		d.Search = true
	}
	return f
}

// modelProblem says, in words, why no model can be used under cfg, and
// what to set.
func modelProblem(ctx context.Context, cfg *Config) (detail, fix string) {
	switch {
	case cfg.OpenAIBaseURL != "" && cfg.Model == "" && !isOpenAI(cfg.OpenAIBaseURL):
		return "OPENAI_BASE_URL is set (" + maskURL(cfg.OpenAIBaseURL) + ") but no model is named for it",
			"set MUSE_MODEL (or model in config.toml) to one of the server's models"
	case cfg.OpenAIBaseURL != "" || cfg.OpenAIAPIKey != "":
		return "", ""
	}
	f := detectOllama(ctx, cfg)
	if strings.Contains(f.Detail, "no model pulled") {
		return f.Detail, f.Fix + "; or " + ModelSetupHint
	}
	return "no OPENAI_API_KEY or OPENAI_BASE_URL is set, and " + f.Detail, ModelSetupHint
}

func setOrNot(ok bool, detail string) string {
	if ok {
		return detail
	}
	return "not set"
}

// isOpenAI reports whether base is OpenAI's own API, where a model need not
// be named.
func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// maskURL is u with the password of its userinfo masked, for showing.
func maskURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	}
	return strings.Replace(p.String(), "xxxxx", "****", 1)
}
