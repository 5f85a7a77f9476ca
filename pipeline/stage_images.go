package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/musecheck/muse/sources/images"
	"golang.org/x/sync/errgroup"
)

// Where each part of an image's description came from (Image.Origin,
// Image.TextOrigin).
const (
	ImageOriginVision = "vision model"
	ImageOriginOCR    = "ocr"
	ImageOriginAlt    = "alt text"
	ImageOriginUser   = "user"
)

// ImageLoading loads an image from a path or URL, checked and hashed.
type ImageLoading interface {
	Load(ctx context.Context, src string) (*images.Image, error)
}

// ImageLoader loads images with sources/images and these options (size
// caps, private addresses, proxy).
type ImageLoader images.Options

// Load implements ImageLoading.
func (l ImageLoader) Load(ctx context.Context, src string) (*images.Image, error) {
	return images.Load(ctx, src, images.Options(l))
}

func (e *Engine) imageLoader() ImageLoading {
	if e.deps.Images != nil {
		return e.deps.Images
	}
	return ImageLoader{}
}

func (e *Engine) ocr(ctx context.Context, img *images.Image) (string, error) {
	if e.deps.OCR != nil {
		return e.deps.OCR(ctx, img)
	}
	return images.OCR(ctx, img)
}

// images describes the post's images, several at once: each is loaded
// (size-capped, its type sniffed from the content), its text read with
// tesseract when installed, and then described by the vision model with
// that text and the alt text as notes, the paper's informative
// description. Without a vision model the description is the alt text and
// the text read from the image, and says so. A bad image gets its own
// error and the check goes on; a description the person wrote stands.
func (r *run) images(ctx context.Context) (int, bool, error) {
	c := r.c
	if len(c.Images) == 0 && len(c.Post.Images) > 0 {
		for _, src := range c.Post.Images {
			c.Images = append(c.Images, Image{Source: src, AltText: strings.TrimSpace(c.Post.AltTexts[src])})
		}
	}
	d := &describer{r: r}
	if vm, ok := r.e.deps.Model.(VisionModel); ok && !r.e.opts.NoLLM {
		d.vision = vm
	}
	r.video(ctx, d)
	if len(c.Images) == 0 {
		if c.Video != nil {
			return len(c.Video.Frames), false, ctx.Err()
		}
		return 0, true, nil
	}
	if len(c.Images) > MaxPostImages {
		r.warn(StageImages, "the post has %d images; muse reads the first %d, the most X, Bluesky and Mastodon show on a post",
			len(c.Images), MaxPostImages)
		r.mu.Lock()
		c.Images = slices.Clip(c.Images[:MaxPostImages])
		r.mu.Unlock()
	}
	for i := range c.Images {
		// Every prompt carries the alt texts: each is bounded.
		c.Images[i].AltText = clipText(strings.TrimSpace(c.Images[i].AltText), MaxAltText-len("…"))
	}
	var g errgroup.Group
	g.SetLimit(r.e.opts.ImageParallel)
	for i := range c.Images {
		if ctx.Err() != nil {
			break
		}
		r.mu.Lock()
		im := c.Images[i]
		r.mu.Unlock()
		im.People = append([]string(nil), im.People...)
		g.Go(func() error {
			d.one(ctx, &im)
			r.mu.Lock()
			c.Images[i] = im
			r.mu.Unlock()
			r.item(StageImages, im, "image described")
			return nil
		})
	}
	_ = g.Wait() // an image that cannot be read says so in its Error
	if err := ctx.Err(); err != nil {
		return describedImages(c.Images), false, fmt.Errorf("describe images: %w", err)
	}
	return describedImages(c.Images), false, nil
}

// MaxPostImages is how many of a post's images are read: the most X,
// Bluesky and Mastodon show on one post. Each is downloaded, decoded and
// described, and its alt text goes into every prompt.
const MaxPostImages = 4

// MaxAltText is the most of an image's alt text kept, in bytes: Mastodon's
// limit is 1,500 characters, X's 1,000.
const MaxAltText = 1500

// describer is one images stage: what it learned about the model and
// tesseract is shared by the images it describes at once.
type describer struct {
	r             *run
	vision        VisionModel
	noVision      atomic.Bool
	visionWarned  sync.Once
	noTesseract   atomic.Bool
	tesseractOnce sync.Once
}

