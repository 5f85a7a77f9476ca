package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/musecheck/muse/sources/images"
	"golang.org/x/sync/errgroup"
)

// maxImageCache bounds the lead-image hashes an engine remembers; past it
// the cache starts over, which costs downloads, never correctness.
const maxImageCache = 4096

// imageHashes remembers the perceptual hash of each page image URL an
// engine has loaded (or why it could not), so that pages met again in a
// second pass, a rerun or another check are not downloaded again.
type imageHashes struct {
	mu sync.Mutex
	m  map[string]imageHash
}

type imageHash struct {
	hash uint64
	err  error
}

func (h *imageHashes) get(u string) (imageHash, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[u]
	return v, ok
}

func (h *imageHashes) put(u string, v imageHash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxImageCache {
		h.m = map[string]imageHash{}
	}
	h.m[u] = v
}

// postHashes are the hashes of the post images that were loaded.
func postHashes(c *Check) []uint64 {
	var out []uint64
	for _, im := range c.Images {
		if im.PHash == "" {
			continue
		}
		if h, err := strconv.ParseUint(im.PHash, 16, 64); err == nil {
			out = append(out, h)
		}
	}
	return append(out, videoHashes(c.Video)...)
}

// visualRelevance compares each page's lead image, from index from on, with
// the post's images by perceptual hash (the paper compares images too and
// keeps pages at 0.7 or more). A page showing the post's picture is about
// the post whatever its words, so one judged irrelevant by its text is kept.
func (r *run) visualRelevance(ctx context.Context, st Stage, from int) {
	c := r.c
	hashes := postHashes(c)
	if len(hashes) == 0 {
		return
	}
	var idx []int
	for i := from; i < len(c.Sources); i++ {
		s := c.Sources[i]
		if s.Image != "" && (s.Eligible() || s.Status == StatusIrrelevant) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	sims := make([]float64, len(idx))
	var g errgroup.Group
	g.SetLimit(r.e.opts.ImageParallel)
	for k, i := range idx {
		if ctx.Err() != nil {
			break
		}
		u := c.Sources[i].Image
		g.Go(func() error {
			h, ok := r.e.imageCache.get(u)
			if !ok {
				img, err := r.e.imageLoader().Load(ctx, u)
				if ctx.Err() != nil {
					return nil
				}
				if err != nil {
					h = imageHash{err: err}
				} else {
					h = imageHash{hash: img.Hash}
				}
				r.e.imageCache.put(u, h)
			}
			if h.err != nil {
				return nil
			}
			for _, ph := range hashes {
				sims[k] = max(sims[k], images.Similarity(ph, h.hash))
			}
			return nil
		})
	}
	_ = g.Wait() // an image that cannot be loaded counts as no likeness
	for k, i := range idx {
		s := &c.Sources[i]
		s.ImageSimilarity = sims[k]
		if sims[k] >= images.MatchThreshold && s.Status == StatusIrrelevant {
			s.Status = StatusPending
			s.Reason = fmt.Sprintf("kept for its image: it matches the post's image (similarity %.2f, at least %.2f), "+
				"though its text scored %.2f", sims[k], images.MatchThreshold, s.Relevance)
			r.item(st, s.clone(), "source kept for its image")
			r.emit(Event{Kind: EventProgress, Stage: st, Message: s.URL + " " + s.Reason})
		}
	}
}
