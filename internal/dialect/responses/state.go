package responses

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// The gateway keeps the Responses API's state itself (issue 35), so that store: true and
// previous_response_id work whatever the target (Chat, Anthropic, Gemini, Bedrock, Responses),
// on any replica and across a fallback from one kind to another:
//
//   - A request with store: true is kept, once answered in full, under the response id the
//     client got: its conversation (the items it continued, its own input after input
//     redaction), its output items as the next request hands them back, and its Response
//     object as the client got it (GET /v1/responses/{id}). Instructions are not carried
//     over, as at OpenAI: a follow-up sends its own.
//   - A request with previous_response_id gets that conversation ahead of its own input
//     before anything else sees it (admission, guardrails, the cache, the chain): every
//     target is sent the whole conversation in its own wire, a Responses target too, with
//     store: false and without previous_response_id. An OpenAI upstream never holds the
//     state, so a fallback between kinds loses nothing, and its own ids (which the client
//     never sees) are never needed.
//   - Every entry belongs to the key that made it: another key's id is unknown (404).
//   - A chain of responses is one conversation (issue 46): a record keeps the chain's
//     session (the request's, else the id of the chain's first response), and a request
//     continuing it takes that as its llm.Request.Session unless the client named one more
//     deliberately than its user field (the X-Sluice-Session header, a prompt_cache_key):
//     its prompt_cache_key upstream and its target (affinity) stay the chain's from the
//     chain's second request on (the first is keyed before its response has an id).

// record is a stored response as the store keeps it (JSON).
type record struct {
	Key      string            `json:"key"`               // the id of the key that made it ("": auth is off)
	Response json.RawMessage   `json:"response"`          // the Response object as its client got it
	Input    []json.RawMessage `json:"input"`             // the conversation before its output
	Output   []json.RawMessage `json:"output"`            // its output items, to hand back
	Session  string            `json:"session,omitempty"` // the chain's conversation key
}

// kept is one request's side of the stored responses: what it continues, and what it keeps.
type kept struct {
	st  *dialect.State
	key string
	rr  *Request
	d   *dialect.Decoded
	w   *Wire
	// prev is the conversation the previous response left; own the request's input items
	// (after redaction), both set by resume.
	prev, own []json.RawMessage
}

// keepState gives d the stored responses' hooks when the gateway keeps state (in.State):
// previous_response_id is then any target's to serve, and nothing is kept upstream.
func keepState(d *dialect.Decoded, rr *Request, in dialect.Input) {
	if !in.State.On() {
		return
	}
	k := &kept{st: in.State, key: in.Key, rr: rr, d: d}
	d.Needs = rr.nativeItem()
	d.Resume = k.resume
	if rr.Req.Store != nil && *rr.Req.Store {
		d.Keep = k.keep
		answer := d.Answer
		d.Answer = func(id string) dialect.Wire {
			// A kept response's id is a key of the store, so it is the request's own, never
			// the X-Request-Id its client chose: another key's request with the same one
			// cannot take it (issue 47).
			k.w = answer(cmp.Or(in.Record, id)).(*Wire)
			return k.w
		}
	}
	setField(rr.Req.Native, "store", []byte("false"))
}

// resume reads the request's own input as the upstream will get it (redacted by now), and
// puts the conversation previous_response_id names ahead of it, in the vocabulary and in the
// body a Responses target gets.
func (k *kept) resume(ctx context.Context) error {
	n := k.rr.Req.Native
	own, err := items(field(n, "input"))
	if err != nil {
		return err
	}
	k.own = own
	id := k.rr.Req.PreviousResponseID
	if id == "" {
		return nil
	}
	rec, err := load(ctx, k.st, id, k.key)
	if err != nil {
		return err
	}
	if rec == nil {
		e := oai.Invalid("previous_response_id", "Previous response with id '%s' not found.", id)
		e.Code = "previous_response_not_found"
		return e
	}
	if q := &k.rr.Req; q.Session == "" || q.Session == q.User && q.PromptCacheKey == "" {
		q.Session = rec.Session
		if q.Session == "" { // kept before chains had one: the response it continues
			q.Session = id
		}
	}
	k.prev = append(append(make([]json.RawMessage, 0, len(rec.Input)+len(rec.Output)), rec.Input...), rec.Output...)
	all := append(append(make([]json.RawMessage, 0, len(k.prev)+len(own)), k.prev...), own...)
	// What only a Responses upstream reads (an OpenAI file) in the stored part reaches a
	// Responses target, and is left out for the others, as in the request's own input.
	msgs, _, err := decodeInput(list(all))
	if err != nil {
		return err
	}
	head := 0
	if k.rr.echo.Instructions != nil {
		head = 1 // the instructions' system message, which Decode put first
	}
	k.rr.Req.Messages = append(k.rr.Req.Messages[:head:head], msgs...)
	upstream := append(forResponses(k.prev), own...)
	setField(n, "input", list(upstream))
	dropField(n, "previous_response_id")
	k.rr.Req.PreviousResponseID = ""
	return nil
}

