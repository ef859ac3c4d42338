package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
)

// sseEvent is one event of a stream: its event: name (empty if none) and its data.
type sseEvent struct {
	name, data string
}

// parseSSE cuts a body into events the way an SSE decoder does (event: and data: lines, with
// or without the space, \n or \r\n), and returns the bytes after the last blank line.
func parseSSE(t *testing.T, body []byte) (events []sseEvent, tail string) {
	t.Helper()
	s := strings.ReplaceAll(string(body), "\r\n", "\n")
	for {
		i := strings.Index(s, "\n\n")
		if i < 0 {
			return events, s
		}
		var ev sseEvent
		for _, line := range strings.Split(s[:i], "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch k {
			case "event":
				ev.name = v
			case "data":
				ev.data = v
			default:
				t.Fatalf("line %q: want event: or data:", line)
			}
		}
		events = append(events, ev)
		s = s[i+2:]
	}
}

// fixtureEvents parses a file of testdata.
func fixtureEvents(t *testing.T, file string) []sseEvent {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := parseSSE(t, b)
	return events
}

// postJSON posts body to base+path with headers (name, value, ...) and returns the response.
func postJSON(ctx context.Context, t *testing.T, c *http.Client, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return b
}

// jsonBody encodes v, which cannot fail for the maps the tests build.
func jsonBody(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// obj decodes an event's data as a JSON object.
func obj(t *testing.T, data string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("data %q: %v", data, err)
	}
	return m
}

// str is the string field k of m, or "".
func str(m map[string]json.RawMessage, k string) string {
	var s string
	json.Unmarshal(m[k], &s)
	return s
}

// shape is an event's type and, for the nested objects that carry one (a content block, a
// delta, an output item), their type: "content_block_delta/text_delta". Consecutive equal
// shapes collapse, so streams of different lengths compare by structure.
func shapes(t *testing.T, events []sseEvent, skip ...string) []string {
	t.Helper()
	var out []string
	for _, ev := range events {
		m := obj(t, ev.data)
		s := str(m, "type")
		if ev.name != "" && ev.name != s {
			t.Errorf("event: %s carries type %q", ev.name, s)
		}
		for _, k := range []string{"content_block", "delta", "item"} {
			if sub, ok := m[k]; ok && bytes.HasPrefix(sub, []byte("{")) {
				if typ := str(obj(t, string(sub)), "type"); typ != "" {
					s += "/" + typ
				}
			}
		}
		if slices.Contains(skip, s) || len(out) > 0 && out[len(out)-1] == s {
			continue
		}
		out = append(out, s)
	}
	return out
}

// keySets maps each event shape (and "shape.field" for its nested objects) to the key sets
// seen for it.
func keySets(t *testing.T, events []sseEvent) map[string][]string {
	t.Helper()
	sets := map[string][]string{}
	add := func(path string, m map[string]json.RawMessage) {
		var keys []string
		for k := range m {
			if k != "obfuscation" { // OpenAI's padding against length side channels
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		sets[path] = append(sets[path], strings.Join(keys, ","))
	}
	for _, ev := range events {
		m := obj(t, ev.data)
		path := str(m, "type")
		add(path, m)
		for _, k := range []string{"message", "content_block", "delta", "usage", "item", "part", "error", "response"} {
			if raw, ok := m[k]; ok && bytes.HasPrefix(raw, []byte("{")) {
				sub := obj(t, string(raw))
				if k == "error" || k == "usage" || k == "response" { // their type is no structure
					add(path+"."+k, sub)
				} else {
					add(path+"."+k+"/"+str(sub, "type"), sub)
				}
			}
		}
	}
	return sets
}

// checkKeys checks every key set of got is one the fixtures show for the same path, or for
// nested objects a subset of one (recordings carry fields a mock need not send, like
// service_tier).
func checkKeys(t *testing.T, got, fixtures map[string][]string) {
	t.Helper()
	for path, sets := range got {
		for _, set := range sets {
			ok := false
			for _, f := range fixtures[path] {
				if strings.Contains(path, ".") {
					ok = ok || subset(set, f)
				} else {
					ok = ok || set == f
				}
			}
			if !ok {
				t.Errorf("%s: keys %s, want one of the fixtures' %q", path, set, fixtures[path])
			}
		}
	}
}

func subset(a, b string) bool {
	bs := strings.Split(b, ",")
	for _, k := range strings.Split(a, ",") {
		if k != "" && !slices.Contains(bs, k) {
			return false
		}
	}
	return true
}

// names are the events' event: names.
func names(events []sseEvent) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.name)
	}
	return out
}
