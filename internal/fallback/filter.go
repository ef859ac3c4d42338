package fallback

import "iter"

// All yields the chain's targets in order: every element's members, or Targets for a chain
// of single targets.
func (c *Chain) All() iter.Seq[*Target] {
	return func(yield func(*Target) bool) {
		if len(c.Elements) == 0 {
			for i := range c.Targets {
				if !yield(&c.Targets[i]) {
					return
				}
			}
			return
		}
		for _, el := range c.Elements {
			for i := range el.Targets {
				if !yield(&el.Targets[i]) {
					return
				}
			}
		}
	}
}

// Filter returns a copy of c that keeps only the targets keep accepts, in order: a group keeps
// its accepted members with their weights, and an element left empty is dropped. It returns
// nil when no target is left. c is not changed, and the copy shares its Health, so a
// target's cooldown holds in both. A request that only some targets can serve (a Responses
// previous_response_id) walks the filtered chain.
func (c *Chain) Filter(keep func(*Target) bool) *Chain {
	elems := c.Elements
	if len(elems) == 0 {
		elems = make([]Element, len(c.Targets))
		for i := range c.Targets {
			elems[i] = Element{Targets: c.Targets[i : i+1]}
		}
	}
	var out []Element
	for _, el := range elems {
		var kept Element
		for i := range el.Targets {
			if !keep(&el.Targets[i]) {
				continue
			}
			kept.Targets = append(kept.Targets, el.Targets[i])
			if el.Weights != nil {
				kept.Weights = append(kept.Weights, el.Weights[i])
			}
		}
		if len(kept.Targets) > 0 {
			out = append(out, kept)
		}
	}
	if len(out) == 0 {
		return nil
	}
	cp := *c
	cp.Elements, cp.Targets = out, nil
	return &cp
}

// responsesAPI is implemented by providers that may speak the Responses API upstream.
type responsesAPI interface{ ResponsesAPI() bool }

// ServesResponses reports whether t speaks the Responses API upstream, a Filter. Only such a
// target can serve a previous_response_id, a conversation, a stored prompt, an item_reference
// or a file (they live in that upstream's store), or run a hosted tool (web_search, ...).
func ServesResponses(t *Target) bool {
	p, ok := t.Provider.(responsesAPI)
	return ok && p.ResponsesAPI()
}
