package notewriter

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The fields asked of every eligible post and its expansions: those the
// template note writer asks (twitter/communitynotes
// documentation/api/overview.md), with the post's language and the note
// requests and source links of the people who asked for a note.
const (
	eligibleTweetFields = "author_id,created_at,lang,referenced_tweets,media_metadata,note_tweet,note_request_suggestions,suggested_source_links_with_counts"
	eligibleExpansions  = "attachments.media_keys,referenced_tweets.id,referenced_tweets.id.attachments.media_keys"
	eligibleMediaFields = "alt_text,duration_ms,height,media_key,preview_image_url,type,url,width,variants"
)

// EligibleOptions ask for a feed of posts eligible for notes.
type EligibleOptions struct {
	// Max is how many posts (X takes 1 to 100; 0: 10).
	Max int
	// Lang is the feed's language (post_selection feed_lang): an ISO 639-1
	// code or "all"; "" is X's default, English.
	Lang string
	// Live asks for the live feed (test_mode=false), open to admitted
	// writers only.
	Live bool
	// Next is the pagination token of the previous page.
	Next string
}

// Media is one photo, video or GIF of an eligible post.
type Media struct {
	Key     string `json:"media_key"`
	Type    string `json:"type"`
	URL     string `json:"url,omitempty"`
	Preview string `json:"preview_image_url,omitempty"`
	AltText string `json:"alt_text,omitempty"`
}

// Request is one note request's suggestion: what the person who asked
// for a note said the post lacks, and the source they gave.
type Request struct {
	ID         string `json:"suggestion_id,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
	SourceLink string `json:"source_link,omitempty"`
}

// SuggestedSource is a link the people asking for a note suggested, with
// how many suggested it.
type SuggestedSource struct {
	URL   string `json:"url"`
	Count int    `json:"count,omitempty"`
}

// EligiblePost is a post X offers for a note.
type EligiblePost struct {
	ID        string            `json:"id"`
	Text      string            `json:"text"`
	AuthorID  string            `json:"author_id,omitempty"`
	Lang      string            `json:"lang,omitempty"`
	CreatedAt time.Time         `json:"created_at,omitzero"`
	Media     []Media           `json:"media,omitempty"`
	Requests  []Request         `json:"note_request_suggestions,omitempty"`
	Sources   []SuggestedSource `json:"suggested_source_links_with_counts,omitempty"`
	// Quoted and RepliedTo are the posts it quotes and answers, when X
	// included them.
	Quoted    *EligiblePost `json:"quoted,omitempty"`
	RepliedTo *EligiblePost `json:"replied_to,omitempty"`
}

// URL is the post's address on X.
func (p EligiblePost) URL() string { return "https://x.com/i/status/" + p.ID }

// tweet is a post as X's API answers it.
type tweet struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	AuthorID  string `json:"author_id"`
	Lang      string `json:"lang"`
	CreatedAt string `json:"created_at"`
	NoteTweet *struct {
		Text string `json:"text"`
	} `json:"note_tweet"`
	Attachments struct {
		MediaKeys []string `json:"media_keys"`
	} `json:"attachments"`
	Referenced []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"referenced_tweets"`
	Requests []Request `json:"note_request_suggestions"`
	Sources  []struct {
		URL   *string `json:"url"`
		Count *int    `json:"count"`
	} `json:"suggested_source_links_with_counts"`
}

func (t tweet) post(media map[string]Media) EligiblePost {
	p := EligiblePost{ID: t.ID, Text: t.Text, AuthorID: t.AuthorID, Lang: t.Lang, Requests: t.Requests}
	if t.NoteTweet != nil && strings.TrimSpace(t.NoteTweet.Text) != "" {
		p.Text = t.NoteTweet.Text // a post over 280 characters
	}
	p.CreatedAt, _ = time.Parse(time.RFC3339, t.CreatedAt)
	for _, k := range t.Attachments.MediaKeys {
		if m, ok := media[k]; ok {
			p.Media = append(p.Media, m)
		}
	}
	for _, s := range t.Sources {
		if s.URL != nil && *s.URL != "" {
			p.Sources = append(p.Sources, SuggestedSource{URL: *s.URL, Count: cmp.Or(deref(s.Count), 1)})
		}
	}
	return p
}

