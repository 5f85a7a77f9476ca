package httpcache

import (
	"net/url"
	"strings"
	"testing"
)

const secretKey = "AIzaGOOGLEKEY-abcdefghijklmnop"

func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("https://user:pw-secret@www.googleapis.com/customsearch/v1?cx=abc&key=" + secretKey + "&q=a+b&API_KEY=zzz")
	got := redactURL(u)
	if strings.Contains(got, secretKey) || strings.Contains(got, "zzz") || strings.Contains(got, "pw-secret") ||
		!strings.Contains(got, "cx=abc") || !strings.Contains(got, "key=REDACTED") {
		t.Errorf("redactURL = %q", got)
	}
}
