package watch

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/sources/jobs"
)

// QueueTo is an Options.Enqueue that puts each cluster's first post in the
// job queue q as `muse batch --queue` does (a post is checked once however
// often it is queued), for model with the options co; the batch's ID comes
// back. The workers (`muse worker`) check them; nothing is published.
func QueueTo(q *jobs.Queue, model string, co batch.CheckOptions) func(ctx context.Context, cs []Cluster) (string, error) {
	return func(ctx context.Context, cs []Cluster) (string, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, c := range cs {
			p := batch.Post{Text: c.Post.Text, Author: c.Post.Author, Handle: c.Post.Handle, PostedAt: c.Post.PostedAt, URL: c.Post.URL}
			for _, im := range c.Post.Images {
				p.Images = append(p.Images, im.URL)
			}
			if err := enc.Encode(p); err != nil {
				return "", err
			}
		}
		enq, err := batch.Enqueue(ctx, q, &buf, model, co)
		return enq.BatchID, err
	}
}
