package relay

import "strings"

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

// thinkFilter moves <think>...</think> spans out of answer text (models served by vLLM,
// Ollama and others inline their reasoning there) so they become reasoning. It is correct
// across chunk boundaries: a tail that could be the start of a tag is held until the next
// piece decides it. Not safe for concurrent use.
type thinkFilter struct {
	in   bool   // inside a think span
	hold string // a tail that may be the start of the next tag
}

// split returns what of piece is answer text and what is reasoning.
func (f *thinkFilter) split(piece string) (text, think string) {
	s := f.hold + piece
	f.hold = ""
	var tb, rb strings.Builder
	for s != "" {
		tag := openTag
		if f.in {
			tag = closeTag
		}
		out := &tb
		if f.in {
			out = &rb
		}
		if i := strings.Index(s, tag); i >= 0 {
			out.WriteString(s[:i])
			s = s[i+len(tag):]
			f.in = !f.in
			continue
		}
		// Hold the longest tail that is a proper prefix of the tag.
		keep := 0
		for n := min(len(tag)-1, len(s)); n > 0; n-- {
			if strings.HasSuffix(s, tag[:n]) {
				keep = n
				break
			}
		}
		out.WriteString(s[:len(s)-keep])
		f.hold = s[len(s)-keep:]
		break
	}
	return tb.String(), rb.String()
}

// flush releases a held tail at the end of the text: it was not a tag after all.
func (f *thinkFilter) flush() (text, think string) {
	h := f.hold
	f.hold = ""
	if f.in {
		return "", h
	}
	return h, ""
}
