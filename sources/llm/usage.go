package llm

import (
	"cmp"
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	openai "github.com/sashabaranov/go-openai"
)

// Usage counts model calls and tokens as the server reported them, and their
// cost from the price table (0 for models without a price, such as local
// ones, and for answers replayed from the response cache).
type Usage struct {
	LLMCalls int `json:"llm_calls"`
	// CachedCalls counts the calls among Calls answered by the response
	// cache (sources/httpcache): their tokens are counted, their cost is 0.
	CachedCalls int `json:"cached_calls"`
	// PromptTokens are the prompt tokens the server read afresh, and
	// CachedPromptTokens those it read from its own prompt cache (OpenAI's
	// usage.prompt_tokens_details.cached_tokens, which OpenAI counts inside
	// prompt_tokens): apart, because they are billed at a lower rate. The
	// whole prompt is their sum. A server that does not say (llama.cpp,
	// Ollama) has every prompt token in PromptTokens.
	PromptTokens       int     `json:"prompt_tokens"`
	CachedPromptTokens int     `json:"cached_prompt_tokens"`
	CompletionTokens   int     `json:"completion_tokens"`
	CostUSD            float64 `json:"cost_usd"`
	// UnreportedCalls counts the calls among LLMCalls whose server sent
	// no usage: their tokens and cost are not known (not 0), and are not
	// in the counts above. The spend caps hold them at muse's own count
	// of their tokens.
	UnreportedCalls int `json:"unreported_calls,omitempty"`
}

// CostText is the cost as a report says it: "$0.0123"; "cost unknown
// (the server reported no usage)" when no call's usage is known; "$0.0123
// and 2 calls of unknown cost" when some are not; and a word on the price
// when tokens were spent at no counted cost.
func (u Usage) CostText() string {
	switch {
	case u.UnreportedCalls > 0 && u.UnreportedCalls >= u.LLMCalls-u.CachedCalls:
		return "cost unknown (the server reported no usage)"
	case u.UnreportedCalls == 1:
		return fmt.Sprintf("$%.4f and 1 call of unknown cost", u.CostUSD)
	case u.UnreportedCalls > 1:
		return fmt.Sprintf("$%.4f and %d calls of unknown cost", u.CostUSD, u.UnreportedCalls)
	case u.CostUSD == 0 && u.Tokens() > 0 && u.LLMCalls > u.CachedCalls:
		// Tokens were spent and nothing was counted: muse's table has no
		// price for the model (or a price of 0), which is not "free".
		return "$0.0000 (no price, or a price of 0, for the model)"
	}
	return fmt.Sprintf("$%.4f", u.CostUSD)
}

// CostCell is the cost in a table's column: "$0.0123"; "unknown" when no
// call's usage is known; "≥$0.0123" (at least that) when some are not.
func (u Usage) CostCell() string {
	switch {
	case u.UnreportedCalls > 0 && u.UnreportedCalls >= u.LLMCalls-u.CachedCalls:
		return "unknown"
	case u.UnreportedCalls > 0:
		return fmt.Sprintf("≥$%.4f", u.CostUSD)
	}
	return fmt.Sprintf("$%.4f", u.CostUSD)
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.LLMCalls += o.LLMCalls
	u.CachedCalls += o.CachedCalls
	u.PromptTokens += o.PromptTokens
	u.CachedPromptTokens += o.CachedPromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.CostUSD += o.CostUSD
	u.UnreportedCalls += o.UnreportedCalls
}

// Tokens is every token of the calls: the prompt (read afresh or from the
// server's prompt cache) and the completion.
func (u Usage) Tokens() int { return u.PromptTokens + u.CachedPromptTokens + u.CompletionTokens }

// Price is what a model costs, in USD per million tokens.
type Price struct {
	PromptPerMTok     float64 `toml:"prompt_per_mtok" json:"prompt_per_mtok"`
	CompletionPerMTok float64 `toml:"completion_per_mtok" json:"completion_per_mtok"`
	// CachedPromptPerMTok is the rate of prompt tokens read from the
	// server's prompt cache; 0 when not known, and then they are priced as
	// other prompt tokens (an upper bound).
	CachedPromptPerMTok float64 `toml:"cached_prompt_per_mtok" json:"cached_prompt_per_mtok,omitempty"`
}

