package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/video"
)

func (m *Model) imagesPane(w, h int) string {
	imgs := m.check.Images
	if len(imgs) == 0 && len(m.check.Post.Images) == 0 && m.check.Video == nil && len(m.check.Post.Videos) == 0 {
		return m.st.Dim.Render(wrap("No images in this post. Add image paths or URLs in the compose view (n) to have them described.", w))
	}
	var lines []string
	if len(imgs) == 0 && m.check.Video == nil {
		for _, src := range m.check.Post.Images {
			lines = append(lines, "• "+truncate(safe(src), w-2, "…"), m.emptyHint(pipeline.StageImages, "  waiting for a description…", "  not described"))
		}
		for _, src := range m.check.Post.Videos {
			lines = append(lines, "• video "+truncate(safe(src), w-8, "…"), m.emptyHint(pipeline.StageImages, "  waiting to be read…", "  not read"))
		}
		return window(lines, 0, h)
	}
	cur := m.cur(pipeline.StageImages)
	at := 0
	// part is one labelled piece of what is known about an image, with
	// where it came from, so the journalist can weigh each one.
	part := func(label, from, text string, style func(...string) string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		head := label
		if from != "" {
			head += " " + m.st.Dim.Render("("+from+")")
		}
		lines = append(lines, "  "+head)
		lines = append(lines, style(indent(wrap(strings.TrimSpace(safe(text)), max(w-4, 10)), "    ")))
	}
	plain := func(s ...string) string { return strings.Join(s, "") }
	for _, i := range m.order(pipeline.StageImages) {
		if i == cur {
			at = len(lines)
		}
		if i >= len(imgs) {
			lines = append(lines, m.videoLines(i == cur, w)...)
			continue
		}
		img := imgs[i]
		head := m.marker(i == cur) + truncate(safe(img.Source), w-2, "…")
		if i == cur {
			head = m.st.Cursor.Render(head)
		}
		lines = append(lines, head)
		if img.Error != "" {
			lines = append(lines, m.st.Fail.Render(indent(wrap("✗ "+safe(img.Error), w-2), "  ")))
		}
		descFrom := originWords(firstNonEmpty(img.Origin, "engine"))
		if img.Edited {
			descFrom = "written by you"
		}
		part("description", descFrom, img.Description, plain)
		part("alt text", "given with the post", img.AltText, m.st.Dim.Render)
		part("caption", "vision model", img.Caption, m.st.Dim.Render)
		part("text in the image", ocrFrom(firstNonEmpty(img.TextOrigin, img.Origin)), img.OCRText, m.st.Dim.Render)
		if len(img.People) > 0 {
			part("people named", "vision model, from visible text or the post", strings.Join(img.People, ", "), m.st.Dim.Render)
		}
		if strings.TrimSpace(img.Description) == "" && img.Error == "" {
			lines = append(lines, m.st.Dim.Render("  no description yet — e writes one"))
		}
		lines = append(lines, "")
	}
	hint := "e edits the description · s makes the queries and searches again with it · o opens the image"
	if m.check.Video != nil {
		hint = "e edits the description · s makes the queries and searches again with it · o opens the image or video"
	}
	lines = append(lines, m.st.Dim.Render(wrap(hint, w)))
	return window(splitLines(lines), at, h)
}

// describeImage asks for the person's description of an image.
func (m *Model) describeImage(src, value string) tea.Cmd {
	return m.askEdit(draftPrompt{Kind: promptDescription, Key: src}, "Describe the image:", value, func(m *Model, v string) tea.Cmd {
		v = strings.TrimSpace(v)
		i := slices.IndexFunc(m.check.Images, func(im pipeline.Image) bool { return im.Source == src })
		if v == "" || i < 0 || v == m.check.Images[i].Description {
			return nil // nothing typed, the image is gone, or nothing changed
		}
		if err := m.check.DescribeImage(src, v); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		return tea.Batch(m.edited(), m.setStatus("description saved — s makes the queries again with it"))
	})
}

// originWords is where a description's parts came from (Image.Origin) in
// the words the pane uses: "vision model, OCR, alt text".
func originWords(origin string) string {
	parts := strings.Split(origin, ", ")
	for i, p := range parts {
		if p == pipeline.ImageOriginOCR {
			parts[i] = "OCR"
		}
	}
	return strings.Join(parts, ", ")
}

