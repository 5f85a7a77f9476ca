package prompts

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/ratings"
)

// CorrectionStart is how every correction begins (the paper's "This tweet
// is", for any platform).
const CorrectionStart = "This post is"

// EvidenceItem is what the correction prompt shows of one source: its quotes
// of one kind.
type EvidenceItem struct {
	URL       string
	Publisher string
	Tier      ratings.Tier
	Published time.Time
	Relevance float64
	Kind      Kind
	// Claim is the number of the post's claim (Post.Claims) the quotes
	// bear on, from 1; 0 is claim 1.
	Claim  int
	Quotes []string
	// Origin names the origin the source shares with other sources ("AP":
	// copies of one wire story), "" when it shares none: the prompt says
	// which sources carry one report, so they are not presented as
	// independent.
	Origin string
}

// Correction builds the correction prompt. Evidence is shown ordered by
// tier (high, medium, low, unrated), then relevance, refuting before context;
// items without quotes are left out. With no evidence the prompt asks for a
// cautious answer without URLs. language labels the language to write in
// ("Spanish (es)"): empty means the post's (p.Language), and an empty
// label, or "English (en)", asks for the paper's English "This post is".
// Sources are named by id ("[S1]", SourceID), not by URL, and the model is
// asked to cite them so: CorrectionSources gives the URL of each id.
// Stream it with no schema.
func Correction(p Post, ev []EvidenceItem, language string) ([]llm.Message, error) {
	p = cleanPost(p)
	language = cmp.Or(oneLine(clean(language)), p.Language)
	if strings.HasSuffix(language, "(en)") {
		language = ""
	}
	facts := factsBySource(orderEvidence(ev))
	after, shared := false, false
	for i := range facts {
		facts[i].Timing = TimingOf(facts[i].Published, p.PostedAt)
		after = after || facts[i].Timing.After()
		if facts[i].Origin == "" {
			continue
		}
		var ids []string
		for j := range facts {
			if j != i && facts[j].Origin == facts[i].Origin {
				ids = append(ids, "["+SourceID(j)+"]")
			}
		}
		facts[i].SameOrigin = strings.Join(ids, ", ")
		shared = shared || len(ids) > 0
	}
	return messages("correction", map[string]any{"Post": p, "Evidence": facts, "Language": language, "AfterPost": after, "SharedOrigins": shared})
}

// SourceID is how the correction prompt names its i-th source (from 0):
// "S1", "S2"… A model cites "[S1]" in a few tokens where a URL takes twenty
// or more; the engine puts the URL in its place (CorrectionSources gives
// the URL of each id) and drops an id that names no source.
func SourceID(i int) string { return "S" + strconv.Itoa(i+1) }

// CorrectionSources are the URLs of the sources of Correction(p, ev, …) in
// the order of their ids: the URL of SourceID(i) is at i.
func CorrectionSources(ev []EvidenceItem) []string {
	var out []string
	for _, s := range factsBySource(orderEvidence(ev)) {
		out = append(out, s.URL)
	}
	return out
}

// sourceFacts is one source of the correction prompt with all its quotes,
// so that a source giving several kinds is named once.
type sourceFacts struct {
	URL, Publisher string
	Tier           ratings.Tier
	Published      time.Time
	Facts          []fact
	// Timing is when the source was published relative to the post (nil
	// when either date is unknown). The prompt marks a source published
	// after the post, so that the correction can tell it from what the
	// author could have known, and one a year or more older (stale); a
	// source shortly before the post needs no more than its date.
	Timing *Timing
	// Origin is the origin the source shares with others, SameOrigin the
	// ids of those others ("[S2], [S4]"); "" when it shares none.
	Origin, SameOrigin string
}

// factsBySource groups ordered items by URL, in the order of each URL's
// first item.
func factsBySource(ev []EvidenceItem) []sourceFacts {
	var out []sourceFacts
	at := map[string]int{}
	for _, e := range ev {
		i, ok := at[e.URL]
		if !ok {
			i = len(out)
			at[e.URL] = i
			out = append(out, sourceFacts{URL: e.URL, Publisher: e.Publisher, Tier: e.Tier, Published: e.Published, Origin: e.Origin})
		}
		for _, q := range e.Quotes {
			out[i].Facts = append(out[i].Facts, fact{Stance: stanceWord(e.Kind), Claim: max(1, e.Claim), Quote: q})
		}
	}
	for i := range out {
		slices.SortStableFunc(out[i].Facts, func(a, b fact) int { return a.rank() - b.rank() })
	}
	return out
}

// fact is one quote of a source as the correction prompt shows it:
// "Refutes: …", "Supports claim 2: …".
type fact struct {
	Stance string // Refutes, Supports, Context
	Claim  int    // from 1
	Quote  string
}

func (f fact) rank() int { return Kind(strings.ToLower(f.Stance)).Rank() }

func stanceWord(k Kind) string {
	switch k {
	case KindSupports:
		return "Supports"
	case KindContext:
		return "Context"
	}
	return "Refutes"
}

func orderEvidence(ev []EvidenceItem) []EvidenceItem {
	out := make([]EvidenceItem, 0, len(ev))
	for _, e := range ev {
		var quotes []string
		for _, q := range e.Quotes {
			if s := strings.TrimSpace(clean(q)); s != "" {
				quotes = append(quotes, s)
			}
		}
		if len(quotes) == 0 || strings.TrimSpace(e.URL) == "" {
			continue
		}
		e.Quotes = quotes
		e.URL = oneLine(clean(e.URL))
		e.Publisher = clean(e.Publisher)
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b EvidenceItem) int {
		if d := a.Tier.Rank() - b.Tier.Rank(); d != 0 {
			return d
		}
		if a.Relevance != b.Relevance {
			if a.Relevance > b.Relevance {
				return -1
			}
			return 1
		}
		return a.Kind.Rank() - b.Kind.Rank()
	})
	return out
}
