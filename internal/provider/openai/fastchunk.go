package openai

import (
	"bytes"
	"strings"

	"github.com/sluice-gw/sluice/internal/jsonscan"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// decodeFast is a hand-written decoder for the common shape of a chunk: an object whose
// members are "choices" (objects with "index", "delta" of text fields, "logprobs" and
// "finish_reason"), "error", "usage" (integer counts), and unknown members, which it validates and
// skips. It reports false for anything it is not sure to decode exactly as encoding/json
// would (tool calls, text as an array, keys with escapes or non-ASCII bytes, keys
// that differ from a field name only in case, duplicate fields, numbers that are not plain
// integers, invalid JSON, trailing data, ...): the caller then resets c and decodes data
// in full. Text and rawJSON fields are handed to their UnmarshalJSON methods with the same
// bytes encoding/json would give them. With h (the first chunk), it also decodes the head
// in the same pass, as encoding/json would decode data into h; a second pass of
// json.Unmarshal for it cost half as much as decoding all the other chunks of an answer.
// On false, c and h hold partial results.
//
// With pre (nil: none), the members that open every chunk of a stream (id, object, created,
// model, system_fingerprint: some 180 bytes, the same bytes in every chunk) are scanned once:
// a chunk that starts with the bytes pre learned from the previous one resumes after them,
// since the same bytes scan the same way and those members set nothing. Otherwise the chunk
// is scanned whole and pre learns its opening. Either way the result is the same. With pre,
// the plain strings of text fields are cut from pre's blocks (prefix.carve).
func decodeFast(data []byte, c *chunk, h *head, pre *prefix) bool {
	if pre != nil && h == nil && pre.n > 0 && bytes.HasPrefix(data, pre.b[:pre.n]) {
		p := fastParser{Scanner: jsonscan.New(data), pre: pre}
		p.Skip(pre.n - 1) // up to the ',' that ends the prefix, which Member takes
		if p.members(false, p.chunkField(c)) && p.Done() {
			return true
		}
		c.reset() // a prefix that matched yet failed: the full scan decides
	}
	p := fastParser{Scanner: jsonscan.New(data), head: h, open: pre != nil && h == nil, pre: pre}
	if !p.chunk(c) || !p.Done() {
		return false
	}
	if pre != nil && h == nil {
		pre.learn(data, p.end)
	}
	return true
}

// prefix is the opening of a stream's chunks that decodeFast skips: members it does not
// know, ending with the ',' after the last (so a number cannot run on past it). A value in
// the stream, not a pointer, so that it costs no allocation.
type prefix struct {
	b [maxPrefix]byte
	n int

	// texts is the block the chunks' plain strings are cut from (carve), ahead how many
	// bytes of the stream are read and not yet decoded: a text in every chunk was one
	// allocation each (issue 51).
	texts strings.Builder
	ahead int
}

const (
	maxPrefix = 256
	maxBlock  = 2048 // the largest block of texts
)

// learn keeps data[:end+1] when data[end] is the ',' after the opening's members, and
// forgets the opening otherwise.
func (pre *prefix) learn(data []byte, end int) {
	pre.n = 0
	if end > 0 && end < len(data) && end+1 <= maxPrefix && data[end] == ',' {
		pre.n = copy(pre.b[:], data[:end+1])
	}
}

// fastParser is a jsonscan.Scanner that knows the chunk's shape; head, if set, takes the
// head's members. While open, the chunk's members so far are all unknown ones, and end is
// where the last of them ended: the prefix the next chunk may skip.
type fastParser struct {
	jsonscan.Scanner
	head *head
	open bool
	end  int
	pre  *prefix // nil: no blocks to cut texts from
}

// object reads an object, or null when nullable, whose members field decodes: field reads
// the value of member k and returns the member's bit (0 for an unknown member, which it
// skips with p.unknown) and whether it could. A known member that comes twice is refused.
func (p *fastParser) object(nullable bool, field func(k []byte) (uint8, bool)) bool {
	switch p.Peek() {
	case 'n':
		return nullable && p.Lit("null")
	case '{':
		p.Advance()
	default:
		return false
	}
	return p.members(true, field)
}

// members reads the members of an object whose '{' was consumed, the first of them next
// when first, else after a ','.
func (p *fastParser) members(first bool, field func(k []byte) (uint8, bool)) bool {
	var seen uint8
	for ; ; first = false {
		k, end, ok := p.Member(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		bit, ok := field(k)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// unknown skips the value of member k, unless encoding/json would take k for one of known,
// whose names it matches without regard to case.
func (p *fastParser) unknown(k []byte, known ...string) (uint8, bool) {
	if jsonscan.FoldsTo(k, known...) {
		return 0, false
	}
	_, ok := p.Value()
	return 0, ok
}

func (p *fastParser) chunk(c *chunk) bool { return p.object(false, p.chunkField(c)) }

// chunkField decodes the member k of a chunk into c.
func (p *fastParser) chunkField(c *chunk) func(k []byte) (uint8, bool) {
	return func(k []byte) (uint8, bool) {
		if p.open {
			bit, ok := p.field(c, k)
			if p.open = ok && bit == 0; p.open {
				p.end = p.Pos()
			}
			return bit, ok
		}
		return p.field(c, k)
	}
}

func (p *fastParser) field(c *chunk, k []byte) (uint8, bool) {
	switch string(k) {
	case "choices":
		return 1, p.choices(c)
	case "usage":
		if p.Peek() == 'n' {
			return 2, p.Lit("null") // encoding/json leaves the pointer as it is: nil after reset
		}
		c.Usage = &wire.Usage{}
		return 2, p.usage(c.Usage)
	case "error":
		return 4, p.raw(&c.Error)
	}
	if p.head != nil {
		switch string(k) {
		case "id":
			return 8, p.text((*wire.Text)(&p.head.ID))
		case "model":
			return 16, p.text((*wire.Text)(&p.head.Model))
		}
		return p.unknown(k, "choices", "usage", "error", "id", "model")
	}
	return p.unknown(k, "choices", "usage", "error")
}

func (p *fastParser) choices(c *chunk) bool {
	if p.Peek() != '[' {
		return false
	}
	p.Advance()
	c.Choices = c.Choices[:0]
	if c.Choices == nil {
		c.Choices = []wireChoice{}
	}
	for first := true; ; first = false {
		end, ok := p.Element(first)
		if end || !ok {
			return ok
		}
		c.Choices = append(c.Choices, wireChoice{})
		if !p.choice(&c.Choices[len(c.Choices)-1]) {
			return false
		}
	}
}

func (p *fastParser) choice(ch *wireChoice) bool {
	return p.object(false, func(k []byte) (uint8, bool) {
		switch string(k) {
		case "index":
			return 1, p.Integer(&ch.Index)
		case "delta":
			return 2, p.delta(&ch.Delta)
		case "logprobs":
			return 4, p.raw(&ch.Logprobs)
		case "finish_reason":
			return 8, p.text(&ch.FinishReason)
		}
		return p.unknown(k, "index", "delta", "logprobs", "finish_reason")
	})
}

func (p *fastParser) delta(d *wireDelta) bool {
	return p.object(true, func(k []byte) (uint8, bool) {
		switch string(k) {
		case "content":
			return 1, p.text(&d.Content)
		case "refusal":
			return 2, p.text(&d.Refusal)
		case "reasoning":
			return 4, p.text(&d.Reasoning)
		case "reasoning_content":
			return 8, p.text(&d.ReasoningContent)
		case "tool_calls":
			return 16, p.Lit("null") // anything else goes to the full decode
		}
		return p.unknown(k, "content", "refusal", "reasoning", "reasoning_content", "tool_calls")
	})
}

// usage reads a usage object: integer counts.
func (p *fastParser) usage(u *wire.Usage) bool {
	return p.object(false, func(k []byte) (uint8, bool) {
		switch string(k) {
		case "prompt_tokens":
			return 1, p.Integer(&u.PromptTokens)
		case "completion_tokens":
			return 2, p.Integer(&u.CompletionTokens)
		case "total_tokens":
			return 4, p.Integer(&u.TotalTokens)
		case "prompt_tokens_details":
			if p.Peek() == 'n' {
				return 8, p.Lit("null") // a nil pointer, as encoding/json leaves it
			}
			u.PromptTokensDetails = &wire.PromptTokensDetails{}
			return 8, p.detail("cached_tokens", &u.PromptTokensDetails.CachedTokens)
		case "completion_tokens_details":
			return 16, p.detail("reasoning_tokens", &u.CompletionTokensDetails.ReasoningTokens)
		}
		return p.unknown(k, "prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details")
	})
}

// detail reads a usage details object (or null) of which only the count name matters.
func (p *fastParser) detail(name string, v *int) bool {
	return p.object(true, func(k []byte) (uint8, bool) {
		if string(k) == name {
			return 1, p.Integer(v)
		}
		return p.unknown(k, name)
	})
}

// text reads a string or null into *t.
func (p *fastParser) text(t *wire.Text) bool {
	switch p.Peek() {
	case 'n':
		return p.Lit("null")
	case '"':
		v, ok := p.String()
		if !ok {
			return false
		}
		if s, plain := wire.Plain(v); plain && p.pre != nil {
			*t = wire.Text(p.pre.carve(s)) // what UnmarshalJSON gives, in a shared block
			return true
		}
		return t.UnmarshalJSON(v) == nil
	}
	return false
}

// carve returns a string of s cut from the stream's current block of texts, starting a
// block when s does not fit: its size is an eighth of the bytes read ahead (at least s, at
// most maxBlock), so a stream whose events come one a read allocates each text alone, as
// before, and an answer read at once a block for many. Blocks are only appended to: the
// strings already cut keep theirs (strings.Builder's guarantee).
func (pre *prefix) carve(s []byte) string {
	if pre.texts.Cap()-pre.texts.Len() < len(s) {
		pre.texts.Reset()
		pre.texts.Grow(max(len(s), min(pre.ahead/8, maxBlock)))
	}
	n := pre.texts.Len()
	pre.texts.Write(s)
	return pre.texts.String()[n:]
}

// raw reads any value into *r, as encoding/json does for an Unmarshaler.
func (p *fastParser) raw(r *wire.Raw) bool {
	v, ok := p.Value()
	return ok && r.UnmarshalJSON(v) == nil
}
