package bedrock

import (
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// points decides the cachePoint blocks of one request (issue 46): a cachePoint right after
// each block the client marked (llm.Cache), in system, toolConfig.tools and the messages.
// Bedrock takes at most llm.MaxCacheMarks of them (the last ones are kept: the one on the
// conversation matters most); Claude models take them everywhere, Nova models in system and
// messages only, other models none. A marker the target cannot take is left out and
// counted, never turned into a 400. A nil *points places nothing. Not safe for concurrent
// use; it lives for one encodeRequest.
type points struct {
	// plan holds the breakpoints still to place, each with the TTL to send ("", "5m", "1h").
	plan map[*llm.Cache]string
	// dropped counts the breakpoints left out so far.
	dropped int
}

// family is what a model id says about prompt caching on Bedrock.
type family int

const (
	noCache     family = iota // Bedrock refuses a cachePoint for the model
	nova                      // Amazon Nova: system and messages, no TTL
	claudeCache               // Anthropic Claude: system, tools and messages
)

func cacheFamily(model string) family {
	switch {
	case claude(model):
		return claudeCache
	case strings.Contains(model, "amazon.nova"):
		return nova
	}
	return noCache
}

// newPoints plans the breakpoints of req for its model. ttl says whether the model takes a
// cachePoint's ttl (Claude 4.5 and later); without it every point has the default, 5m.
func newPoints(req *llm.Request) *points {
	marks := req.CacheMarks()
	if len(marks) == 0 {
		return nil
	}
	fam := cacheFamily(req.Model)
	if fam == noCache {
		return &points{dropped: len(marks)}
	}
	p := &points{plan: map[*llm.Cache]string{}}
	r := req
	if fam == nova {
		// Nova caches no tool definitions: their marks go before the limit is applied.
		c := *req
		c.Tools = nil
		r = &c
		p.dropped = len(marks) - len(r.CacheMarks())
	}
	// The last 4 in the order Bedrock caches, and a 1h after a shorter one as 5m: Bedrock
	// refuses a longer TTL after a shorter one, as Anthropic does (llm.Request.CachePlan).
	plan, dropped := r.CachePlan(llm.MaxCacheMarks)
	p.dropped += dropped
	long := fam == claudeCache && longTTL(req.Model)
	for _, c := range r.CacheMarks() {
		if ttl, ok := plan(c); ok {
			if !long {
				ttl = "" // the model takes no ttl: the default, 5 minutes
			}
			p.plan[c] = ttl
		}
	}
	return p
}

// point is the cachePoint to put after a block whose breakpoints are cs (a tool result's
// own and its parts'), nil when none of them is to be sent. Two breakpoints on one block
// make one cachePoint, with the longer TTL; the other counts as dropped.
func (p *points) point(cs ...*llm.Cache) *bedrock.CachePoint {
	if p == nil {
		return nil
	}
	var cp *bedrock.CachePoint
	for _, c := range cs {
		ttl, ok := p.plan[c]
		if c == nil || !ok {
			continue
		}
		delete(p.plan, c)
		if cp != nil {
			p.dropped++
			if ttl == "1h" {
				cp.TTL = ttl
			}
			continue
		}
		cp = &bedrock.CachePoint{Type: cacheDefault, TTL: ttl}
	}
	return cp
}

// left is the count of breakpoints left out: over the limit, on a block of a kind the model
// cannot cache, or on a block that is not sent (an empty text, the tools of tool_choice
// none).
func (p *points) left() int {
	if p == nil {
		return 0
	}
	return p.dropped + len(p.plan)
}

// longTTL reports whether a Claude model takes a cachePoint's ttl: the 1-hour cache came
// with Claude Opus, Sonnet and Haiku 4.5 ("anthropic.claude-sonnet-4-5-20250929-v1:0");
// earlier models ("anthropic.claude-3-7-sonnet-...", "anthropic.claude-sonnet-4-2025...")
// refuse it, and get the default.
func longTTL(model string) bool {
	i := strings.Index(model, "anthropic.claude-")
	if i < 0 {
		return false
	}
	f := strings.Split(model[i+len("anthropic.claude-"):], "-")
	if len(f) < 2 || (f[0] != "opus" && f[0] != "sonnet" && f[0] != "haiku") {
		return false // the 3.x ids put the version first
	}
	major, err := strconv.Atoi(f[1])
	if err != nil {
		return false
	}
	if major != 4 {
		return major > 4
	}
	if len(f) < 3 {
		return false
	}
	minor, err := strconv.Atoi(f[2])
	// A minor version is short; "4-20250514" is Claude 4.0 and its date.
	return err == nil && len(f[2]) <= 2 && minor >= 5
}
