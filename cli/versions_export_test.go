package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
)

// TestJSONExportCarriesVersions: `muse cases export --format json` is the
// Check with the correction's versions beside it, the model's draft and
// the checker's edit, oldest first.
func TestJSONExportCarriesVersions(t *testing.T) {
	dataDir := isolate(t)
	c := hostileCase()
	c.Correction = pipeline.Correction{Text: "This post is false: the council banned nothing. " + c.Sources[0].URL}
	saveCase(t, dataDir, c)
	st, err := cases.Open(context.Background(), cases.DefaultPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		text   string
		edited bool
	}{{"the model's draft", false}, {c.Correction.Text, true}} {
		if err := st.SaveDraft(context.Background(), c.ID, d.text, d.edited); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "json")
	var got struct {
		ID       string `json:"id"`
		Versions []struct {
			Text   string `json:"text"`
			Edited bool   `json:"edited"`
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if got.ID != c.ID || len(got.Versions) != 2 || got.Versions[0].Text != "the model's draft" || got.Versions[0].Edited || !got.Versions[1].Edited {
		t.Errorf("JSON export: id %q, versions %+v", got.ID, got.Versions)
	}
}