// keep stores the answer under its response id for alias's ttl, once it completed (or was
// cut by max_output_tokens or a filter): a failed answer is not kept.
func (k *kept) keep(ctx context.Context, alias string) error {
	if k.w == nil {
		return nil
	}
	resp, out, ok := k.w.kept()
	if !ok {
		return nil
	}
	in := append(append(make([]json.RawMessage, 0, len(k.prev)+len(k.own)), k.prev...), k.own...)
	// The first response of a chain names it, unless its client named the conversation
	// more deliberately than by its user field; the others keep what resume found.
	session, q := k.rr.Req.Session, &k.rr.Req
	if len(k.prev) == 0 && (session == "" || session == q.User && q.PromptCacheKey == "") {
		session = k.w.meta.id
	}
	b, err := json.Marshal(record{Key: k.key, Response: resp, Input: in, Output: out, Session: session})
	if err != nil {
		return err
	}
	added, err := k.st.Store.Add(ctx, k.w.meta.id, b, k.st.TTL(alias))
	if err == nil && !added {
		err = errors.New("responses: " + k.w.meta.id + " is kept already (a reused X-Request-Id): the first stays")
	}
	return err
}

// load is the record of id when it belongs to key; nil, nil when there is none.
func load(ctx context.Context, st *dialect.State, id, key string) (*record, error) {
	b, err := st.Store.Get(ctx, id)
	if err != nil || b == nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("responses: the record of %s does not decode: %w", id, err)
	}
	if rec.Key != key {
		return nil, nil // another key's: unknown to this one
	}
	return &rec, nil
}

// items is a Responses input as a list of items: a string is one user message.
func items(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || oai.IsNull(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		b := append([]byte(`{"type":"message","role":"user","content":`), raw...)
		return []json.RawMessage{append(b, '}')}, nil
	}
	els, err := oai.Elements(raw)
	if err != nil {
		return nil, oai.TypeErr("input", "a string or an array of input items")
	}
	out := make([]json.RawMessage, len(els))
	for i, e := range els {
		out[i] = compact(e)
	}
	return out, nil
}

