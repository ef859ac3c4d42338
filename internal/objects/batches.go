package objects

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/reqbody"
	"github.com/sluice-gw/sluice/internal/usage"
)

// maxCreate caps the JSON body of an OpenAI batch's creation (its input is a file).
const maxCreate = 1 << 20

// isJSON reports whether r says its body is JSON.
func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// createBatch creates an OpenAI batch on the host that keeps its input file, which must
// be the caller's. The key's access to the file's model and its limits are checked, and
// its budgets against the estimate: the input file's bytes / 4 tokens at the model's input
// price (admit.Policy.Estimate).
func (s *Service) createBatch(ctx context.Context, c Call) error {
	if !isJSON(c.R) {
		return invalid("", "A batch is created with a JSON body (Content-Type: application/json).")
	}
	body, err := reqbody.Read(c.W, c.R, maxCreate, 30*time.Second)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return invalid("", "We could not parse the JSON body of your request.")
	}
	var fid string
	if json.Unmarshal(m["input_file_id"], &fid) != nil || fid == "" {
		return invalid("input_file_id", "Missing required parameter: 'input_file_id'.")
	}
	name, up, ok := Decode(FilePrefix, fid)
	if !ok {
		return fileMissing(fid)
	}
	file, err := s.records().owned(ctx, fid, c.In.Key, fileMissing(fid))
	if err != nil {
		return err
	}
	h := s.Hosts.Host(name)
	if h == nil {
		return fileMissing(fid)
	}
	holds, err := s.admit(ctx, c, []string{file.Model}, file.Target, file.Bytes, nil)
	if err != nil {
		return err
	}
	if strings.HasPrefix(name, EmulatePrefix) {
		// The hold is priced at the alias's first target, but the creation reaches none:
		// its record and account name the gateway's host, as the batch's other calls do.
		c.Rec.Target = name
	}
	m["input_file_id"], _ = json.Marshal(up)
	body, _ = json.Marshal(m)
	owner := file
	owner.Batch, owner.Holds = "", holds
	return s.create(ctx, c, h, "batches", bytes.NewReader(body), int64(len(body)),
		rewriter{s: s, name: name, prefix: BatchPrefix, owner: owner, created: true, base: baseURL(c.R)}, fileMissing(fid))
}

// create makes a batch on host h (path, its body b of n bytes) and answers its object,
// recorded as rw.owner's. The batch's budget holds (rw.owner.Holds) go with the call's
// context to a host the gateway runs (batch.Host keeps them with its batch); they are
// released when no batch was made (an error, the host's refusal).
func (s *Service) create(ctx context.Context, c Call, h llm.ObjectHost, path string, b io.Reader, n int64, rw rewriter, missing error) error {
	a, err := h.Object(usage.WithHolds(ctx, rw.owner.Holds), llm.ObjectCall{Method: http.MethodPost, Path: path,
		ContentType: "application/json", Body: b, Length: n})
	if err == nil {
		rw.t = c.T
		if err = s.relayJSON(ctx, c, a, rw); err == nil && a.Status < 300 {
			return nil
		}
	}
	c.T.ReleaseBudget(context.WithoutCancel(ctx), rw.owner.Holds)
	if err != nil {
		return upstreamError(err, missing)
	}
	return nil // the host's refusal, relayed
}

// admit admits a batch's creation or the read of its results: the key may use each of
// models (its access and its team's), a request of its rate limits, and its budgets. At
// the creation (holds nil), the estimate of bytes of input at target's price (none when
// target is unknown) is held against them until the batch's charges are in: the holds
// returned. The read of a batch's results, whose holds are holds, is within them (it
// passes while they keep some), and its charges are drawn from them when it settles.
func (s *Service) admit(ctx context.Context, c Call, models []string, target string, bytes int64, holds []usage.Hold) ([]usage.Hold, error) {
	if err := c.T.Admit(ctx, admit.Ask{Model: models[0], Embeddings: true}); err != nil { // Embeddings: no answer tokens to reserve
		return nil, err
	}
	if k := c.T.Key(); k != nil {
		for _, m := range models[1:] {
			if !k.Allows(m) {
				return nil, admit.NotAllowed(m)
			}
			if t := c.T.Team(); t != nil && !t.Allows(m) {
				return nil, admit.TeamNotAllowed(t, m)
			}
		}
	}
	c.Rec.Model, c.Rec.Target = models[0], target
	if target == "" {
		return nil, nil
	}
	_, model, _ := strings.Cut(target, "/")
	ch := &fallback.Chain{Alias: models[0], Targets: []fallback.Target{{Name: target, Model: model}}}
	if bytes == 0 { // a read
		return nil, c.T.ReserveBudget(usage.WithHolds(ctx, holds), ch, nil, 0)
	}
	return c.T.HoldBudget(ctx, ch, nil, int(min(bytes, 1<<40)), time.Now().Add(s.records().ttl))
}

