package objects

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// upstreamKey is the gateway's credential the fake upstream quotes back in its errors.
const upstreamKey = "sk-upstream-SECRET-0123456789"

// fakeAPI is an upstream speaking OpenAI's files and batches and Anthropic's message
// batches, in memory: a batch completes at once, its output file holds a result line with
// usage per input line.
type fakeAPI struct {
	mu      sync.Mutex
	n       int
	files   map[string]string // id: content
	meta    map[string]string // id: the file object's JSON
	batches map[string]string
	models  []string // the models of the message batches' requests, as received
	usage   string   // the usage of each result line (OpenAI's); "": 1000 tokens in, 1000 out
}

func newFake(t *testing.T) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{files: map[string]string{}, meta: map[string]string{}, batches: map[string]string{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) missing(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(404)
	io.WriteString(w, `{"error":{"message":"No such object (request made with key `+upstreamKey+`)","type":"invalid_request_error"}}`)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := strings.TrimPrefix(r.URL.Path, "/v1/")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "POST" && p == "files":
		mr, err := r.MultipartReader()
		if err != nil {
			w.WriteHeader(400)
			return
		}
		var content, purpose, name string
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"message":"cut"}}`)
				return
			}
			b, _ := io.ReadAll(part)
			switch part.FormName() {
			case "file":
				content, name = string(b), part.FileName()
			case "purpose":
				purpose = string(b)
			}
		}
		f.n++
		id := fmt.Sprintf("file-up%d", f.n)
		f.files[id] = content
		f.meta[id] = fmt.Sprintf(`{"id":%q,"object":"file","bytes":%d,"filename":%q,"purpose":%q}`, id, len(content), name, purpose)
		io.WriteString(w, f.meta[id])
	case r.Method == "GET" && p == "files":
		var data []string
		for _, m := range f.meta {
			data = append(data, m)
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"has_more":false}`, strings.Join(data, ","))
	case strings.HasPrefix(p, "files/"):
		id, rest, _ := strings.Cut(strings.TrimPrefix(p, "files/"), "/")
		content, ok := f.files[id]
		switch {
		case !ok:
			f.missing(w)
		case rest == "content":
			w.Header().Set("Content-Type", "application/jsonl")
			io.WriteString(w, content)
		case r.Method == "DELETE":
			delete(f.files, id)
			delete(f.meta, id)
			fmt.Fprintf(w, `{"id":%q,"object":"file","deleted":true}`, id)
		default:
			io.WriteString(w, f.meta[id])
		}
	case r.Method == "POST" && p == "batches":
		var b struct {
			Input string `json:"input_file_id"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		in, ok := f.files[b.Input]
		if !ok {
			f.missing(w)
			return
		}
		f.n++
		id, out := fmt.Sprintf("batch_u%d", f.n), fmt.Sprintf("file-out%d", f.n)
		var lines strings.Builder
		u := f.usage
		if u == "" {
			u = `{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}`
		}
		for i := range strings.Count(in, "\n") {
			fmt.Fprintf(&lines, `{"id":"batch_req_%d","custom_id":"r%d","response":{"status_code":200,"body":{"model":"gpt-4o-mini","usage":%s}},"error":null}`+"\n", i, i, u)
		}
		f.files[out] = lines.String()
		f.meta[out] = fmt.Sprintf(`{"id":%q,"object":"file","purpose":"batch_output"}`, out)
		f.batches[id] = fmt.Sprintf(`{"id":%q,"object":"batch","status":"completed","input_file_id":%q,"output_file_id":%q,"error_file_id":null}`, id, b.Input, out)
		io.WriteString(w, f.batches[id])
	case strings.HasPrefix(p, "batches/"):
		id, rest, _ := strings.Cut(strings.TrimPrefix(p, "batches/"), "/")
		b, ok := f.batches[id]
		switch {
		case !ok:
			f.missing(w)
		case rest == "cancel": // cancelled at once, before any result
			var m map[string]any
			json.Unmarshal([]byte(b), &m)
			m["status"], m["output_file_id"] = "cancelled", nil
			nb, _ := json.Marshal(m)
			f.batches[id] = string(nb)
			w.Write(nb)
		default:
			io.WriteString(w, b)
		}
	case r.Method == "POST" && p == "messages/batches":
		var b struct {
			Requests []struct {
				Params struct {
					Model string `json:"model"`
				} `json:"params"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		for _, q := range b.Requests {
			f.models = append(f.models, q.Params.Model)
		}
		io.WriteString(w, `{"id":"msgbatch_u1","type":"message_batch","processing_status":"ended","results_url":"https://api.anthropic.com/v1/messages/batches/msgbatch_u1/results"}`)
	case r.Method == "GET" && p == "messages/batches":
		io.WriteString(w, `{"data":[{"id":"msgbatch_u1","type":"message_batch","results_url":null}],"has_more":false,"first_id":"msgbatch_u1","last_id":"msgbatch_u1"}`)
	case p == "messages/batches/msgbatch_u1/results":
		w.Header().Set("Content-Type", "application/binary")
		io.WriteString(w, `{"custom_id":"a","result":{"type":"succeeded","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":1000,"output_tokens":1000}}}}`+"\n"+
			`{"custom_id":"b","result":{"type":"errored","error":{"type":"invalid_request"}}}`+"\n")
	case strings.HasPrefix(p, "messages/batches/msgbatch_u1"):
		io.WriteString(w, `{"id":"msgbatch_u1","type":"message_batch","processing_status":"ended","results_url":"https://api.anthropic.com/v1/messages/batches/msgbatch_u1/results"}`)
	default:
		f.missing(w)
	}
}