// list is items as one JSON array.
func list(items []json.RawMessage) json.RawMessage {
	b := []byte{'['}
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

// forResponses is the stored conversation as a Responses upstream gets it: reasoning items
// only with OpenAI's own encrypted content (another provider's opaque reasoning, an
// Anthropic signature, would be refused there).
func forResponses(conv []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(conv))
	for _, it := range conv {
		var r struct {
			Type      string `json:"type"`
			Encrypted string `json:"encrypted_content"`
		}
		if json.Unmarshal(it, &r) == nil && r.Type == "reasoning" && !openAIEncrypted(r.Encrypted) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// openAIEncrypted reports whether a reasoning item's encrypted_content is OpenAI's: a Fernet
// token, whose version byte 0x80 and the zero high bytes of its timestamp start every one of
// them with "gAAAA" ("gAAAAAB" today). Anthropic signatures and Gemini thought signatures
// (protobuf, whose first byte is a field tag, never 0x80) never do. Only an OpenAI Responses
// target can read it: the other adapters never get it (README, "Responses").
func openAIEncrypted(s string) bool { return strings.HasPrefix(s, "gAAAA") }

// field is the value of the client's member name, nil when absent.
func field(n *llm.Native, name string) json.RawMessage {
	for _, f := range n.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// setField sets the client's member name to v, adding it when absent.
func setField(n *llm.Native, name string, v json.RawMessage) {
	for i := range n.Fields {
		if n.Fields[i].Name == name {
			n.Fields[i].Value = v
			return
		}
	}
	n.Fields = append(n.Fields, llm.Field{Name: name, Value: v})
}

func dropField(n *llm.Native, name string) {
	kept := n.Fields[:0]
	for _, f := range n.Fields {
		if f.Name != name {
			kept = append(kept, f)
		}
	}
	n.Fields = kept
}

// serveKept answers the stored-response routes: GET /v1/responses/{id} (the Response
// object), DELETE /v1/responses/{id} (OpenAI's deletion object) and GET
// /v1/responses/{id}/input_items (the conversation before it, OpenAI's list: newest first
// unless order=asc, limit 1..100, default 20, after an item id). Another key's response is
// unknown: 404, as an id that never was.
func serveKept(ctx context.Context, in dialect.Input) (int, []byte) {
	id := in.Param("id")
	if !in.State.On() {
		return notFound(id)
	}
	rec, err := load(ctx, in.State, id, in.Key)
	if err != nil {
		return oai.Error(err, nil)
	}
	if rec == nil {
		return notFound(id)
	}
	switch {
	case in.Method == http.MethodDelete:
		if _, err := in.State.Store.Delete(ctx, id); err != nil {
			return oai.Error(err, nil)
		}
		b := append([]byte(`{"id":`), oai.AppendString(nil, id)...)
		return http.StatusOK, append(b, `,"object":"response","deleted":true}`...)
	case strings.HasSuffix(in.Route, "/input_items"):
		return inputItems(rec.Input, in.Query)
	}
	return http.StatusOK, rec.Response
}

func notFound(id string) (int, []byte) {
	e := &llm.Error{Kind: llm.Invalid, Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: "Response with id '" + id + "' not found."}
	return oai.Error(e, nil)
}

// inputItems is a page of items in OpenAI's list shape.
func inputItems(all []json.RawMessage, query func(string) string) (int, []byte) {
	limit := 20
	if q := query("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > 100 {
			return oai.Error(oai.Invalid("limit", "Invalid 'limit': expected an integer between 1 and 100."), nil)
		}
		limit = n
	}
	order := query("order")
	switch order {
	case "", "desc":
		rev := make([]json.RawMessage, len(all))
		for i, it := range all {
			rev[len(all)-1-i] = it
		}
		all = rev
	case "asc":
	default:
		return oai.Error(oai.Invalid("order", "Invalid value for 'order': '%s'. Supported values are: 'asc' and 'desc'.", order), nil)
	}
	ids := make([]string, len(all))
	for i, it := range all {
		var v struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(it, &v) // stored items are objects
		ids[i] = v.ID
	}
	if after := query("after"); after != "" {
		for i := range ids {
			if ids[i] == after {
				all, ids = all[i+1:], ids[i+1:]
				break
			}
		}
	}
	more := len(all) > limit
	if more {
		all, ids = all[:limit], ids[:limit]
	}
	b := append([]byte(`{"object":"list","data":`), list(all)...)
	b = append(b, `,"first_id":`...)
	b = appendID(b, ids, 0)
	b = append(b, `,"last_id":`...)
	b = appendID(b, ids, len(ids)-1)
	b = append(b, `,"has_more":`...)
	b = strconv.AppendBool(b, more)
	return http.StatusOK, append(b, '}')
}

func appendID(b []byte, ids []string, i int) []byte {
	if i < 0 || i >= len(ids) || ids[i] == "" {
		return append(b, "null"...)
	}
	return oai.AppendString(b, ids[i])
}

// appendBack appends an output item as the next request hands it back, nil for none:
// messages and calls without their ids (a Responses upstream that stored nothing would look
// them up), reasoning only with its opaque content (whether or not the client asked for it:
// it is what the provider that wrote it needs; a summary alone cannot be handed back), an
// item the gateway does not model as the upstream wrote it.
func appendBack(b []byte, it *outItem) []byte {
	switch it.kind {
	case itemRaw:
		return append(b, it.raw...)
	case itemReasoning:
		if it.encrypted == "" {
			return nil
		}
		return appendItem(b, it, true)
	case itemMessage:
		b = append(b, `{"type":"message","role":"assistant","content":[`...)
		for i, p := range it.parts {
			if i > 0 {
				b = append(b, ',')
			}
			if p.refusal {
				b = append(b, `{"type":"refusal","refusal":`...)
			} else {
				b = append(b, `{"type":"output_text","text":`...)
			}
			b = oai.AppendString(b, p.text.String())
			b = append(b, '}')
		}
		return append(b, "]}"...)
	}
	b = append(b, `{"type":`...)
	if it.kind == itemCustom {
		b = append(b, `"custom_tool_call","input":`...)
	} else {
		b = append(b, `"function_call","arguments":`...)
	}
	b = oai.AppendString(b, it.args)
	b = append(b, `,"call_id":`...)
	b = oai.AppendString(b, it.callID)
	b = append(b, `,"name":`...)
	b = oai.AppendString(b, it.name)
	if it.namespace != "" {
		b = append(b, `,"namespace":`...)
		b = oai.AppendString(b, it.namespace)
	}
	return append(b, '}')
}
