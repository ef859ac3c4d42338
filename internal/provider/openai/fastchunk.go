package openai

// decodeFast is a hand-written decoder for the common shape of a chunk: an object whose
// members are "choices" (objects with "index", "delta" of text fields, "logprobs" and
// "finish_reason"), "error", a null "usage", and unknown members, which it validates and
// skips. It reports false for anything it is not sure to decode exactly as encoding/json
// would (usage, tool calls, text as an array, keys with escapes or non-ASCII bytes, keys
// that differ from a field name only in case, duplicate fields, numbers that are not plain
// integers, invalid JSON, trailing data, ...): the caller then resets c and decodes data
// in full. Text and rawJSON fields are handed to their UnmarshalJSON methods with the same
// bytes encoding/json would give them. On false, c holds partial results.
func decodeFast(data []byte, c *chunk) bool {
	p := fastParser{b: data}
	return p.chunk(c) && p.i == len(p.b)
}

type fastParser struct {
	b []byte
	i int
}

// maxSkipDepth bounds the nesting of skipped values; deeper ones go to the full decode.
const maxSkipDepth = 64

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (p *fastParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// member reads the next member name of an object whose '{' was consumed, and the ':'
// after it; end is true once the '}' is consumed. Names must be plain ASCII without
// escapes.
func (p *fastParser) member(first bool) (key []byte, end, ok bool) {
	c := p.peek()
	if c == '}' {
		p.i++
		return nil, true, true
	}
	if !first {
		if c != ',' {
			return nil, false, false
		}
		p.i++
		c = p.peek()
	}
	if c != '"' {
		return nil, false, false
	}
	p.i++
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch b := p.b[p.i]; {
		case b == '"':
			key = p.b[start:p.i]
			p.i++
			if p.peek() != ':' {
				return nil, false, false
			}
			p.i++
			p.ws()
			return key, false, true
		case b == '\\' || b < 0x20 || b >= 0x80:
			return nil, false, false
		}
	}
	return nil, false, false
}

// foldsTo reports whether key, which is not exactly one of names, would still match one of
// them case-insensitively (ignoring '_' and '-' too, to be safe whatever the json package's
// matching rules).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if foldEq(key, n) {
			return true
		}
	}
	return false
}

func foldEq(a []byte, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && (a[i] == '_' || a[i] == '-') {
			i++
		}
		for j < len(b) && (b[j] == '_' || b[j] == '-') {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		x, y := a[i], b[j]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
		i++
		j++
	}
}

// skip validates one JSON value and returns its bytes.
func (p *fastParser) skip(depth int) ([]byte, bool) {
	start := p.i
	if p.i >= len(p.b) || depth > maxSkipDepth {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		if !p.str() {
			return nil, false
		}
	case c == '{':
		p.i++
		for first := true; ; first = false {
			c := p.peek()
			if c == '}' {
				p.i++
				break
			}
			if !first {
				if c != ',' {
					return nil, false
				}
				p.i++
				c = p.peek()
			}
			if c != '"' || !p.str() || p.peek() != ':' {
				return nil, false
			}
			p.i++
			p.ws()
			if _, ok := p.skip(depth + 1); !ok {
				return nil, false
			}
		}
	case c == '[':
		p.i++
		for first := true; ; first = false {
			c := p.peek()
			if c == ']' {
				p.i++
				break
			}
			if !first {
				if c != ',' {
					return nil, false
				}
				p.i++
				p.ws()
			}
			if _, ok := p.skip(depth + 1); !ok {
				return nil, false
			}
		}
	case c == 't':
		if !p.lit("true") {
			return nil, false
		}
	case c == 'f':
		if !p.lit("false") {
			return nil, false
		}
	case c == 'n':
		if !p.lit("null") {
			return nil, false
		}
	case c == '-' || '0' <= c && c <= '9':
		if !p.number() {
			return nil, false
		}
	default:
		return nil, false
	}
	return p.b[start:p.i], true
}

func (p *fastParser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str validates a string starting at its opening quote. Bytes of 0x80 and above are taken
// as they are, as encoding/json's scanner does.
func (p *fastParser) str() bool {
	p.i++
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if p.i >= len(p.b) {
				return false
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(p.b)-p.i < 4 {
					return false
				}
				for _, h := range p.b[p.i : p.i+4] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				p.i += 4
			default:
				return false
			}
		}
	}
	return false
}

