package setup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/search"
)

// chatTasks are the tasks a check calls a chat model for.
var chatTasks = []string{llm.TaskQueries, llm.TaskEvidence, llm.TaskCorrection, llm.TaskVision}

// ModelPrice is whether a model the configuration uses has a price.
type ModelPrice struct {
	Model  string    `json:"model"`
	Tasks  []string  `json:"tasks"`
	Priced bool      `json:"priced"`
	Price  llm.Price `json:"price"`
}

// ModelPrices lists the models client uses for a check's tasks and whether
// each has a price (built in, or [prices] in the config file).
func ModelPrices(client *llm.Client) []ModelPrice {
	var out []ModelPrice
	for _, task := range chatTasks {
		m := client.ModelFor(task)
		if m == "" {
			continue
		}
		i := slices.IndexFunc(out, func(p ModelPrice) bool { return p.Model == m })
		if i < 0 {
			p, ok := client.PriceFor(m)
			out = append(out, ModelPrice{Model: m, Priced: ok, Price: p})
			i = len(out) - 1
		}
		out[i].Tasks = append(out[i].Tasks, task)
	}
	return out
}

// checkCaps refuses a spend cap that cannot work: a cap in dollars counts
// nothing for a model with no price (Ollama, Azure deployments, routers),
// so such a model would spend without limit under a cap that looks set.
func checkCaps(cfg *Config, checkCap float64, client *llm.Client) error {
	if checkCap <= 0 && cfg.SpendCapDayUSD <= 0 {
		return nil
	}
	var unpriced []string
	for _, p := range ModelPrices(client) {
		if !p.Priced {
			unpriced = append(unpriced, p.Model)
		}
	}
	if len(unpriced) == 0 {
		return nil
	}
	return fmt.Errorf("%w: a spend cap is set but %s %s no price, so the cap could not count %s: add "+
		"[prices.\"%s\"] prompt = … completion = … (US dollars per million tokens) to %s, or remove the cap",
		ErrConfig, strings.Join(unpriced, ", "), plural(len(unpriced), "has", "have"),
		plural(len(unpriced), "its calls", "their calls"), unpriced[0], cfg.configFileName())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// configFileName is the config file read, or the one `muse config init`
// would write.
func (c *Config) configFileName() string {
	if c.File != "" {
		return c.File
	}
	return c.DefaultFile()
}

// DefaultFile is the config file muse reads when --config is not given.
func (c *Config) DefaultFile() string { return filepath.Join(c.ConfigDir, "config.toml") }

// ErrNothingToSearch is wrapped when no web search provider is configured
// and the local archive is empty: a check could find nothing, so it is not
// started (and no model is paid for its queries).
var ErrNothingToSearch = errors.New("nothing to search")

// NothingToSearchHint says how to give muse something to search.
const NothingToSearchHint = "configure a search provider (for a self-hosted SearXNG: SEARXNG_URL=http://localhost:8888, " +
	"with search.formats including json in its settings.yml; or BRAVE_API_KEY for the Brave Search API; " +
	"`muse doctor` lists them all), or import pages and fact-checks into the local archive with " +
	"`muse archive add PATH|URL...`"

// CheckSearchable returns an error wrapping ErrNothingToSearch when no web
// search provider is configured and the local archive holds nothing: no
// page and no fact-check.
func CheckSearchable(ctx context.Context, cfg *Config) error {
	if len(search.Providers(SearchOptions(cfg))) > 0 {
		return nil
	}
	n := 0
	if st, err := archive.Open(ctx, cfg.ArchivePath()); err == nil {
		n, _ = st.Count(ctx)
		if n == 0 { // fact-checks alone are something to match a post against
			n, _ = st.ClaimCount(ctx)
		}
		st.Close()
	}
	if n > 0 {
		return nil
	}
	return fmt.Errorf("%w: no search provider is configured and the local archive is empty: %s", ErrNothingToSearch, NothingToSearchHint)
}
