// Package jsonscan walks JSON text without allocating, for the hot paths where encoding/json's
// reflection costs more than the work: a stream's chunks (package openai) and the gate's look
// at a request body (package server). It validates what it walks as encoding/json would.
// Callers decide only what they are sure encoding/json would decide the same way (keys with
// escapes, for one, are refused by Member) and hand anything else to encoding/json.
package jsonscan

// Scanner reads one JSON text from the start. Its zero value reads an empty text. It does
// not own the bytes: the slices it returns are views into them.
type Scanner struct {
	b []byte
	i int
}

// New returns a Scanner of b.
func New(b []byte) Scanner { return Scanner{b: b} }

// Advance consumes one byte: the one Peek returned.
func (p *Scanner) Advance() { p.i++ }

// Skip consumes n bytes the caller knows: ones an earlier scan of the same bytes validated.
func (p *Scanner) Skip(n int) { p.i += n }

// Pos is how many bytes were consumed.
func (p *Scanner) Pos() int { return p.i }

// Done reports whether every byte was consumed (call WS first to allow trailing whitespace).
func (p *Scanner) Done() bool { return p.i == len(p.b) }

// Value validates the JSON value that starts at the next byte (after Peek or Member, which
// skip whitespace) and returns its bytes.
func (p *Scanner) Value() ([]byte, bool) { return p.skip(0) }

// String validates the string that starts at the next byte (Peek returned '"') and returns
// its bytes, quotes included.
func (p *Scanner) String() ([]byte, bool) {
	start := p.i
	ok := p.str()
	return p.b[start:p.i], ok
}

// maxSkipDepth bounds the nesting of skipped values; deeper ones go to the full decode.
const maxSkipDepth = 64

// WS skips whitespace.
func (p *Scanner) WS() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// Peek returns the next byte after whitespace, or 0 at the end.
func (p *Scanner) Peek() byte {
	p.WS()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// Member reads the next member name of an object whose '{' was consumed, and the ':'
// after it; end is true once the '}' is consumed. Names must be plain ASCII without
// escapes.
func (p *Scanner) Member(first bool) (key []byte, end, ok bool) {
	c := p.Peek()
	if c == '}' {
		p.i++
		return nil, true, true
	}
	if !first {
		if c != ',' {
			return nil, false, false
		}
		p.i++
		c = p.Peek()
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
			if p.Peek() != ':' {
				return nil, false, false
			}
			p.i++
			p.WS()
			return key, false, true
		case b == '\\' || b < 0x20 || b >= 0x80:
			return nil, false, false
		}
	}
	return nil, false, false
}

// Element moves to the next element of an array whose '[' was consumed, past the ',' before
// it; end is true once the ']' is consumed.
func (p *Scanner) Element(first bool) (end, ok bool) {
	c := p.Peek()
	if c == ']' {
		p.i++
		return true, true
	}
	if !first {
		if c != ',' {
			return false, false
		}
		p.i++
		p.WS()
	}
	return false, true
}

// FoldsTo reports whether key, which is not exactly one of names, would still match one of
// them case-insensitively (ignoring '_' and '-' too, to be safe whatever the json package's
// matching rules).
func FoldsTo(key []byte, names ...string) bool {
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
func (p *Scanner) skip(depth int) ([]byte, bool) {
	start := p.i
	if p.i >= len(p.b) || depth > maxSkipDepth {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		if !p.str() {
			return nil, false
		}
	case c == '{' || c == '[':
		if !p.list(c, depth) {
			return nil, false
		}
	case c == 't':
		if !p.Lit("true") {
			return nil, false
		}
	case c == 'f':
		if !p.Lit("false") {
			return nil, false
		}
	case c == 'n':
		if !p.Lit("null") {
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

// list validates the members of an object or the elements of an array, whose opening byte
// open is next.
func (p *Scanner) list(open byte, depth int) bool {
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	p.i++
	for first := true; ; first = false {
		c := p.Peek()
		if c == end {
			p.i++
			return true
		}
		if !first {
			if c != ',' {
				return false
			}
			p.i++
			c = p.Peek()
		}
		if open == '{' {
			if c != '"' || !p.str() || p.Peek() != ':' {
				return false
			}
			p.i++
			p.WS()
		}
		if _, ok := p.skip(depth + 1); !ok {
			return false
		}
	}
}

// Lit consumes the literal s (true, false, null) if it comes at the next byte.
func (p *Scanner) Lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str validates a string starting at its opening quote. Bytes of 0x80 and above are taken
// as they are, as encoding/json's scanner does.
func (p *Scanner) str() bool {
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

func (p *Scanner) digits() int {
	n := 0
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// number validates a JSON number.
func (p *Scanner) number() bool {
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

// Integer reads a plain integer (no fraction or exponent) of at most 18 digits into *v;
// null leaves *v as it is.
func (p *Scanner) Integer(v *int) bool {
	if p.i < len(p.b) && p.b[p.i] == 'n' {
		return p.Lit("null")
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
