package llm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sync"
)

// MaxCacheMarks is the most breakpoints Anthropic (and Claude on Bedrock and Vertex) take in
// one request; a request with more is refused with a 400 there.
const MaxCacheMarks = 4

// CacheMarks returns r's cache breakpoints in the order of the prompt a provider caches:
// tools, then the system and developer messages (Anthropic and Bedrock move them all to
// the system prompt, one from the middle of the conversation too), then the others, block
// by block: a message's parts, its tool calls, then the message's own block (a tool result).
func (r *Request) CacheMarks() []*Cache {
	var marks []*Cache
	for i := range r.Tools {
		if c := r.Tools[i].Cache; c != nil {
			marks = append(marks, c)
		}
	}
	for _, system := range [...]bool{true, false} {
		for i := range r.Messages {
			m := &r.Messages[i]
			if (m.Role == RoleSystem || m.Role == RoleDeveloper) != system {
				continue
			}
			for j := range m.Parts {
				if c := m.Parts[j].Cache; c != nil {
					marks = append(marks, c)
				}
			}
			for j := range m.ToolCalls {
				if c := m.ToolCalls[j].Cache; c != nil {
					marks = append(marks, c)
				}
			}
			if m.Cache != nil {
				marks = append(marks, m.Cache)
			}
		}
	}
	return marks
}

// CachePlan tells which of r's breakpoints an adapter whose provider takes at most max of
// them sends, and with which TTL, as Anthropic and Bedrock take them: the last max in
// prompt order (the one on the conversation, which a multi-turn session needs most, is
// last), and how many it leaves out. A 1h breakpoint that follows a shorter one (5m, or the
// default) in that order goes as 5m: both providers refuse a longer TTL after a shorter one
// ("cache entries with longer TTL must appear before shorter TTLs"); the prefix cached is
// the same, its later part lives 5 minutes. ttl's ok is false for a breakpoint left out,
// and for nil.
func (r *Request) CachePlan(max int) (ttl func(*Cache) (string, bool), dropped int) {
	marks := r.CacheMarks()
	if len(marks) > max {
		marks, dropped = marks[len(marks)-max:], len(marks)-max
	}
	plan := make(map[*Cache]string, len(marks))
	short := false
	for _, c := range marks {
		t := c.TTL
		if t == "1h" && short {
			t = "5m"
		}
		short = short || t != "1h"
		plan[c] = t
	}
	return func(c *Cache) (string, bool) {
		t, ok := plan[c]
		return t, ok
	}, dropped
}

// AutoCache puts breakpoints on a request whose client sent none (an alias's prompt_cache:
// auto): on the last tool, on the last system block and on the last block of the last user
// message, the prefix a multi-turn conversation repeats. The slices it marks are copied,
// so a clone of r that shares them is left as it was. It reports whether it marked any.
func (r *Request) AutoCache() bool {
	if len(r.CacheMarks()) > 0 {
		return false
	}
	marked := false
	if n := len(r.Tools); n > 0 {
		r.Tools = append([]Tool(nil), r.Tools...)
		r.Tools[n-1].Cache = &Cache{}
		marked = true
	}
	lastSystem, lastUser := -1, -1
	for i := range r.Messages {
		switch r.Messages[i].Role {
		case RoleSystem, RoleDeveloper:
			if lastUser < 0 {
				lastSystem = i
			}
		case RoleUser, RoleTool:
			lastUser = i
		}
	}
	var msgs []Message
	for _, i := range []int{lastSystem, lastUser} {
		if i < 0 {
			continue
		}
		if msgs == nil {
			msgs = append([]Message(nil), r.Messages...)
		}
		m := &msgs[i]
		switch {
		case m.Role == RoleTool:
			m.Cache = &Cache{}
		case len(m.Parts) > 0:
			m.Parts = append([]Part(nil), m.Parts...)
			m.Parts[len(m.Parts)-1].Cache = &Cache{}
		default:
			continue
		}
		marked = true
	}
	if msgs != nil {
		r.Messages = msgs
	}
	return marked
}

// CachePrefix is a hash of the part of r that a provider caches first and that a
// conversation repeats on every turn: the tools, the system blocks and the first other
// message. Two turns of one conversation share it; affinity uses it when the client named
// no Session. Hex, 32 characters.
func (r *Request) CachePrefix() string {
	// On the request path of every alias with affinity (issue 46): the fields go through
	// one buffer into the hash, so the prompt is neither copied nor converted per field.
	p := prefixHashes.Get().(*prefixHash)
	defer prefixHashes.Put(p)
	p.h.Reset()
	p.buf = p.buf[:0]
	for i := range r.Tools {
		t := &r.Tools[i]
		field(p, t.Namespace)
		field(p, t.Name)
		field(p, t.Description)
		field(p, t.Parameters)
	}
	first := true
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.Role != RoleSystem && m.Role != RoleDeveloper {
			if !first {
				break
			}
			first = false
		}
		field(p, m.Role)
		for j := range m.Parts {
			pt := &m.Parts[j]
			field(p, pt.Text)
			field(p, pt.URL)
			field(p, pt.FileID)
			field(p, pt.Data)
		}
	}
	p.h.Write(p.buf)
	var sum [sha256.Size]byte
	return hex.EncodeToString(p.h.Sum(sum[:0])[:16])
}

// prefixHashes keeps CachePrefix's hash and buffer between requests.
var prefixHashes = sync.Pool{New: func() any { return &prefixHash{h: sha256.New(), buf: make([]byte, 0, 1024)} }}

// prefixHash feeds CachePrefix's hash through buf.
type prefixHash struct {
	h   hash.Hash
	buf []byte
}

// field writes s to p with its length, so that two fields cannot run into each other.
func field[T ~string | ~[]byte](p *prefixHash, s T) {
	if cap(p.buf)-len(p.buf) < 8 {
		p.h.Write(p.buf)
		p.buf = p.buf[:0]
	}
	p.buf = binary.LittleEndian.AppendUint64(p.buf, uint64(len(s)))
	for len(s) > 0 {
		if len(p.buf) == cap(p.buf) {
			p.h.Write(p.buf)
			p.buf = p.buf[:0]
		}
		n := copy(p.buf[len(p.buf):cap(p.buf)], s)
		p.buf, s = p.buf[:len(p.buf)+n], s[n:]
	}
}
