package llm

import (
	"encoding/base64"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ImageDataURL encodes image bytes as a data: URL, the form every
// OpenAI-compatible vision endpoint accepts (Ollama does not fetch http URLs).
// mime may be empty; it is then sniffed from the bytes.
func ImageDataURL(mime string, data []byte) string {
	if mime == "" || !strings.HasPrefix(mime, "image/") {
		mime = http.DetectContentType(data)
	}
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = mime[:i]
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// ImagePart is a message part that shows the model an image (a data: or
// https: URL). detail is "low", "high" or "" for the server's default.
func ImagePart(url, detail string) openai.ChatMessagePart {
	return openai.ChatMessagePart{
		Type:     openai.ChatMessagePartTypeImageURL,
		ImageURL: &openai.ChatMessageImageURL{URL: url, Detail: openai.ImageURLDetail(detail)},
	}
}

// TextPart is a text message part, to sit beside ImagePart in MultiContent.
func TextPart(text string) openai.ChatMessagePart {
	return openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text}
}
