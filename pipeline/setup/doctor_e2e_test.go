package setup_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

func TestDoctor(t *testing.T) {
	env := testworld.New(t, nil, llmtest.WithModels("test-model", "other-model"))
	items := setup.Doctor(context.Background(), env.Cfg)
	got := map[string]setup.DoctorItem{}
	for _, it := range items {
		got[it.Name] = it
	}
	for _, name := range []string{"configuration", "model", "search searxng", "ratings", "archive"} {
		if got[name].Status != setup.DoctorOK {
			t.Errorf("%s: %+v", name, got[name])
		}
	}
	if !strings.Contains(got["model"].Detail, "other-model") || !strings.Contains(got["ratings"].Detail, "ratings.csv") {
		t.Errorf("details: %q / %q", got["model"].Detail, got["ratings"].Detail)
	}

	env.Cfg.Model = "missing-model"
	env.Cfg.SearXNGURL = env.LLM.URL + "/nothing-here"
	env.Cfg.RatingsFile = filepath.Join(t.TempDir(), "absent.csv")
	got = map[string]setup.DoctorItem{}
	for _, it := range setup.Doctor(context.Background(), env.Cfg) {
		got[it.Name] = it
	}
	if got["model"].Status != setup.DoctorWarn || !strings.Contains(got["model"].Fix, "MUSE_MODEL") {
		t.Errorf("unknown model: %+v", got["model"])
	}
	if got["search searxng"].Status != setup.DoctorFail || got["ratings"].Status != setup.DoctorFail || got["ratings"].Fix == "" {
		t.Errorf("broken search/ratings: %+v %+v", got["search searxng"], got["ratings"])
	}
}
