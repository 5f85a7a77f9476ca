package setup

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/images"
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
