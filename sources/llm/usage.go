package llm

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Usage counts model calls and tokens as the server reported them, and their
// cost from the price table (0 for models without a price, such as local
// ones, and for answers replayed from the response cache).
type Usage struct {
	LLMCalls int `json:"llm_calls"`
	// CachedCalls counts the calls among Calls answered by the response
	// cache (sources/httpcache): their tokens are counted, their cost is 0.
	CachedCalls      int     `json:"cached_calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.LLMCalls += o.LLMCalls
	u.CachedCalls += o.CachedCalls
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.CostUSD += o.CostUSD
}

// Price is what a model costs, in USD per million tokens.
type Price struct {
	PromptPerMTok     float64 `toml:"prompt_per_mtok" json:"prompt_per_mtok"`
	CompletionPerMTok float64 `toml:"completion_per_mtok" json:"completion_per_mtok"`
}

// DefaultPrices is a fresh copy of the built-in table of OpenAI list prices
// (standard tier, USD per million tokens). Keys match a model name exactly or
// as a prefix before a dated suffix ("gpt-4o" prices "gpt-4o-2024-08-06").
// Prices change; Config.Prices overrides any entry.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"gpt-4o":                 {2.50, 10.00},
		"gpt-4o-mini":            {0.15, 0.60},
		"gpt-4.1":                {2.00, 8.00},
		"gpt-4.1-mini":           {0.40, 1.60},
		"gpt-4.1-nano":           {0.10, 0.40},
		"gpt-4-turbo":            {10.00, 30.00},
		"gpt-4":                  {30.00, 60.00},
		"gpt-3.5-turbo":          {0.50, 1.50},
		"gpt-5":                  {1.25, 10.00},
		"gpt-5-mini":             {0.25, 2.00},
		"gpt-5-nano":             {0.05, 0.40},
		"o1":                     {15.00, 60.00},
		"o1-mini":                {1.10, 4.40},
		"o3":                     {2.00, 8.00},
		"o3-mini":                {1.10, 4.40},
		"o4-mini":                {1.10, 4.40},
		"text-embedding-3-small": {0.02, 0},
		"text-embedding-3-large": {0.13, 0},
		"text-embedding-ada-002": {0.10, 0},
	}
}

// PriceFor finds the price of a model: an exact entry, else the longest key
// that prefixes the name followed by "-" (dated snapshots), also after a
// router prefix such as "openai/".
func (c *Client) PriceFor(model string) (Price, bool) {
	return lookupPrice(c.prices, model)
}

func lookupPrice(prices map[string]Price, model string) (Price, bool) {
	if p, ok := prices[model]; ok {
		return p, true
	}
	name := model
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
		if p, ok := prices[name]; ok {
			return p, true
		}
	}
	best := ""
	for k := range prices {
		if strings.HasPrefix(name, k+"-") && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return prices[best], true
}

// Cost of tokens on a model; 0 when the model has no price.
func (c *Client) Cost(model string, promptTokens, completionTokens int) float64 {
	p, _ := c.PriceFor(model)
	return (float64(promptTokens)*p.PromptPerMTok + float64(completionTokens)*p.CompletionPerMTok) / 1e6
}

// usageOf is one call's usage; a replay from the cache cost nothing.
func (c *Client) usageOf(model string, u openai.Usage, cached bool) Usage {
	out := Usage{LLMCalls: 1, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if cached {
		out.CachedCalls = 1
	} else {
		out.CostUSD = c.Cost(model, u.PromptTokens, u.CompletionTokens)
	}
	return out
}
