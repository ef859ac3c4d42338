package llm

// SessionHeader is the request header a client names its conversation with, whatever its
// wire (issue 46): for clients whose wire has no such field, or to override the one it has.
const SessionHeader = "X-Sluice-Session"

// KeySession sets r.Session to the conversation key found first, in this order: header
// (the X-Sluice-Session header's value), the client's prompt_cache_key, what the wire's
// decoder already set (Anthropic metadata.user_id), the Chat or Responses user field. The
// order goes from the most to the least deliberate: a header an operator sets on purpose,
// a key the client named for caching, then fields that also serve other ends (a user id is
// one per end user, not per conversation, so it comes last). Decoders call it with "" once
// the body is read; the server calls it again with the header, last: what the decoder set
// stays below the header and the prompt_cache_key.
func (r *Request) KeySession(header string) {
	for _, k := range [...]string{header, r.PromptCacheKey, r.Session, r.User} {
		if k != "" {
			r.Session = k
			return
		}
	}
}
