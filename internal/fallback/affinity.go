package fallback

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Affinity remembers which member of a weighted group serves a conversation, so that its
// next turns reach the provider that holds its prompt cache (issue 46). Keys are short
// hashes the chain makes of the alias, the element and the conversation; values are target
// names. Implementations are safe for concurrent use: AffinityMemory keeps one replica's,
// a shared store (redisstore.Affinity) the fleet's. An error is the store's to count and
// log: the chain then picks by weight, as without affinity, and never fails the request.
type Affinity interface {
	// Get returns the target remembered under key and keeps the entry for ttl from now:
	// each turn refreshes it. When none is remembered it returns "" and remembers pick
	// (unless ""), the member the chain will try first, for ttl: a turn costs one round trip
	// in a shared store, the first one of a conversation too (issue 46: at most one added
	// per request).
	Get(ctx context.Context, key, pick string, ttl time.Duration) (string, error)
	// Set remembers target under key for ttl. The chain calls it only when another target
	// served than the one Get returned or claimed (the conversation moved).
	Set(ctx context.Context, key, target string, ttl time.Duration) error
}

// AffinityTTL is how long a conversation stays on its target after its last turn: the life
// of a provider's default prompt cache (Anthropic's and Bedrock's 5 minutes).
const AffinityTTL = 5 * time.Minute

// Affinity outcomes, as llm.Response.Affinity and the request log show them.
const (
	AffinityNew   = "new"   // no target was remembered: one was picked by weight
	AffinityKept  = "kept"  // the remembered target served
	AffinityMoved = "moved" // the remembered target was cooling or failed: another served
)

// look is one lookup of a run: a weighted group's entry for the run's conversation.
type look struct {
	el   *Element
	key  string  // the store's key
	x    float64 // in [0, 1): the conversation's weighted pick when it has no target
	had  string  // the target remembered ("": none), then the one that served
	pick string  // when none was: the member claimed for it by Get
	bad  bool    // the store failed: no write either
}

// conversation is the run's conversation key: the client's Session, else the hash of the
// request's cacheable prefix, and which of the two it is. Computed once per run, when a
// group first needs it.
func (r *Run) conversation() (kind byte, key string) {
	if r.conv == "" {
		if r.req.Session != "" {
			r.conv, r.convKind = r.req.Session, 's'
		} else {
			r.conv, r.convKind = r.req.CachePrefix(), 'p'
		}
	}
	return r.convKind, r.conv
}

// lookup reads the conversation's entry for element idx, el, a group. It returns nil when
// the chain keeps no affinity.
func (r *Run) lookup(ctx context.Context, idx int, el *Element, cands []int) *look {
	if r.chain.Affinity == nil || len(el.Targets) < 2 {
		return nil
	}
	// The alias and the element's index namespace the conversation: another alias, or
	// another group of this one, picks on its own. Hashed, so a client's session string of
	// any length or content makes a short key. On the stack: this is every request's path.
	kind, conv := r.conversation()
	var buf [256]byte
	b := append(buf[:0], r.chain.Alias...)
	b = strconv.AppendInt(append(b, 0), int64(idx), 10)
	b = append(append(b, 0, kind), conv...)
	sum := sha256.Sum256(b)
	l := look{el: el, key: hex.EncodeToString(sum[:12]),
		x: float64(binary.BigEndian.Uint64(sum[12:20])>>11) / (1 << 53)}
	if len(cands) > 0 { // the member a new conversation goes to unless it is cooling
		l.pick = el.Targets[cands[r.choose(el, cands, l.x)]].Name
	}
	had, err := r.chain.Affinity.Get(ctx, l.key, l.pick, AffinityTTL)
	l.had, l.bad = had, err != nil
	if r.looks == nil {
		r.looks = r.look0[:0]
	}
	r.looks = append(r.looks, l)
	return &r.looks[len(r.looks)-1]
}

// remembered returns the index in cands of the member l remembers, -1 when none is.
func (l *look) remembered(cands []int) int {
	if l == nil || l.had == "" {
		return -1
	}
	for j, i := range cands {
		if l.el.Targets[i].Name == l.had {
			return j
		}
	}
	return -1
}