func (d *describer) one(ctx context.Context, im *Image) {
	r := d.r
	im.Error = ""
	im.AltText = strings.TrimSpace(im.AltText)
	img, err := r.e.imageLoader().Load(ctx, im.Source)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		im.Error = err.Error()
		r.warn(StageImages, "image %s: %v", im.Source, err)
	} else {
		im.Format, im.Width, im.Height = img.Format, img.Width, img.Height
		im.PHash = strconv.FormatUint(img.Hash, 16)
		d.readText(ctx, im, img)
	}
	if im.Edited && strings.TrimSpace(im.Description) != "" {
		im.Origin = ImageOriginUser
		return
	}
	im.Description, im.Origin = "", ""
	if img != nil && (d.look(ctx, im, img) || ctx.Err() != nil) {
		return
	}
	im.Description = d.plainDescription(im)
	if im.Description == "" {
		msg := "no description: no alt text and no text could be read in it"
		if d.vision == nil || d.noVision.Load() {
			msg += ", and no vision model looked at it"
		}
		if im.Error == "" {
			im.Error = msg
		}
		r.warn(StageImages, "image %s: %s", im.Source, msg)
		return
	}
	im.Origin = joinOrigins("", im)
}

// look asks the vision model to describe img, and reports whether it did
// (im.Description and im.Origin are then set); a model that does not take
// images is asked no more in this stage.
func (d *describer) look(ctx context.Context, im *Image, img *images.Image) bool {
	r := d.r
	if d.vision == nil || d.noVision.Load() {
		return false
	}
	desc, u, err := d.vision.DescribeImage(ctx, r.c.Post, *im, img.DataURL())
	r.addUsage(StageImages, u)
	switch {
	case err == nil && strings.TrimSpace(desc) != "":
		im.Description = strings.TrimSpace(desc)
		im.Origin = joinOrigins(ImageOriginVision, im)
		return true
	case ctx.Err() != nil:
	case errors.Is(err, ErrNoVision):
		d.noVision.Store(true)
		d.visionWarned.Do(func() {
			r.warn(StageImages, "the model does not accept images (%v); describing images from their alt text and the text read in them", err)
		})
	case err != nil:
		r.warn(StageImages, "image %s: the vision model's description could not be used (%v); using its alt text and the text read in it", im.Source, err)
	default:
		r.warn(StageImages, "image %s: the vision model gave no description; using its alt text and the text read in it", im.Source)
	}
	return false
}

// readText runs OCR once per image (a rerun keeps text already read) and
// says once per stage that tesseract is missing.
func (d *describer) readText(ctx context.Context, im *Image, img *images.Image) {
	if im.OCRText != "" && im.TextOrigin == ImageOriginOCR || d.noTesseract.Load() {
		return
	}
	text, err := d.r.e.ocr(ctx, img)
	switch {
	case errors.Is(err, images.ErrNoTesseract):
		d.noTesseract.Store(true)
		d.tesseractOnce.Do(func() {
			d.r.warn(StageImages, "the text in images is not read: %v (apt-get install tesseract-ocr)", err)
		})
	case err != nil:
		if ctx.Err() == nil {
			d.r.warn(StageImages, "image %s: read its text: %v", im.Source, err)
		}
	default:
		im.OCRText = strings.TrimSpace(text)
		if im.OCRText != "" {
			im.TextOrigin = ImageOriginOCR
		}
	}
}

// plainDescription is the description without a vision model: only what
// the author said of the image and what OCR read in it, saying so, since
// nobody has seen the picture itself.
func (d *describer) plainDescription(im *Image) string {
	why := "no vision model is configured"
	switch {
	case d.r.e.opts.NoLLM:
		why = "no model is used (--no-llm)"
	case d.noVision.Load():
		why = "the model does not accept images"
	case d.vision != nil:
		why = "the vision model gave no usable description"
	}
	var parts []string
	if im.AltText != "" {
		parts = append(parts, fmt.Sprintf("its alt text says %q", clipText(im.AltText, 1000)))
	}
	if im.OCRText != "" {
		parts = append(parts, fmt.Sprintf("the text read from it is %q", clipText(oneLineText(im.OCRText), 1500)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "An image not seen by a model (" + why + "); " + strings.Join(parts, ", and ") + "."
}

// joinOrigins lists where a description's parts came from, first given.
func joinOrigins(first string, im *Image) string {
	var o []string
	if first != "" {
		o = append(o, first)
	}
	if im.OCRText != "" {
		o = append(o, ImageOriginOCR)
	}
	if im.AltText != "" {
		o = append(o, ImageOriginAlt)
	}
	return strings.Join(o, ", ")
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// clipText cuts s to at most n bytes at a word boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + " …"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// imageNotes is what a prompt carrying the post says about one image: its
// description, with the text read from it added when the description does
// not already quote it, so the text in an image reaches every prompt.
func imageNotes(im Image) string {
	d := strings.TrimSpace(im.Description)
	ocr := oneLineText(im.OCRText)
	if ocr == "" || strings.Contains(normaliseForMatch(d), normaliseForMatch(ocr)) {
		return d
	}
	note := fmt.Sprintf("Text read from the image: %q", clipText(ocr, 1500))
	if d == "" {
		return note
	}
	return d + " " + note
}
