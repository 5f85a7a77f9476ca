package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrNoTesseract: the tesseract command is not on PATH. Install Debian's
// tesseract-ocr (it brings tesseract-ocr-eng) or another build of
// tesseract 4 or later.
var ErrNoTesseract = errors.New("tesseract not found on PATH (install tesseract-ocr)")

// OCROptions tunes a tesseract run; the zero value reads English text laid
// out in any way.
type OCROptions struct {
	// Lang is tesseract's -l value, e.g. "eng" or "eng+fra". Default "eng".
	Lang string
	// PSM is tesseract's page segmentation mode; 0 leaves tesseract's
	// default (3, fully automatic), 11 suits scattered text such as memes.
	PSM int
	// Timeout bounds one run. Default 60s.
	Timeout time.Duration
}

// TesseractVersion reports the installed tesseract's version, e.g.
// "5.3.0", and whether one was found, for `muse doctor`.
func TesseractVersion() (string, bool) {
	path, err := exec.LookPath("tesseract")
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "", false
	}
	first, _, _ := strings.Cut(string(out), "\n")
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(first), "tesseract"))
	if v == "" {
		return "unknown", true
	}
	return v, true
}

// OCR reads the text in img with tesseract and default options.
func OCR(ctx context.Context, img *Image) (string, error) {
	return OCRWith(ctx, img, OCROptions{})
}

// OCRWith reads the text in img with tesseract, giving it the image on
// standard input. It returns the text with runs of blank lines collapsed,
// "" when there is none, and ErrNoTesseract when tesseract is missing.
func OCRWith(ctx context.Context, img *Image, opts OCROptions) (string, error) {
	path, err := exec.LookPath("tesseract")
	if err != nil {
		return "", fmt.Errorf("OCR %s: %w", img.Source, ErrNoTesseract)
	}
	if opts.Lang == "" {
		opts.Lang = "eng"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	args := []string{"stdin", "stdout", "-l", opts.Lang}
	if opts.PSM > 0 {
		args = append(args, "--psm", strconv.Itoa(opts.PSM))
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = bytes.NewReader(img.Data)
	// One thread: several OCR runs go on at once and tesseract's OpenMP
	// threads would only fight over the same cores.
	cmd.Env = append(cmd.Environ(), "OMP_THREAD_LIMIT=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("OCR %s: tesseract timed out after %s", img.Source, opts.Timeout)
		}
		return "", fmt.Errorf("OCR %s: tesseract -l %s: %w: %s", img.Source, opts.Lang, err, lastLine(stderr.String()))
	}
	return cleanOCR(stdout.String()), nil
}

var blankRuns = regexp.MustCompile(`\n{3,}`)

func cleanOCR(s string) string {
	s = strings.ReplaceAll(s, "\f", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.TrimSpace(blankRuns.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

// lastLine is the most telling line of tesseract's diagnostics, e.g.
// "Failed loading language 'xyz'" comes before the final error.
func lastLine(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return "no message"
	}
	if len(keep) > 2 {
		keep = keep[len(keep)-2:]
	}
	return strings.Join(keep, "; ")
}
