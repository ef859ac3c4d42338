package objects

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/llm"
)

// rewriter rewrites the ids of a host's JSON answer into the gateway's (Encode): the
// object's id, its file ids (a batch's input, output and error files) and Anthropic's
// results_url; the output and error files of a batch are recorded as its owner's. A list
// keeps only key's objects.
type rewriter struct {
	s      *Service
	name   string // the host's
	prefix string // of the objects' ids
	base   string // the gateway's root, for results_url
	// owner is the record of a single object's answer; list: the answer is a page whose
	// objects are kept when key owns them.
	owner Record
	list  bool
	key   string
	// created: the answer is of an object the call made, recorded as owner's.
	created bool
	// t, when set, releases the budget holds of a batch the answer shows ended with nothing
	// left to charge (ended).
	t *admit.Ticket
}

// rewrite is b, the host's answer, with the gateway's ids.
func (rw rewriter) rewrite(ctx context.Context, b []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil, badAnswer()
	}
	if !rw.list {
		if err := rw.object(ctx, m, rw.owner); err != nil {
			return nil, err
		}
		return json.Marshal(m)
	}
	var data []map[string]json.RawMessage
	if json.Unmarshal(m["data"], &data) != nil {
		return nil, badAnswer()
	}
	kept := make([]map[string]json.RawMessage, 0, len(data))
	for _, o := range data {
		id := rw.id(o["id"], rw.prefix)
		if id == "" {
			continue
		}
		rec, err := rw.s.records().owned(ctx, id, rw.key, errNo)
		if err != nil {
			continue // another key's, or made around the gateway
		}
		if err := rw.object(ctx, o, rec); err != nil {
			return nil, err
		}
		kept = append(kept, o)
	}
	m["data"], _ = json.Marshal(kept)
	for _, k := range []string{"first_id", "last_id"} {
		if id := rw.id(m[k], rw.prefix); id != "" {
			m[k], _ = json.Marshal(id)
		}
	}
	return json.Marshal(m)
}

// object rewrites the ids of one object whose record is owner.
func (rw rewriter) object(ctx context.Context, o map[string]json.RawMessage, owner Record) error {
	id := rw.id(o["id"], rw.prefix)
	if id != "" {
		o["id"], _ = json.Marshal(id)
		if rw.created {
			if err := rw.s.records().put(ctx, id, owner); err != nil {
				return err
			}
		}
	}
	if rw.t != nil && len(owner.Holds) > 0 && rw.prefix != FilePrefix && ended(o) {
		rw.t.ReleaseBudget(context.WithoutCancel(ctx), owner.Holds)
	}
	if _, ok := o["results_url"]; ok && id != "" && string(o["results_url"]) != "null" {
		o["results_url"], _ = json.Marshal(rw.base + "/v1/messages/batches/" + id + "/results")
	}
	for _, k := range []string{"input_file_id", "output_file_id", "error_file_id"} {
		fid := rw.id(o[k], FilePrefix)
		if fid == "" {
			continue
		}
		o[k], _ = json.Marshal(fid)
		if k != "input_file_id" && id != "" {
			out := owner
			if !strings.HasPrefix(rw.name, EmulatePrefix) { // an emulated line was accounted as it ran
				out.Batch = id
			}
			if k != "output_file_id" || out.Batch == "" {
				out.Holds = nil // reading it charges nothing
			}
			if err := rw.s.records().put(ctx, fid, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// ended reports whether o, a batch (OpenAI's or Anthropic's), ended with nothing left to
// charge: its holds can go. One with an output file or succeeded results is charged as
// they are read, and its holds go once they were read whole (Service.account).
func ended(o map[string]json.RawMessage) bool {
	var st string
	if json.Unmarshal(o["status"], &st) == nil {
		switch st {
		case "completed", "failed", "expired", "cancelled":
			var out *string
			return json.Unmarshal(o["output_file_id"], &out) == nil && out == nil
		}
		return false
	}
	var n *struct {
		Succeeded int64 `json:"succeeded"`
	}
	return json.Unmarshal(o["processing_status"], &st) == nil && st == "ended" &&
		json.Unmarshal(o["request_counts"], &n) == nil && n != nil && n.Succeeded == 0
}

// id is the gateway's id, with prefix, of raw, a JSON string of the host's id ("": none).
func (rw rewriter) id(raw json.RawMessage, prefix string) string {
	var up string
	if json.Unmarshal(raw, &up) != nil || up == "" {
		return ""
	}
	return Encode(prefix, rw.name, up)
}

// badAnswer is the 502 of a host's 2xx answer that is not the JSON object it should be.
func badAnswer() error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusBadGateway, Message: "the upstream answered with something other than a JSON object"}
}
