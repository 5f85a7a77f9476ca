package eval

import (
	"context"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm"
)

// TaskJudge is the judge's task name in the model client's usage.
const TaskJudge = "judge"

// Judge rates corrections on the paper's criteria with a model of its own.
type Judge struct {
	Client *llm.Client
}

// Model is the judge's model.
func (j *Judge) Model() string { return j.Client.ModelFor(TaskJudge) }

// Score asks the judge about one correction, showing it the post, the
// correction and each cited page's text (texts, by URL; a URL without text
// is shown as unread, with why when pages says).
func (j *Judge) Score(ctx context.Context, p Post, correction string, urls []string, texts map[string]string, pages map[string]*Page) (prompts.Judgement, llm.Usage, error) {
	refs := make([]prompts.JudgeReference, len(urls))
	for i, u := range urls {
		refs[i] = prompts.JudgeReference{URL: u, Text: texts[u]}
		if pg := pages[u]; pg != nil && pg.Archived {
			refs[i].Archived = pg.Error
		}
		if refs[i].Text == "" {
			refs[i].Unread = "no text"
			if pg := pages[u]; pg != nil && pg.Error != "" {
				refs[i].Unread = pg.Error
			}
		}
	}
	msgs, err := prompts.Judge(prompts.JudgeInput{Post: promptPost(p), Correction: correction, References: refs})
	if err != nil {
		return prompts.Judgement{}, llm.Usage{}, err
	}
	resp, err := j.Client.Complete(ctx, llm.Request{Task: TaskJudge, Messages: msgs, Schema: prompts.JudgeSchema()})
	if err != nil {
		return prompts.Judgement{}, llm.Usage{}, err
	}
	jd, err := prompts.ParseJudge(resp.Text, len(urls))
	return jd, resp.Usage, err
}

// Verdict asks the judge which AVeriTeC verdict the correction reaches.
func (j *Judge) Verdict(ctx context.Context, p Post, correction string) (string, llm.Usage, error) {
	msgs, err := prompts.Verdict(promptPost(p), correction)
	if err != nil {
		return "", llm.Usage{}, err
	}
	resp, err := j.Client.Complete(ctx, llm.Request{Task: TaskJudge, Messages: msgs, Schema: prompts.VerdictSchema(), MaxTokens: 50})
	if err != nil {
		return "", llm.Usage{}, err
	}
	v, err := prompts.ParseVerdict(resp.Text)
	return v, resp.Usage, err
}

// promptPost is the post as the prompts show it.
func promptPost(p Post) prompts.Post {
	pp := prompts.Post{Text: p.Post.Text, Author: p.Post.Author, Handle: p.Post.Handle, URL: p.Post.URL, PostedAt: p.Post.PostedAt}
	if p.Post.Language != "" {
		pp.Language = lang.Label(p.Post.Language)
	}
	return pp
}