func (p *fastParser) digits() int {
	n := 0
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// number validates a JSON number.
func (p *fastParser) number() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.b) {
		return false
	}
	if p.b[p.i] == '0' {
		p.i++
	} else if p.digits() == 0 {
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

// integer reads a plain integer (no fraction or exponent) of at most 18 digits into *v;
// null leaves *v as it is.
func (p *fastParser) integer(v *int) bool {
	if p.i < len(p.b) && p.b[p.i] == 'n' {
		return p.lit("null")
	}
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	start := p.i
	n := 0
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	d := p.i - start
	if d == 0 || d > 18 || d > 1 && p.b[start] == '0' {
		return false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return false
	}
	if neg {
		n = -n
	}
	*v = n
	return true
}

// text reads a string or null into *t.
func (p *fastParser) text(t *text) bool {
	switch p.peek() {
	case 'n':
		return p.lit("null")
	case '"':
		start := p.i
		if !p.str() {
			return false
		}
		return t.UnmarshalJSON(p.b[start:p.i]) == nil
	}
	return false
}

// raw reads any value into *r, as encoding/json does for an Unmarshaler.
func (p *fastParser) raw(r *rawJSON) bool {
	v, ok := p.skip(0)
	return ok && r.UnmarshalJSON(v) == nil
}

func (p *fastParser) chunk(c *chunk) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	var seen uint8
	for first := true; ; first = false {
		k, end, ok := p.member(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		var bit uint8
		switch string(k) {
		case "choices":
			bit = 1
			ok = p.choices(c)
		case "usage":
			bit = 2
			ok = p.lit("null") // anything else goes to the full decode
		case "error":
			bit = 4
			ok = p.raw(&c.Error)
		default:
			if foldsTo(k, "choices", "usage", "error") {
				return false
			}
			_, ok = p.skip(0)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

func (p *fastParser) choices(c *chunk) bool {
	if p.peek() != '[' {
		return false
	}
	p.i++
	c.Choices = c.Choices[:0]
	if c.Choices == nil {
		c.Choices = []wireChoice{}
	}
	for first := true; ; first = false {
		b := p.peek()
		if b == ']' {
			p.i++
			return true
		}
		if !first {
			if b != ',' {
				return false
			}
			p.i++
			b = p.peek()
		}
		if b != '{' {
			return false
		}
		c.Choices = append(c.Choices, wireChoice{})
		if !p.choice(&c.Choices[len(c.Choices)-1]) {
			return false
		}
	}
}

func (p *fastParser) choice(ch *wireChoice) bool {
	p.i++ // '{'
	var seen uint8
	for first := true; ; first = false {
		k, end, ok := p.member(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		var bit uint8
		switch string(k) {
		case "index":
			bit = 1
			ok = p.integer(&ch.Index)
		case "delta":
			bit = 2
			ok = p.delta(&ch.Delta)
		case "logprobs":
			bit = 4
			ok = p.raw(&ch.Logprobs)
		case "finish_reason":
			bit = 8
			ok = p.text(&ch.FinishReason)
		default:
			if foldsTo(k, "index", "delta", "logprobs", "finish_reason") {
				return false
			}
			_, ok = p.skip(0)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

func (p *fastParser) delta(d *wireDelta) bool {
	switch p.peek() {
	case 'n':
		return p.lit("null")
	case '{':
		p.i++
	default:
		return false
	}
	var seen uint8
	for first := true; ; first = false {
		k, end, ok := p.member(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		var bit uint8
		switch string(k) {
		case "content":
			bit = 1
			ok = p.text(&d.Content)
		case "refusal":
			bit = 2
			ok = p.text(&d.Refusal)
		case "reasoning":
			bit = 4
			ok = p.text(&d.Reasoning)
		case "reasoning_content":
			bit = 8
			ok = p.text(&d.ReasoningContent)
		case "tool_calls":
			bit = 16
			ok = p.lit("null") // anything else goes to the full decode
		default:
			if foldsTo(k, "content", "refusal", "reasoning", "reasoning_content", "tool_calls") {
				return false
			}
			_, ok = p.skip(0)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}