// DefaultPrices is a fresh copy of the built-in table of OpenAI list prices
// (standard tier, USD per million tokens: prompt, completion, cached
// prompt where OpenAI bills one). Keys match a model name exactly or
// as a prefix before a dated suffix ("gpt-4o" prices "gpt-4o-2024-08-06").
// Prices change; Config.Prices overrides any entry.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"gpt-4o":                 {2.50, 10.00, 1.25},
		"gpt-4o-mini":            {0.15, 0.60, 0.075},
		"gpt-4.1":                {2.00, 8.00, 0.50},
		"gpt-4.1-mini":           {0.40, 1.60, 0.10},
		"gpt-4.1-nano":           {0.10, 0.40, 0.025},
		"gpt-4-turbo":            {10.00, 30.00, 0}, // no cached rate
		"gpt-4":                  {30.00, 60.00, 0},
		"gpt-3.5-turbo":          {0.50, 1.50, 0},
		"gpt-5":                  {1.25, 10.00, 0.125},
		"gpt-5-mini":             {0.25, 2.00, 0.025},
		"gpt-5-nano":             {0.05, 0.40, 0.005},
		"o1":                     {15.00, 60.00, 7.50},
		"o1-mini":                {1.10, 4.40, 0.55},
		"o3":                     {2.00, 8.00, 0.50},
		"o3-mini":                {1.10, 4.40, 0.55},
		"o4-mini":                {1.10, 4.40, 0.275},
		"text-embedding-3-small": {0.02, 0, 0},
		"text-embedding-3-large": {0.13, 0, 0},
		"text-embedding-ada-002": {0.10, 0, 0},
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
	return c.costOf(model, Usage{PromptTokens: promptTokens, CompletionTokens: completionTokens})
}

// costOf is what u's tokens cost on a model: cached prompt tokens at the
// cached rate, or at the prompt rate when the price has none.
func (c *Client) costOf(model string, u Usage) float64 {
	p, _ := c.PriceFor(model)
	cachedRate := cmp.Or(p.CachedPromptPerMTok, p.PromptPerMTok)
	return (float64(u.PromptTokens)*p.PromptPerMTok + float64(u.CachedPromptTokens)*cachedRate +
		float64(u.CompletionTokens)*p.CompletionPerMTok) / 1e6
}

// usageOf is one call's usage, the prompt tokens the server read from its
// prompt cache apart; a replay from the response cache cost nothing.
func (c *Client) usageOf(model string, u openai.Usage, cached bool) Usage {
	if !cached && u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0 {
		return Usage{LLMCalls: 1, UnreportedCalls: 1}
	}
	cachedPrompt := 0
	if d := u.PromptTokensDetails; d != nil {
		cachedPrompt = min(max(d.CachedTokens, 0), u.PromptTokens)
	}
	out := Usage{LLMCalls: 1, PromptTokens: u.PromptTokens - cachedPrompt, CachedPromptTokens: cachedPrompt,
		CompletionTokens: u.CompletionTokens}
	if cached {
		out.CachedCalls = 1
	} else {
		out.CostUSD = c.costOf(model, out)
	}
	return out
}

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
)

// CountTokens is muse's own count of text's tokens: OpenAI's o200k
// encoding (tiktoken-go, whose vocabulary is compiled in: nothing is
// downloaded), close enough for other models' budgets. It budgets page
// text in every script alike, and counts the tokens of a call whose server
// reported no usage; one token for every three bytes if the encoding
// cannot be had.
func CountTokens(text string) int {
	codecOnce.Do(func() { codec, _ = tokenizer.Get(tokenizer.O200kBase) })
	if codec != nil {
		if n, err := codec.Count(text); err == nil {
			return n
		}
	}
	return (len(text) + 2) / 3
}

// countedCost is what a call whose server reported no usage is taken to
// have cost, for the spend caps: muse's count of the prompt and answer
// tokens at the model's price.
func (c *Client) countedCost(model string, msgs []Message, answer string) float64 {
	prompt := 0
	for _, m := range msgs {
		prompt += 4 + CountTokens(m.Content)
		for _, p := range m.MultiContent {
			prompt += CountTokens(p.Text)
			if p.ImageURL != nil {
				prompt += 800
			}
		}
	}
	return c.costOf(model, Usage{PromptTokens: prompt, CompletionTokens: CountTokens(answer)})
}
