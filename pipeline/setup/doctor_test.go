package setup

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/video"
)

func TestDoctorTesseract(t *testing.T) {
	it := doctorTesseract()
	if v, ok := images.TesseractVersion(); ok {
		if it.Status != DoctorOK || !strings.Contains(it.Detail, v) {
			t.Errorf("installed: %+v", it)
		}
	}
	t.Setenv("PATH", t.TempDir())
	it = doctorTesseract()
	if it.Status != DoctorWarn || !strings.Contains(it.Fix, "apt-get install tesseract-ocr") {
		t.Errorf("missing: %+v", it)
	}
}

// A Google CSE key is still used, with a warning of the API's end (no
// request is sent: the item is made before the providers are tried).
func TestDoctorWarnsOfGoogleCSEsEnd(t *testing.T) {
	it, ok := googleCSEEnd(&Config{GoogleCSEKey: "k", GoogleCSECX: "cx"})
	if !ok || it.Status != DoctorWarn || !strings.Contains(it.Detail, "2027-01-01") || !strings.Contains(it.Fix, "SERPER_API_KEY") {
		t.Errorf("no warning of Google CSE's end: %+v", it)
	}
	if _, ok := googleCSEEnd(&Config{}); ok {
		t.Error("a warning without a Google key")
	}
}

func TestDoctorFFmpeg(t *testing.T) {
	it := doctorFFmpeg()
	if v, ok := video.Version(); ok {
		if it.Status != DoctorOK || !strings.Contains(it.Detail, v) || v == "unknown" {
			t.Errorf("installed: %+v", it)
		}
	}
	t.Setenv("PATH", t.TempDir())
	it = doctorFFmpeg()
	if it.Status != DoctorWarn || !strings.Contains(it.Fix, "apt-get install ffmpeg") {
		t.Errorf("missing: %+v", it)
	}
}

// The setup screen's findings name the programs that read images' text
// and videos, found or not, with the fix when not.
func TestDetectNamesImageAndVideoPrograms(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // neither tesseract nor ffmpeg
	got := map[string]Finding{}
	for _, f := range DetectTools() {
		got[f.Name] = f
	}
	if f := got["tesseract"]; f.Found || !strings.Contains(f.Detail, "not found") || !strings.Contains(f.Fix, "tesseract-ocr") {
		t.Errorf("tesseract: %+v", f)
	}
	if f := got["ffmpeg"]; f.Found || !strings.Contains(f.Detail, "videos are not read") || !strings.Contains(f.Fix, "apt-get install ffmpeg") {
		t.Errorf("ffmpeg: %+v", f)
	}
}
