package llm

import (
	"regexp"
	"strings"
)

// Reasoning models (DeepSeek-R1, Qwen3, QwQ, gpt-oss through some servers)
// write their thinking into the answer itself: a <think>…</think> block
// before the answer, a block whose opening tag the chat template already
// sent (so the answer starts with thinking and a lone </think>), or a
// block never closed because the token limit cut it. None of it is the
// answer: the client takes it out before anyone parses or shows the text.
// The separate reasoning / reasoning_content fields are never read.

var thinkBlock = regexp.MustCompile(`(?is)<(think|thinking|reasoning|thought)>.*?</(?:think|thinking|reasoning|thought)>`)

var thinkOpen = regexp.MustCompile(`(?i)<(?:think|thinking|reasoning|thought)>`)

var thinkClose = regexp.MustCompile(`(?i)</(?:think|thinking|reasoning|thought)>`)

// StripReasoning returns text without its reasoning: closed think blocks
// anywhere, everything up to a closing tag that has no opening one (the
// template opened it), and everything after an opening tag never closed.
func StripReasoning(text string) string {
	text = thinkBlock.ReplaceAllString(text, "")
	if loc := thinkClose.FindStringIndex(text); loc != nil {
		if open := thinkOpen.FindStringIndex(text); open == nil || open[0] > loc[0] {
			text = text[loc[1]:]
		}
	}
	if loc := thinkOpen.FindStringIndex(text); loc != nil {
		text = text[:loc[0]]
	}
	return strings.TrimLeft(text, " \t\r\n")
}

// visibleSoFar is the part of a streamed answer that can be shown: the
// reasoning taken out, and a tail that may be the start of a tag held back.
func visibleSoFar(raw string) string {
	v := StripReasoning(raw)
	if i := strings.LastIndexByte(v, '<'); i >= 0 && len(v)-i < len("</reasoning>") && !strings.ContainsRune(v[i:], '>') {
		v = v[:i] // perhaps "<thi": wait for the rest
	}
	return v
}
