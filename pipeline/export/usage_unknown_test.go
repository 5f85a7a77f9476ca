package export

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// TestUnknownCost: calls whose server sent no usage make the report's cost
// unknown, in the Markdown report and in the usage line, never "$0.0000"
// as if they were free.
func TestUnknownCost(t *testing.T) {
	c := sample()
	u := pipeline.StageUsage{LLMCalls: 3, UnreportedCalls: 3}
	c.Usage = pipeline.Usage{Usage: u, Seconds: 12, ByStage: map[string]pipeline.StageUsage{"correction": u}}
	for name, got := range map[string]string{"report": Markdown(c), "usage line": UsageLine(c.Usage)} {
		if strings.Contains(got, "$0.0000") || !strings.Contains(got, "cost unknown (the server reported no usage)") {
			t.Errorf("%s:\n%s", name, got)
		}
	}
}
