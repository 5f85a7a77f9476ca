package pipeline

import (
	"context"
	"time"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/search"
)

// The engine reaches the world only through these small interfaces, so that
// each stage can be tested on its own and the same engine runs headless, in
// the TUI and in benchmarks. NewFromConfig fills them with the real clients.

// Model is what the engine asks a language model. Each method is one call
// (Embed may batch); usage is reported so the Check can account for it.
type Model interface {
	// Queries writes up to n web search queries for the post. informative
	// is false when the model finds nothing in the post worth searching.
	Queries(ctx context.Context, in QueriesInput) (queries []string, informative bool, u CallUsage, err error)
	// Evidence picks refuting and context paragraphs from one page. The
	// quotes are the model's words and are verified by the engine.
	Evidence(ctx context.Context, in EvidenceInput) (refutes, context []string, u CallUsage, err error)
	// Correction writes the correction, calling onDelta with each streamed
	// piece. On a cut stream it returns the text received and the error.
	Correction(ctx context.Context, in CorrectionInput, onDelta func(string)) (text string, u CallUsage, err error)
	// Describe turns what is known about an image into the informative
	// description used in prompts.
	Describe(ctx context.Context, post Post, img Image) (description string, u CallUsage, err error)
	// ModelName is shown in the correction's record.
	ModelName(task string) string
}

// Embedder turns texts into vectors, for relevance. Optional.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, CallUsage, error)
}

// CallUsage is what one model call cost: llm.Usage, the one usage record
// (calls, cached calls, tokens, cost) with its Add.
type CallUsage = llm.Usage

// QueriesInput is the post as the query prompt sees it.
type QueriesInput struct {
	Post   Post
	Images []Image
	Video  *Video
	N      int
}

// EvidenceInput is one page, already cut to the paragraphs most related to
// the post.
type EvidenceInput struct {
	Post       Post
	Images     []Image
	Video      *Video
	URL        string
	Title      string
	Publisher  string
	Published  time.Time
	Paragraphs []string
}

// CorrectionInput is the post and the evidence the correction may use,
// best first.
type CorrectionInput struct {
	Post     Post
	Images   []Image
	Video    *Video
	Evidence []EvidenceForPrompt
	// Claims are the post's claims when it has several, numbered from 1;
	// each EvidenceForPrompt.Claim names one.
	Claims []string
	// Language is the language to write in (ISO 639-1): the checker's
	// Options.CorrectionLanguage, else the post's; "" is English.
	Language string
	// Insist is set when the model's first correction came back in
	// another language: the prompt then says once more which to write in.
	Insist bool
}

// EvidenceForPrompt is one included quote with what a reader needs to
// weigh it.
type EvidenceForPrompt struct {
	URL       string
	Publisher string
	Tier      Tier
	Published time.Time
	Kind      Kind
	Claim     int // the claim it bears on, from 1; 0 is claim 1
	Quote     string
	// Origin names the origin the page shares with other pages of the
	// evidence (Check.Origins: "AP"), "" when no other page shares it.
	Origin string
}

// Fetcher reads one web page. FinalURL is where redirects ended.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (body []byte, finalURL string, err error)
}

// Extractor turns HTML into an article.
type Extractor func(html []byte, pageURL string) (*extract.Article, error)

// Rating is what the engine needs to know about a publisher.
type Rating struct {
	Domain      string
	Publisher   string
	Factuality  string
	Bias        string
	Tier        Tier
	Origin      string // where the rating came from
	UserContent bool   // a platform of user posts (social media, video): never a reference
	Boost       bool   // the person always wants this publisher first
	Drop        bool   // the person never wants this publisher
}

// Rater rates the publisher of a URL.
type Rater interface {
	Rate(url string) Rating
}

// CredibleSites is a Rater that can list the domains of its high- and
// medium-tier publishers, most trusted first. With one, each query is also
// sent restricted to those sites, as the paper searches its rated
// publishers, so credible pages are found even when the open web is
// flooded.
type CredibleSites interface {
	CredibleDomains() []string
}

// ArchivedPage is a read page worth keeping in the local archive.
type ArchivedPage struct {
	URL       string
	Title     string
	Text      string
	Publisher string
	Published time.Time
	Language  string // ISO 639-1; "" reads as English
}

// Archiver keeps every page the engine reads. Optional. A failed Save
// is a warning, not a failed check; its error must say which page it was
// saving (sources/archive's "archive <url>: …"), because the engine
// reports it as it is.
type Archiver interface {
	Save(ctx context.Context, p ArchivedPage) error
}

// ClaimMatcher finds published fact-checks whose claim a text repeats,
// best first, only those it is confident of. The archive is one
// (ArchiveOf): the engine asks its Archive when it is a ClaimMatcher.
// posted is when the text was posted, when the caller wants only
// fact-checks already out then (triage: a repeat of a claim already
// checked); zero wants later ones too (a check: a later debunk is
// evidence).
type ClaimMatcher interface {
	MatchFactChecks(ctx context.Context, text, lang string, posted time.Time) ([]FactCheck, error)
}

// Deps are the engine's collaborators. Model may be nil only in NoLLM mode.
type Deps struct {
	Model     Model
	Embedder  Embedder
	Searchers []search.Searcher
	Fetcher   Fetcher
	Extract   Extractor
	Rater     Rater
	Archive   Archiver
	// Images loads post images and pages' lead images; nil means
	// ImageLoader{} (public addresses only, default size caps).
	Images ImageLoading
	// OCR reads the text in an image; nil means images.OCR (tesseract,
	// when installed).
	OCR func(ctx context.Context, img *images.Image) (string, error)
	// Transcriber transcribes a video's sound (the model server's
	// /audio/transcriptions). Optional: without one a video is read from
	// its frames, saying so.
	Transcriber Transcriber
	// Videos downloads video URLs; nil means VideoDownloader{} (public
	// addresses only, the size cap of Options.Video).
	Videos VideoFetching
	// ImageSearchers search the web by image (reverse image search) for
	// post images at public URLs. Optional.
	ImageSearchers []search.ImageSearcher
	// DomainRegistered says when a registrable domain was registered
	// (RDAP: sources/rdap), for the pages of publishers no rating knows;
	// a domain registered weeks before the post is flagged. Optional.
	DomainRegistered func(ctx context.Context, domain string) (time.Time, error)
	// Warnings say what the engine was built without (setup.NewFromConfig:
	// a response cache or archive that could not be opened); every check
	// run carries them once.
	Warnings []string
}
