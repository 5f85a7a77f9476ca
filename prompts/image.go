package prompts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/musecheck/muse/sources/llm"
	openai "github.com/sashabaranov/go-openai"
)

// ImageInput is what is known about one image of the post.
type ImageInput struct {
	// URL is a data: URL (llm.ImageDataURL) or an https URL of the image, sent
	// to a vision model; empty means describe from the notes below only.
	URL     string
	Caption string   // a short caption from a captioning model
	People  []string // names of people recognised in the image
	OCRText string   // text read from the image
	AltText string   // the platform's alt text
}

// HasImage reports whether the image itself is sent (the template asks it).
func (i ImageInput) HasImage() bool { return i.URL != "" }

// ImageDescription builds the prompt for an informative description of one
// image of the post: with img.URL set it carries the image for a vision
// model, otherwise the model works from the caption, people, OCR and alt text
// (the paper's method). Send it with ImageDescriptionSchema().
func ImageDescription(p Post, img ImageInput) ([]llm.Message, error) {
	if img.URL == "" && img.Caption == "" && img.OCRText == "" && img.AltText == "" && len(img.People) == 0 {
		return nil, fmt.Errorf("prompts: image description: nothing is known about the image (no image, caption, text or people)")
	}
	cp := cleanPost(p)
	cp.ImageDescriptions = nil // the image being described is not yet described
	ci := ImageInput{URL: img.URL, Caption: clean(img.Caption), OCRText: clean(img.OCRText), AltText: clean(img.AltText)}
	for _, name := range img.People {
		if s := oneLine(clean(name)); s != "" {
			ci.People = append(ci.People, s)
		}
	}
	msgs, err := messages("image_description", map[string]any{"Post": cp, "Image": ci})
	if err != nil || img.URL == "" {
		return msgs, err
	}
	last := &msgs[len(msgs)-1]
	last.MultiContent = []openai.ChatMessagePart{llm.TextPart(last.Content), llm.ImagePart(img.URL, "")}
	last.Content = ""
	return msgs, nil
}

// ImageDescriptionSchema is {"description": string}.
func ImageDescriptionSchema() *llm.Schema {
	return &llm.Schema{
		Name:        SchemaImageDescription,
		Description: "An informative description of the image.",
		JSON: json.RawMessage(`{"type":"object","properties":{"description":{"type":"string"}},` +
			`"required":["description"],"additionalProperties":false}`),
		Fallback: fallback("image_description_format.tmpl", nil),
	}
}

// ParseImageDescription reads an image-description answer: {"description"}
// JSON or plain text (the paper's answers come wrapped in braces).
func ParseImageDescription(text string) (string, error) {
	body, err := prepare("image description", text)
	if err != nil {
		return "", err
	}
	if obj, ok := jsonObject(body); ok {
		for _, key := range []string{"description", "image_description"} {
			if raw, ok := obj[key]; ok {
				if d := strings.Join(jsonStrings(raw), " "); strings.TrimSpace(d) != "" {
					return strings.TrimSpace(d), nil
				}
				return "", fmt.Errorf("prompts: parse image description answer: %w", llm.ErrEmpty)
			}
		}
		return "", malformed("image description", text, "JSON without \"description\"")
	}
	d := strings.TrimSpace(body)
	d = labelRe.ReplaceAllString(d, "")
	d = strings.TrimSpace(unwrapQuote(d))
	if d == "" || isNone(d) {
		return "", fmt.Errorf("prompts: parse image description answer: %w", llm.ErrEmpty)
	}
	return d, nil
}

var labelRe = regexp.MustCompile(`(?i)^\**\s*(?:informative\s+)?(?:image\s+)?description\s*\**\s*:\s*`)
