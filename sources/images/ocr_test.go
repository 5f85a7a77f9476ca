package images

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/images/imagetest"
)

func needTesseract(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract not installed (apt-get install tesseract-ocr); .ci/run installs it")
	}
}

// words lower-cases s and keeps letters and digits, so the comparison
// does not hinge on how tesseract spaces or punctuates a line.
func words(s string) string {
	return strings.Join(strings.Fields(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(s), " ")), " ")
}

func TestOCRReadsDrawnText(t *testing.T) {
	needTesseract(t)
	lines := []string{"BREAKING: Drinking hot water", "cures the virus in 3 days", "Share before they delete this!"}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"png", imagetest.PNG(t, imagetest.Text(t, lines, 40))},
		{"jpeg", imagetest.JPEG(t, imagetest.Text(t, lines, 40), 90)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Decode("card."+tc.name, tc.data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			text, err := OCR(context.Background(), img)
			if err != nil {
				t.Fatal(err)
			}
			got := words(text)
			for _, l := range lines {
				if !strings.Contains(got, words(l)) {
					t.Errorf("OCR text %q lacks %q", text, l)
				}
			}
			if strings.Count(text, "\n") < 2 {
				t.Errorf("OCR text %q: the three lines should stay on separate lines", text)
			}
		})
	}
}

func TestOCRBlankImage(t *testing.T) {
	needTesseract(t)
	img, err := Decode("blank.png", imagetest.PNG(t, imagetest.Text(t, []string{" "}, 40)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	text, err := OCR(context.Background(), img)
	if err != nil || text != "" {
		t.Errorf("blank image: text %q, err %v; want no text", text, err)
	}
}

func TestOCRBadLanguage(t *testing.T) {
	needTesseract(t)
	img, err := Decode("card.png", imagetest.PNG(t, imagetest.Text(t, []string{"hello"}, 40)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = OCRWith(context.Background(), img, OCROptions{Lang: "zzz"})
	if err == nil || !strings.Contains(err.Error(), "card.png") || !strings.Contains(err.Error(), "zzz") {
		t.Errorf("err = %v, want tesseract's complaint about language zzz", err)
	}
}

func TestTesseractVersion(t *testing.T) {
	needTesseract(t)
	v, ok := TesseractVersion()
	if !ok || !regexp.MustCompile(`^\d+\.\d+`).MatchString(v) {
		t.Errorf("TesseractVersion = %q, %v", v, ok)
	}
}

func TestNoTesseract(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	img := &Image{Source: "x.png", Data: imagetest.PNG(t, imagetest.Scene(0, 10, 10)), MIME: "image/png"}
	if _, err := OCR(context.Background(), img); !errors.Is(err, ErrNoTesseract) || !strings.Contains(err.Error(), "x.png") {
		t.Errorf("err = %v, want ErrNoTesseract", err)
	}
	if v, ok := TesseractVersion(); ok {
		t.Errorf("TesseractVersion = %q, true with an empty PATH", v)
	}
}

func TestCleanOCR(t *testing.T) {
	got := cleanOCR("  Line one  \n\n\n\nLine two\t\n\f")
	if got != "Line one\n\nLine two" {
		t.Errorf("cleanOCR = %q", got)
	}
}
