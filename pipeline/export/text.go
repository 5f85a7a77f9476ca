package export

import (
	"fmt"
	"strings"

	"github.com/musecheck/muse/pipeline"
)

// ProgressLine is the one-line description of an event that the headless
// commands print on stderr, or "" for events not worth a line (items,
// token deltas).
func ProgressLine(ev pipeline.Event) string {
	switch ev.Kind {
	case pipeline.EventStageStarted:
		return fmt.Sprintf("%s…", ev.Stage)
	case pipeline.EventStageFinished:
		return ev.Message
	case pipeline.EventStageFailed:
		return fmt.Sprintf("%s failed: %s", ev.Stage, ev.Err)
	case pipeline.EventWarning:
		return "warning: " + ev.Message
	case pipeline.EventProgress:
		return ev.Message
	}
	return ""
}

// UsageLine says what a check's model calls cost, in total and per stage,
// on one line: "7 model calls (2 from the cache), 12840 tokens (4096 prompt
// tokens from the server's prompt cache), $0.0231 (queries $0.0012,
// evidence $0.0150, correction $0.0069)".
func UsageLine(u pipeline.Usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d model calls", u.LLMCalls)
	if u.CachedCalls > 0 {
		fmt.Fprintf(&b, " (%d from the cache)", u.CachedCalls)
	}
	fmt.Fprintf(&b, ", %d tokens", u.Tokens())
	if u.CachedPromptTokens > 0 {
		fmt.Fprintf(&b, " (%d prompt tokens from the server's prompt cache)", u.CachedPromptTokens)
	}
	fmt.Fprintf(&b, ", %s", u.CostText())
	var parts []string
	for _, st := range pipeline.Stages {
		if s, ok := u.ByStage[string(st)]; ok && s.LLMCalls > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", st, s.CostCell()))
		}
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	return b.String()
}