// claimed returns the index in cands of the member l's Get claimed for a new conversation,
// -1 when it claimed none or it is no longer a candidate: a route that draws at random
// then serves the conversation with the member it remembers.
func (l *look) claimed(cands []int) int {
	if l == nil || l.had != "" || l.pick == "" {
		return -1
	}
	for j, i := range cands {
		if l.el.Targets[i].Name == l.pick {
			return j
		}
	}
	return -1
}

// committed records affinity's outcome for an attempt on t that committed, and remembers t
// for the conversation when the group's entry named another target or none.
func (r *Run) committed(ctx context.Context, t *Target) {
	if len(r.looks) == 0 {
		return
	}
	for i := range r.looks {
		l := &r.looks[i]
		if !l.el.holds(t) {
			continue
		}
		switch l.had {
		case t.Name:
			r.Affinity = AffinityKept
			return
		case "":
			r.Affinity = AffinityNew
			if l.pick == t.Name { // Get claimed it already
				l.had = t.Name
				return
			}
		default:
			r.Affinity = AffinityMoved
		}
		l.had = t.Name
		if !l.bad {
			l.bad = r.chain.Affinity.Set(ctx, l.key, t.Name, AffinityTTL) != nil
		}
		return
	}
	// A later element served: the group's target, if it had one, lost the conversation.
	r.Affinity = ""
	for _, l := range r.looks {
		if l.had != "" {
			r.Affinity = AffinityMoved
		}
	}
}

// holds reports whether t is one of el's targets.
func (el *Element) holds(t *Target) bool {
	for i := range el.Targets {
		if &el.Targets[i] == t {
			return true
		}
	}
	return false
}

// autoCache is req with the breakpoints of prompt_cache: auto when the chain asks for them
// and the client sent none (llm.Request.AutoCache): a shallow copy, so the caller's request
// (its guardrails, log and response cache) is left as it came.
func (c *Chain) autoCache(req *llm.Request) *llm.Request {
	if !c.AutoCache || req == nil {
		return req
	}
	cp := *req
	if cp.AutoCache() {
		return &cp
	}
	return req
}

// DefaultAffinityEntries bounds an AffinityMemory whose MaxEntries is zero.
const DefaultAffinityEntries = 100_000

// AffinityMemory is an Affinity kept in this process, for a gateway without Redis: at most
// MaxEntries conversations, the least recently used evicted first (with one TTL for all,
// the first to expire). Expiry is lazy: no goroutine. The zero value is ready; safe for
// concurrent use.
type AffinityMemory struct {
	// MaxEntries bounds the entries (0: DefaultAffinityEntries).
	MaxEntries int
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu  sync.Mutex
	m   map[string]*list.Element
	lru list.List // of *affEntry, most recently used first
}

type affEntry struct {
	key, target string
	until       time.Time
}

var _ Affinity = (*AffinityMemory)(nil)

func (a *AffinityMemory) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Get implements Affinity.
func (a *AffinityMemory) Get(_ context.Context, key, pick string, ttl time.Duration) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.m[key]; ok {
		ent := e.Value.(*affEntry)
		now := a.now()
		if now.Before(ent.until) {
			ent.until = now.Add(ttl)
			a.lru.MoveToFront(e)
			return ent.target, nil
		}
		a.lru.Remove(e)
		delete(a.m, key)
	}
	if pick != "" {
		a.set(key, pick, ttl)
	}
	return "", nil
}

// Set implements Affinity.
func (a *AffinityMemory) Set(_ context.Context, key, target string, ttl time.Duration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.set(key, target, ttl)
	return nil
}

// set is Set with a.mu held.
func (a *AffinityMemory) set(key, target string, ttl time.Duration) {
	until := a.now().Add(ttl)
	if e, ok := a.m[key]; ok {
		ent := e.Value.(*affEntry)
		ent.target, ent.until = target, until
		a.lru.MoveToFront(e)
		return
	}
	if a.m == nil {
		a.m = map[string]*list.Element{}
	}
	limit := a.MaxEntries
	if limit <= 0 {
		limit = DefaultAffinityEntries
	}
	for a.lru.Len() >= limit {
		back := a.lru.Back()
		a.lru.Remove(back)
		delete(a.m, back.Value.(*affEntry).key)
	}
	a.m[key] = a.lru.PushFront(&affEntry{key: key, target: target, until: until})
}

// Len is the number of entries held, expired ones not yet dropped included.
func (a *AffinityMemory) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lru.Len()
}