// createMsgBatch creates an Anthropic message batch on the host of its requests' model,
// which must be one host for all (else 400); each request's params.model becomes the
// target's model. The body is rewritten request by request into a temporary file, never
// held whole, within the upload limit.
func (s *Service) createMsgBatch(ctx context.Context, c Call) error {
	if !isJSON(c.R) {
		return invalid("", "A message batch is created with a JSON body (Content-Type: application/json).")
	}
	limit := s.maxUpload(s.AnthropicModel)
	if c.R.ContentLength > limit {
		return tooLarge(limit)
	}
	tmp, err := os.CreateTemp("", "sluice-msgbatch-*")
	if err != nil {
		return &llm.Error{Kind: llm.Internal, Message: "cannot spool the batch", Err: err}
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var place *Place
	var models []string
	resolve := func(model string) (string, error) {
		p, err := s.Hosts.For(ctx, model, true)
		if err != nil {
			return "", err
		}
		if place == nil {
			place = &p
		} else if p.Name != place.Name {
			return "", invalid("requests", "All the requests of a batch must go to one provider: '"+models[0]+"' and '"+model+
				"' do not.")
		}
		models = append(models, model)
		if _, m, ok := strings.Cut(p.Target, "/"); ok {
			return m, nil
		}
		return model, nil
	}
	n, err := spoolRequests(c.R.Body, tmp, limit, resolve)
	if err != nil {
		return err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		return &llm.Error{Kind: llm.Internal, Message: "cannot read the spooled batch", Err: err}
	}
	holds, err := s.admit(ctx, c, models, place.Target, n, nil)
	if err != nil {
		return err
	}
	owner := s.owner(c, models[0], place.Target)
	owner.Bytes, owner.Holds = n, holds
	return s.create(ctx, c, place.Host, "messages/batches", tmp, size,
		rewriter{s: s, name: place.Name, prefix: MsgBatchPrefix, owner: owner, created: true, base: baseURL(c.R)}, nil)
}

// spoolRequests copies a message batch's body from r to w, request by request, each
// request's params.model replaced by what resolve says (its error stops the copy); it
// returns the bytes read. The body is {"requests": [...]} (other members are dropped);
// more than limit bytes is a 413, anything else malformed a 400.
func spoolRequests(r io.Reader, w io.Writer, limit int64, resolve func(model string) (string, error)) (int64, error) {
	cr := &counter{r: io.LimitReader(r, limit+1)}
	dec := json.NewDecoder(cr)
	bad := func() (int64, error) {
		if cr.n > limit {
			return cr.n, tooLarge(limit)
		}
		return cr.n, invalid("requests", "The batch is not a JSON object with an array of requests, each with a custom_id and params naming a model.")
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad()
	}
	seen, had := 0, false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return bad()
		}
		if k != "requests" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return bad()
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') || had {
			return bad()
		}
		had = true
		io.WriteString(w, `{"requests":[`)
		for dec.More() {
			var req map[string]json.RawMessage
			var params map[string]json.RawMessage
			var model, custom string
			if dec.Decode(&req) != nil || json.Unmarshal(req["params"], &params) != nil || json.Unmarshal(params["model"], &model) != nil ||
				model == "" || json.Unmarshal(req["custom_id"], &custom) != nil || custom == "" {
				return bad()
			}
			up, err := resolve(model)
			if err != nil {
				return cr.n, err
			}
			params["model"], _ = json.Marshal(up)
			req["params"], _ = json.Marshal(params)
			b, _ := json.Marshal(req)
			if seen > 0 {
				io.WriteString(w, ",")
			}
			if _, err := w.Write(b); err != nil {
				return cr.n, &llm.Error{Kind: llm.Internal, Message: "cannot spool the batch", Err: err}
			}
			seen++
		}
		if _, err := dec.Token(); err != nil {
			return bad()
		}
		io.WriteString(w, "]}")
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') || seen == 0 {
		return bad()
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad() // something after the object
	}
	return cr.n, nil
}

// counter counts what its reader read.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