func deref(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// Eligible asks for the posts eligible for notes
// (GET /2/notes/search/posts_eligible_for_notes), with their media, the
// posts they quote or answer, the note requests' suggestions and the
// suggested source links; it returns them and the next page's token.
func (c *Client) Eligible(ctx context.Context, o EligibleOptions) ([]EligiblePost, string, error) {
	q := url.Values{}
	q.Set("test_mode", strconv.FormatBool(!o.Live))
	q.Set("max_results", strconv.Itoa(min(max(cmp.Or(o.Max, 10), 1), 100)))
	q.Set("tweet.fields", eligibleTweetFields)
	q.Set("expansions", eligibleExpansions)
	q.Set("media.fields", eligibleMediaFields)
	if l := strings.TrimSpace(o.Lang); l != "" {
		q.Set("post_selection", "feed_lang:"+l)
	}
	if o.Next != "" {
		q.Set("pagination_token", o.Next)
	}
	var out struct {
		Data     []tweet `json:"data"`
		Includes struct {
			Media  []Media `json:"media"`
			Tweets []tweet `json:"tweets"`
		} `json:"includes"`
		Meta struct {
			NextToken string `json:"next_token"`
		} `json:"meta"`
	}
	if err := c.do(ctx, http.MethodGet, "/2/notes/search/posts_eligible_for_notes?"+q.Encode(), nil, false, &out); err != nil {
		return nil, "", fmt.Errorf("posts eligible for notes: %w", err)
	}
	media := map[string]Media{}
	for _, m := range out.Includes.Media {
		media[m.Key] = m
	}
	refs := map[string]tweet{}
	for _, t := range out.Includes.Tweets {
		refs[t.ID] = t
	}
	var posts []EligiblePost
	for _, t := range out.Data {
		p := t.post(media)
		for _, r := range t.Referenced {
			rt, ok := refs[r.ID]
			if !ok {
				continue
			}
			rp := rt.post(media)
			switch r.Type {
			case "quoted":
				p.Quoted = &rp
			case "replied_to":
				p.RepliedTo = &rp
			}
		}
		posts = append(posts, p)
	}
	return posts, out.Meta.NextToken, nil
}

// Evaluator types and score buckets of X's note evaluator, as
// notes_written reports them.
const (
	ScoreClaimOpinion    = "ClaimOpinion"
	ScoreURLValidity     = "UrlValidity"
	ScoreHarassmentAbuse = "HarassmentAbuse"
)

// WrittenNote is one note the writer wrote, as
// GET /2/notes/search/notes_written answers it.
type WrittenNote struct {
	ID             string   `json:"id"`
	PostID         string   `json:"post_id"`
	Text           string   `json:"text"`
	Classification string   `json:"classification,omitempty"`
	Tags           []string `json:"misleading_tags,omitempty"`
	// Status is the note's rating status (needs_more_ratings,
	// currently_rated_helpful, …); "" in test mode until X gives one.
	Status string `json:"status,omitempty"`
	// Scores are the evaluator's buckets (high, medium, low, in lower
	// case) by evaluator type; none while the note awaits evaluation.
	Scores map[string]string `json:"scores,omitempty"`
}

// NotesWritten lists the notes the writer wrote (test mode unless live),
// newest first as X answers, at most limit of them (following next_token).
func (c *Client) NotesWritten(ctx context.Context, live bool, limit int) ([]WrittenNote, error) {
	var notes []WrittenNote
	next := ""
	for {
		q := url.Values{}
		q.Set("test_mode", strconv.FormatBool(!live))
		q.Set("max_results", strconv.Itoa(min(max(limit, 1), 100)))
		if next != "" {
			q.Set("pagination_token", next)
		}
		var out struct {
			Data []struct {
				ID   string `json:"id"`
				Info struct {
					PostID         string   `json:"post_id"`
					Text           string   `json:"text"`
					Classification string   `json:"classification"`
					Tags           []string `json:"misleading_tags"`
				} `json:"info"`
				Status     string `json:"status"`
				TestResult *struct {
					Outcomes []struct {
						Bucket string `json:"evaluator_score_bucket"`
						Type   string `json:"evaluator_type"`
					} `json:"evaluation_outcome"`
				} `json:"test_result"`
			} `json:"data"`
			Meta struct {
				NextToken string `json:"next_token"`
			} `json:"meta"`
		}
		if err := c.do(ctx, http.MethodGet, "/2/notes/search/notes_written?"+q.Encode(), nil, false, &out); err != nil {
			return notes, fmt.Errorf("notes written: %w", err)
		}
		for _, d := range out.Data {
			n := WrittenNote{ID: d.ID, PostID: d.Info.PostID, Text: d.Info.Text, Classification: d.Info.Classification,
				Tags: d.Info.Tags, Status: d.Status}
			if d.TestResult != nil {
				for _, o := range d.TestResult.Outcomes {
					if n.Scores == nil {
						n.Scores = map[string]string{}
					}
					n.Scores[o.Type] = strings.ToLower(o.Bucket)
				}
			}
			notes = append(notes, n)
			if len(notes) >= limit {
				return notes, nil
			}
		}
		if next = out.Meta.NextToken; next == "" || len(out.Data) == 0 {
			return notes, nil
		}
	}
}
