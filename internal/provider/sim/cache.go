package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The simulated prompt cache's bounds and rules (the package doc states them).
const (
	// maxEntries bounds the memory of one provider's cache: a prefix is a 32-byte key and a
	// few words, so 10k entries are well under a megabyte.
	maxEntries = 10_000
	// implicitMin is the smallest prefix OpenAI caches without markers (1024 tokens).
	implicitMin = 1024
	shortTTL    = 5 * time.Minute
	longTTL     = time.Hour
)

// promptCache is one simulated provider's prompt cache: the prefixes a request could cache,
// by a hash of the model and the prompt up to the end of a block, with the estimated tokens
// of that prefix. Entries expire lazily (TTL after their last write or hit); at maxEntries,
// an insert first drops the expired entries, then, if none was, any one entry. Safe for
// concurrent use; it owns no goroutine.
type promptCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]entry
	max     int
}

type entry struct {
	tokens  int
	ttl     time.Duration
	expires time.Time
}

func newPromptCache() *promptCache {
	return &promptCache{entries: map[[sha256.Size]byte]entry{}, max: maxEntries}
}

// boundary is the end of one block of the prompt in the order a provider caches it (tools,
// then the messages, system first): the hash of the model and everything up to it, the
// estimated tokens of that prefix, the breakpoint on the block if any, and whether it ends
// a message (msg is the message's index, -1 for a tool).
type boundary struct {
	key    [sha256.Size]byte
	tokens int
	mark   *llm.Cache
	msg    int
	msgEnd bool
}

// boundaries walks req block by block. The tokens are the estimate of internal/usage
// (PromptTokens: four bytes a token of the text, tool calls, reasoning and tool
// definitions), so that the last boundary's tokens are the whole prompt's estimate.
func boundaries(req *llm.Request) []boundary {
	h := sha256.New()
	field(h, req.Model)
	var out []boundary
	n := 0
	at := func(mark *llm.Cache, msg int, end bool) {
		var b boundary
		h.Sum(b.key[:0])
		b.tokens, b.mark, b.msg, b.msgEnd = (n+3)/4, mark, msg, end
		out = append(out, b)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		field(h, "tool", t.Namespace, t.Name, t.Description, string(t.Parameters))
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
		at(t.Cache, -1, false)
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		field(h, "message", string(m.Role), m.Name)
		for _, r := range m.Reasoning {
			field(h, "reasoning", r.Text, r.Encrypted)
			n += len(r.Text)
			at(nil, i, false)
		}
		for j := range m.Parts {
			p := &m.Parts[j]
			field(h, "part", string(p.Type), p.Text, p.URL, p.FileID, p.Data)
			n += len(p.Text)
			at(p.Cache, i, false)
		}
		field(h, "refusal", m.Refusal)
		n += len(m.Refusal)
		for j := range m.ToolCalls {
			tc := &m.ToolCalls[j]
			field(h, "call", tc.ID, tc.Name, tc.Arguments)
			n += len(tc.Name) + len(tc.Arguments)
			at(tc.Cache, i, false)
		}
		field(h, "end", m.ToolCallID)
		at(m.Cache, i, true)
	}
	return out
}

// field writes each of ss to h with its length, so that two fields cannot run into each
// other (as llm.CachePrefix does, which keeps its helper unexported).
func field(h hash.Hash, ss ...string) {
	var n [8]byte
	for _, s := range ss {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
}

// use is what the cache did for one request: the tokens read, the tokens written (1h ones
// among them), and the whole prompt's estimate, so that the reported prompt tokens hold
// them all.
type use struct {
	cached, write, write1h, prompt int
}

func (u use) zero() bool { return u.cached == 0 && u.write == 0 }

// apply puts u into a reported usage: the prompt tokens include the cache's (DESIGN §2).
func (u use) apply(r *llm.Usage) {
	r.CachedTokens, r.CacheWriteTokens, r.CacheWrite1hTokens = u.cached, u.write, u.write1h
	if p := max(r.PromptTokens, u.prompt, u.cached+u.write); p != r.PromptTokens {
		r.TotalTokens += p - r.PromptTokens
		r.PromptTokens = p
	}
}

// plan looks req up: the longest cached prefix within its cacheable prefix is read; with
// breakpoints, the part of the prefix beyond it is written. commit stores the prefixes the
// request caches, to be called once the upstream accepted the call (a refused call caches
// nothing).
func (c *promptCache) plan(req *llm.Request, now time.Time) (u use, commit func()) {
	bs := boundaries(req)
	if len(bs) == 0 {
		return use{}, func() {}
	}
	u.prompt = bs[len(bs)-1].tokens
	end, implicit := -1, true
	for i := range bs {
		if bs[i].mark != nil {
			end, implicit = i, false
		}
	}
	if implicit {
		// OpenAI's rule: the prompt but its last message, once it is 1024 tokens or more.
		last := bs[len(bs)-1].msg
		for i := range bs {
			if bs[i].msg < last || last < 0 {
				end = i
			}
		}
		if end < 0 || bs[end].tokens < implicitMin {
			return use{}, func() {}
		}
	}
	c.mu.Lock()
	for i := end; i >= 0; i-- {
		e, ok := c.entries[bs[i].key]
		if !ok {
			continue
		}
		if !now.Before(e.expires) {
			delete(c.entries, bs[i].key)
			continue
		}
		e.expires = now.Add(e.ttl) // a hit refreshes the entry, as the providers do
		c.entries[bs[i].key] = e
		u.cached = e.tokens
		break
	}
	c.mu.Unlock()
	var store []boundary
	if implicit {
		store = append(store, bs[end]) // read later, never reported as written
	} else {
		done := u.cached
		for _, b := range bs[:end+1] {
			if b.mark == nil {
				continue
			}
			store = append(store, b)
			if b.tokens > done {
				u.write += b.tokens - done
				if b.mark.Long() {
					u.write1h += b.tokens - done
				}
				done = b.tokens
			}
		}
	}
	return u, func() { c.store(store, now) }
}

// store writes the prefixes of bs, a breakpoint's with its TTL (an entry keeps the longer of
// its old and new TTL).
func (c *promptCache) store(bs []boundary, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bs {
		ttl := shortTTL
		if b.mark.Long() {
			ttl = longTTL
		}
		if e, ok := c.entries[b.key]; ok && now.Before(e.expires) && e.ttl > ttl {
			ttl = e.ttl
		} else if !ok {
			c.makeRoom(now)
		}
		c.entries[b.key] = entry{tokens: b.tokens, ttl: ttl, expires: now.Add(ttl)}
	}
}

// makeRoom keeps the cache under its bound before an insert: the expired entries go, and if
// none had, one entry does (map order: any one), as a provider evicts under pressure.
func (c *promptCache) makeRoom(now time.Time) {
	if len(c.entries) < c.max {
		return
	}
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < c.max {
			return
		}
		delete(c.entries, k)
	}
}

// len is the number of entries held, expired ones included until they are met.
func (c *promptCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
