package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultOllamaURL is where Ollama listens unless told otherwise.
const DefaultOllamaURL = "http://localhost:11434"

// DetectOllama asks a server at base (e.g. DefaultOllamaURL) which models it
// has, first with Ollama's GET /api/tags, then with the OpenAI-style
// GET /v1/models. ok is true when either answered; models may still be empty.
// hc nil means a client with a 2 s timeout, so a missing server costs little.
func DetectOllama(ctx context.Context, hc *http.Client, base string) (models []string, ok bool) {
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Second}
	}
	base = strings.TrimRight(base, "/")
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if getJSON(ctx, hc, base+"/api/tags", &tags) == nil {
		for _, m := range tags.Models {
			name := m.Name
			if name == "" {
				name = m.Model
			}
			if name != "" {
				models = append(models, name)
			}
		}
		return models, true
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if getJSON(ctx, hc, base+"/v1/models", &list) == nil {
		for _, m := range list.Data {
			if m.ID != "" {
				models = append(models, m.ID)
			}
		}
		return models, true
	}
	return nil, false
}

// OllamaBaseURL is the OpenAI-compatible base URL of an Ollama server.
func OllamaBaseURL(base string) string {
	return strings.TrimRight(base, "/") + "/v1"
}

// SplitEmbeddingModels separates embedding models (by Ollama's naming:
// "nomic-embed-text", "mxbai-embed-large", "bge-m3", "all-minilm") from
// chat models, keeping order.
func SplitEmbeddingModels(models []string) (chat, embed []string) {
	for _, m := range models {
		l := strings.ToLower(m)
		if strings.Contains(l, "embed") || strings.HasPrefix(l, "bge-") || strings.HasPrefix(l, "all-minilm") || strings.Contains(l, "minilm") {
			embed = append(embed, m)
		} else {
			chat = append(chat, m)
		}
	}
	return chat, embed
}

func getJSON(ctx context.Context, hc *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v)
}
