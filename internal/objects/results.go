package objects

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// content streams a file's content from its host. The output file of a batch is read
// line by line and each result's usage accounted (account): the read is admitted as a
// request of the batch's model, so a key whose budget is spent gets a 429 until its period
// ends, and the cost reaches its budgets.
func (s *Service) content(ctx context.Context, c Call) error {
	rec, h, up, err := s.owned(ctx, c, FilePrefix, fileMissing)
	if err != nil {
		return err
	}
	if rec.Batch != "" {
		if _, err := s.admit(ctx, c, []string{rec.Model}, rec.Target, 0, rec.Holds); err != nil {
			return err
		}
	}
	a, err := h.Object(ctx, llm.ObjectCall{Method: http.MethodGet, Path: "files/" + up + "/content"})
	if err != nil {
		return upstreamError(err, fileMissing(c.In.Param("id")))
	}
	name, _, _ := Decode(FilePrefix, c.In.Param("id"))
	if rec.Batch == "" {
		defer a.Body.Close()
		c.W.Header().Set("Content-Type", a.ContentType)
		c.W.WriteHeader(a.Status)
		_, _ = io.Copy(c.W, a.Body)
		return nil
	}
	s.account(ctx, c, a, rec, name, false)
	return nil
}

// results streams an Anthropic message batch's results, each result's usage accounted.
func (s *Service) results(ctx context.Context, c Call) error {
	rec, h, up, err := s.owned(ctx, c, MsgBatchPrefix, msgBatchMissing)
	if err != nil {
		return err
	}
	if _, err := s.admit(ctx, c, []string{rec.Model}, rec.Target, 0, rec.Holds); err != nil {
		return err
	}
	a, err := h.Object(ctx, llm.ObjectCall{Method: http.MethodGet, Path: "messages/batches/" + up + "/results"})
	if err != nil {
		return upstreamError(err, msgBatchMissing(c.In.Param("id")))
	}
	rec.Batch = c.In.Param("id")
	name, _, _ := Decode(MsgBatchPrefix, rec.Batch)
	s.account(ctx, c, a, rec, name, true)
	return nil
}

// account streams a's results (JSONL, OpenAI's output file or Anthropic's results) to the
// client line by line and charges each result's usage to the request, at the batch price
// of the host name serving the result's model: once per result (its batch and
// custom_id), whoever reads it and however often (records.settle). Results read whole
// are the batch's last charges: its budget holds go (what the request charged still
// reaches the budgets when it settles).
func (s *Service) account(ctx context.Context, c Call, a *llm.ObjectAnswer, rec Record, name string, anthropic bool) {
	defer a.Body.Close()
	c.W.Header().Set("Content-Type", a.ContentType)
	c.W.WriteHeader(a.Status)
	rs := s.records()
	br := bufio.NewReaderSize(a.Body, 64<<10)
	var total llm.Usage
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := c.W.Write(line); werr != nil {
				return
			}
			if r, ok := lineUsage(line, anthropic); ok && rs.settle(context.WithoutCancel(ctx), rec.Batch, r.custom) {
				c.T.ChargeBatch(name+"/"+r.model, r.model, r.usage)
				total = total.Plus(r.usage)
			}
		}
		if err != nil {
			if err == io.EOF && a.Status < 300 {
				c.T.ReleaseBudget(context.WithoutCancel(ctx), rec.Holds)
			}
			break
		}
	}
	if f, ok := c.W.(http.Flusher); ok {
		f.Flush()
	}
	if total != (llm.Usage{}) {
		c.Rec.Usage = &telemetry.Usage{Prompt: total.PromptTokens, Completion: total.CompletionTokens, Total: total.TotalTokens,
			Cached: total.CachedTokens, CacheWrite: total.CacheWriteTokens}
	}
}

// result is one result line's: its custom_id, model and usage.
type result struct {
	custom, model string
	usage         llm.Usage
}

// lineUsage reads a result line: OpenAI's {"custom_id", "response": {"body": {"model",
// "usage"}}} (Chat Completions' or Responses' usage, Embeddings' prompt tokens) or
// Anthropic's {"custom_id", "result": {"type": "succeeded", "message": {"model",
// "usage"}}}; false when it carries none (a failed request, an error line).
func lineUsage(line []byte, anthropic bool) (result, bool) {
	var l struct {
		Custom   string `json:"custom_id"`
		Response *struct {
			Body *struct {
				Model string          `json:"model"`
				Usage json.RawMessage `json:"usage"`
			} `json:"body"`
		} `json:"response"`
		Result *struct {
			Type    string `json:"type"`
			Message *struct {
				Model string          `json:"model"`
				Usage json.RawMessage `json:"usage"`
			} `json:"message"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &l) != nil || l.Custom == "" {
		return result{}, false
	}
	var model string
	var raw json.RawMessage
	switch {
	case anthropic && l.Result != nil && l.Result.Type == "succeeded" && l.Result.Message != nil:
		model, raw = l.Result.Message.Model, l.Result.Message.Usage
	case !anthropic && l.Response != nil && l.Response.Body != nil:
		model, raw = l.Response.Body.Model, l.Response.Body.Usage
	default:
		return result{}, false
	}
	var u struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
		In         int `json:"input_tokens"`
		Out        int `json:"output_tokens"`
		CacheRead  int `json:"cache_read_input_tokens"`
		CacheWrite int `json:"cache_creation_input_tokens"`
		Details    struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		InDetails struct {
			Cached int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	}
	if model == "" || json.Unmarshal(raw, &u) != nil {
		return result{}, false
	}
	r := result{custom: l.Custom, model: model}
	if anthropic { // Anthropic's input_tokens leave out the cache's: the gateway's prompt holds them (DESIGN §2)
		r.usage = llm.Usage{PromptTokens: u.In + u.CacheRead + u.CacheWrite, CompletionTokens: u.Out, CachedTokens: u.CacheRead,
			CacheWriteTokens: u.CacheWrite}
	} else {
		r.usage = llm.Usage{PromptTokens: u.Prompt + u.In, CompletionTokens: u.Completion + u.Out, CachedTokens: u.Details.Cached + u.InDetails.Cached}
	}
	r.usage.TotalTokens = r.usage.PromptTokens + r.usage.CompletionTokens
	return r, r.usage.TotalTokens > 0
}