// ocrFrom says what read an image's text, as far as its origin tells.
func ocrFrom(origin string) string {
	o := strings.ToLower(origin)
	switch {
	case strings.Contains(o, "ocr") || strings.Contains(o, "tesseract"):
		return "OCR"
	case strings.Contains(o, "vision"):
		return "vision model"
	}
	return ""
}

func (m *Model) onImagesKey(msg tea.KeyMsg) tea.Cmd {
	if m.moveCursor(msg) {
		return nil
	}
	cur := m.cur(pipeline.StageImages)
	if cur < 0 {
		return nil
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.EditDescription):
		if cmd, ok := m.editable(); !ok {
			return cmd
		}
		if cur >= len(m.check.Images) {
			return m.describeVideo(m.check.Video.Description)
		}
		return m.describeImage(m.check.Images[cur].Source, m.check.Images[cur].Description)
	case key.Matches(msg, k.QueriesAgain):
		return m.rerun(pipeline.StageQueries)
	case key.Matches(msg, k.Open):
		if cur >= len(m.check.Images) {
			return m.openURL(m.check.Video.Source)
		}
		return m.openURL(m.check.Images[cur].Source)
	}
	return nil
}

// videoKey marks the video's entry in the images pane's list.
const videoKey = "\x00video:"

// videoLines is the post's video in the images pane: the description the
// prompts carry, then its keyframes, each with its time, caption and the
// text read on it, then what is said with its times.
func (m *Model) videoLines(selected bool, w int) []string {
	v := m.check.Video
	var lines []string
	head := "video " + safe(v.Source)
	if v.Duration > 0 {
		head += " (" + video.Clock(videoTime(v.Duration)) + ")"
	}
	head = m.marker(selected) + truncate(head, w-2, "…")
	if selected {
		head = m.st.Cursor.Render(head)
	}
	lines = append(lines, head)
	if v.Error != "" {
		lines = append(lines, m.st.Fail.Render(indent(wrap("✗ "+safe(v.Error), w-2), "  ")))
	}
	sub := func(text string) string { return indent(wrap(text, max(w-4, 10)), "    ") }
	from := "made from its frames and sound"
	if v.Edited {
		from = "written by you"
	}
	if d := strings.TrimSpace(v.Description); d != "" {
		lines = append(lines, "  description "+m.st.Dim.Render("("+from+")"), sub(safe(d)))
	} else if v.Error == "" {
		lines = append(lines, m.st.Dim.Render("  no description yet — e writes one"))
	}
	if v.AltText != "" {
		lines = append(lines, "  alt text "+m.st.Dim.Render("(given with the post)"), m.st.Dim.Render(sub(safe(v.AltText))))
	}
	if len(v.Frames) > 0 {
		lines = append(lines, "  keyframes")
	}
	for _, f := range v.Frames {
		var what []string
		if f.Caption != "" {
			what = append(what, safe(f.Caption))
		}
		if f.OCR != "" {
			what = append(what, "on screen: “"+safe(strings.Join(strings.Fields(f.OCR), " "))+"”")
		}
		if len(what) == 0 {
			what = append(what, "nothing read")
		}
		lines = append(lines, m.st.Dim.Render(sub("at "+video.Clock(videoTime(f.At))+": "+strings.Join(what, "; "))))
	}
	if len(v.Transcript) > 0 {
		lines = append(lines, "  transcript "+m.st.Dim.Render("(transcription server)"))
	}
	for _, s := range v.Transcript {
		lines = append(lines, sub("["+video.Clock(videoTime(s.Start))+"] "+safe(s.Text)))
	}
	if len(v.Transcript) == 0 && v.TranscriptNote != "" {
		lines = append(lines, m.st.Dim.Render(sub("sound: "+safe(v.TranscriptNote))))
	}
	return append(lines, "")
}

func videoTime(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// describeVideo asks for the person's description of the video; an empty
// one gives back the description made from its frames and sound.
func (m *Model) describeVideo(value string) tea.Cmd {
	return m.askEdit(draftPrompt{Kind: promptDescription, Key: videoKey}, "Describe the video (empty: the one made from its frames and sound):", value, func(m *Model, v string) tea.Cmd {
		if m.check.Video == nil || strings.TrimSpace(v) == m.check.Video.Description {
			return nil
		}
		if err := m.check.DescribeVideo(v); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		return tea.Batch(m.edited(), m.setStatus("description saved — s makes the queries again with it"))
	})
}
