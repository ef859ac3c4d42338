package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// fastSeeds are chunk payloads for FuzzDecodeFast: the common shapes, and the edges where
// the fast path must either agree with encoding/json or give up.
var fastSeeds = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":14,"completion_tokens":30,"total_tokens":44}}`,
	`{"choices":[],"usage":null}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":3,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":5,"accepted_prediction_tokens":0}}}`,
	`{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens_details":null,"completion_tokens_details":{}}}`,
	`{"choices":[],"usage":{"prompt_tokens":1,"Prompt_Tokens":2}}`,
	`{"choices":[],"usage":{"prompt_tokens":1.5}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}`,
	`{"choices":[],"usage":{"completion_tokens_details":{"Reasoning_Tokens":4}}}`,
	`{"choices":[],"usage":{"total_tokens":null,"extra":{"a":[1,2]}}}`,
	`{"choices":null}`,
	`{"choices":[null]}`,
	`{}`,
	`[]`,
	`null`,
	`{"choices":[{"index":0,"delta":{"content":"a\nb \"q\" \\ \/ \b\f\r\t \u00e9 \ud83d\ude00 \ud800 x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"héllo 世界 😀"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff\xfe utf8\"}}]}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ctl \x01\"}}]}",
	` { "choices" : [ { "index" : 2 , "delta" : { "content" : "x" } , "finish_reason" : null } ] } `,
	"{\t\"choices\":\r\n[{\"index\":1,\"delta\":{\"reasoning\":\"r\",\"reasoning_content\":\"rc\"}}]}",
	`{"choices":[{"index":0,"delta":{"content":["a",{"text":"b"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":[{"text":"a"},{"type":"text","text":"b"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":1}}]}`,
	`{"choices":[{"index":0,"delta":{"content":true,"refusal":{}}}]}`,
	`{"choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":null}}]}`,
	`{"choices":[{"index":0,"delta":null,"logprobs":{"content":[{"token":"Foo","logprob":-0.5,"bytes":[70,111,111],"top_logprobs":[]}]}}]}`,
	`{"choices":[{"index":-1,"delta":{}}]}`,
	`{"choices":[{"index":1.0,"delta":{}}]}`,
	`{"choices":[{"index":1e2,"delta":{}}]}`,
	`{"choices":[{"index":01,"delta":{}}]}`,
	`{"choices":[{"index":-0,"delta":{}}]}`,
	`{"choices":[{"index":"1","delta":{}}]}`,
	`{"choices":[{"index":null,"delta":{}}]}`,
	`{"choices":[{"index":99999999999999999999,"delta":{}}]}`,
	`{"choices":[{"index":0,"index":1}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[],"choices":[{"index":0}]}`,
	`{"Choices":[{"Index":3,"Delta":{"Content":"x"}}]}`,
	`{"CHOICES":[{"index":0,"delta":{"CONTENT":"x","reasoningContent":"y","finishReason":"stop"}}]}`,
	`{"choices":[{"index":0,"delta":{"\u0063ontent":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop","extra":{"a":[1,2,{"b":null}],"c":"\u1234"},"more":[true,false,-1.5e-3]}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}],"x_groq":{"id":"req_1"},"obfuscation":"abc"}`,
	`{"error":{"message":"boom","type":"server_error"}}`,
	`{"error":null,"choices":[]}`,
	`{"error":"flat","choices":[]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]}{}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]} x`,
	`{"choices":[{"index":0,"delta":{"content":"x"}},]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},}]}`,
	`{"choices":[{"index":0 "delta":{}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\u12"}}]}`,
	`{"a":tru,"choices":[]}`,
	`{"a":[1,],"choices":[]}`,
	`{"a":-,"choices":[]}`,
	`{"a":1.,"choices":[]}`,
	`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"choices":[]}`,
	`{"ключ":1,"choices":[{"index":0,"delta":{"content":"x"}}]}`,
}

// sseData returns the data of every event in an .sse file, one line each.
func sseData(t testing.TB, path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			out = append(out, bytes.Clone(bytes.TrimSpace(d)))
		}
	}
	return out
}

// checkFastAgrees decodes data with the fast path, into a fresh chunk and into one dirty
// from a previous chunk as the stream does, and fails if it accepted data that the full
// decode rejects or decodes differently. As a first chunk, with the head, it must agree
// with encoding/json on the head too, and take the fast path exactly when it does without.
func checkFastAgrees(t *testing.T, data []byte) bool {
	t.Helper()
	var fast chunk
	if !decodeFast(data, &fast, nil, nil) {
		return false
	}
	var first chunk
	var fh, uh head
	if decodeFast(data, &first, &fh, nil) {
		if err := json.Unmarshal(data, &uh); err != nil {
			t.Fatalf("fast path accepted %q with its head; json.Unmarshal: %v", data, err)
		}
		if fh != uh || !reflect.DeepEqual(first, fast) {
			t.Fatalf("%q as a first chunk:\nfast %+v %+v\nfull %+v %+v", data, fh, first, uh, fast)
		}
	} else if !bytes.Contains(bytes.ToLower(data), []byte(`"id"`)) && !bytes.Contains(bytes.ToLower(data), []byte(`"model"`)) &&
		!bytes.Contains(data, []byte(`\u`)) {
		t.Fatalf("fast path refused %q with its head but took it without, and it names no head member", data)
	}
	var full chunk
	if err := newDecoder().decode(data, &full); err != nil {
		t.Fatalf("fast path accepted %q; full decode: %v", data, err)
	}
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("%q:\nfast %+v\nfull %+v", data, fast, full)
	}
	dirty := chunk{Choices: make([]wireChoice, 3, 8), Error: wire.Raw("x"), Usage: &wire.Usage{TotalTokens: 1}}
	dirty.Choices[0] = wireChoice{Index: 7, Delta: wireDelta{Content: "old", ToolCalls: []wire.ToolCallDelta{{ID: "t"}}}, Logprobs: wire.Raw("1"), FinishReason: "stop"}
	dirty.reset()
	if !decodeFast(data, &dirty, nil, nil) {
		t.Fatalf("fast path accepted %q into a fresh chunk but not a reused one", data)
	}
	if len(full.Choices) == 0 {
		full.Choices, dirty.Choices = nil, nil // empty either way; capacity differs
	}
	if !reflect.DeepEqual(dirty, full) {
		t.Fatalf("%q into a reused chunk:\nfast %+v\nfull %+v", data, dirty, full)
	}
	// Twice with a prefix, as a stream decodes its chunks: the second resumes after the
	// opening the first learned.
	var pre prefix
	for i := range 2 {
		var again chunk
		if !decodeFast(data, &again, nil, &pre) {
			t.Fatalf("%q with a prefix (time %d): refused", data, i)
		}
		if len(again.Choices) == 0 {
			again.Choices = nil
		}
		if !reflect.DeepEqual(again, full) {
			t.Fatalf("%q with a prefix (time %d):\nfast %+v\nfull %+v", data, i, again, full)
		}
	}
	return true
}

// checkPrefixAgrees decodes b after a, as chunks of one stream: with the prefix a taught,
// decodeFast must decide b exactly as it does alone.
func checkPrefixAgrees(t *testing.T, a, b []byte) {
	t.Helper()
	var pre prefix
	var ca, alone, after chunk
	decodeFast(a, &ca, nil, &pre)
	okAlone := decodeFast(b, &alone, nil, nil)
	okAfter := decodeFast(b, &after, nil, &pre)
	if okAlone != okAfter {
		t.Fatalf("after %q, %q: fast %v, alone %v", a, b, okAfter, okAlone)
	}
	if okAlone && !reflect.DeepEqual(alone, after) {
		t.Fatalf("after %q, %q:\nafter %+v\nalone %+v", a, b, after, alone)
	}
}

// FuzzDecodeFastPrefix: a chunk decodes the same after any other, whatever opening the
// first taught the prefix.
func FuzzDecodeFastPrefix(f *testing.F) {
	const open = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1727346168,"model":"gpt-4o","system_fingerprint":"fp_1",`
	for _, p := range [][2]string{
		{open + `"choices":[{"index":0,"delta":{"content":"a"}}]}`, open + `"choices":[{"index":0,"delta":{"content":"b"}}]}`},
		{open + `"choices":[]}`, open + `"choices":[],"usage":{"prompt_tokens":1}}`},
		{`{"created":17,"choices":[]}`, `{"created":175,"choices":[]}`},  // a number that runs on
		{`{"created":17,"choices":[]}`, `{"created":17,}`},               // a trailing comma
		{`{"created":17,"choices":[]}`, `{"created":17,"Choices":[{}]}`}, // folds to a known name
		{`{"created":17,"choices":[]}`, `{"created":17,"created":1,"choices":[]}`},
		{`{"a":1,"b":2,"choices":[]}`, `{"a":1,"b":2,"choices":[],"choices":[]}`}, // a duplicate
		{`{"a":1 ,"choices":[]}`, `{"a":1 ,"choices":[]}`},                        // no comma at the end
		{`{"a":1,"choices":[]}`, `{"a":1,"choices":[]} x`},
		{`{"id":"x","choices":[]}`, `{"id":"x","choices":null}`},
	} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		checkPrefixAgrees(t, a, b)
	})
}

// TestDecodeFastPrefixTaken checks that a stream's chunks do resume after the opening
// (not merely agree), and that a changed opening is learned anew.
func TestDecodeFastPrefixTaken(t *testing.T) {
	const open = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1727346168,"model":"gpt-4o",`
	var pre prefix
	var c chunk
	if !decodeFast([]byte(open+`"choices":[]}`), &c, nil, &pre) || string(pre.b[:pre.n]) != open {
		t.Fatalf("learned %q, want %q", pre.b[:pre.n], open)
	}
	if !decodeFast([]byte(open+`"choices":[{"index":0,"delta":{"content":"x"}}]}`), &c, nil, &pre) || c.Choices[0].Delta.Content != "x" {
		t.Fatalf("a chunk with the learned opening: %+v", c)
	}
	// A resumed scan does not read the opening again: planted, an invalid one that the
	// chunk repeats is taken, which only the resume would do.
	pre.n = copy(pre.b[:], `{"a":tru,`)
	if !decodeFast([]byte(`{"a":tru,"choices":[]}`), &c, nil, &pre) {
		t.Fatal("the resume was not taken")
	}
	next := `{"id":"chatcmpl-2","choices":[]}`
	if !decodeFast([]byte(next), &c, nil, &pre) || string(pre.b[:pre.n]) != `{"id":"chatcmpl-2",` {
		t.Fatalf("after a new opening the prefix is %q", pre.b[:pre.n])
	}
}

// TestDecodeFastHead checks the head of a first chunk against encoding/json, on the fast
// path and where the fast path must refuse it.
func TestDecodeFastHead(t *testing.T) {
	for _, c := range []struct {
		data string
		fast bool
	}{
		{`{"id":"chatcmpl-1","model":"gpt-x","choices":[]}`, true},
		{`{"model":"m","id":null,"choices":[]}`, true},
		{`{"id":"a\u00e9","choices":[]}`, true},
		{`{"id":7,"choices":[]}`, false},                 // a type error: encoding/json's partial result
		{`{"id":"a","id":"b","choices":[]}`, false},      // the last one wins there
		{`{"ID":"a","choices":[]}`, false},               // case-folded
		{`{"id":"a","model":["x"],"choices":[]}`, false}, // not a string
	} {
		var ch chunk
		var h head
		got := decodeFast([]byte(c.data), &ch, &h, nil)
		if got != c.fast {
			t.Errorf("%s: got fast %v, want %v", c.data, got, c.fast)
		}
		checkFastAgrees(t, []byte(c.data))
		if got {
			var want head
			json.Unmarshal([]byte(c.data), &want)
			if h != want {
				t.Errorf("%s: got head %+v, want %+v", c.data, h, want)
			}
		}
	}
}

// FuzzDecodeFast: whenever the fast path decodes a chunk, encoding/json decodes the same
// bytes without error into the same chunk.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, p := range files {
		for _, d := range sseData(f, p) {
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastAgrees(t, data)
	})
}

// TestDecodeFastCovers checks that the common shapes do take the fast path, so that it
// does not quietly fall back to the full decode for everything.
func TestDecodeFastCovers(t *testing.T) {
	taken := 0
	for _, s := range fastSeeds {
		if checkFastAgrees(t, []byte(s)) {
			taken++
		}
	}
	if taken < 20 {
		t.Errorf("fast path taken for %d seeds, want at least 20", taken)
	}
	for i, line := range bytes.Split(recordedLike(3), []byte("\n\n")) {
		d, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || string(d) == "[DONE]" {
			continue
		}
		if !checkFastAgrees(t, d) {
			t.Errorf("chunk %d of the benchmark stream did not take the fast path: %s", i, d)
		}
	}
	for _, p := range []string{"openai-chat-text.sse", "openai-chat-logprobs.sse", "openai-chat-n3-choices.sse"} {
		for _, d := range sseData(t, filepath.Join("testdata", p)) {
			if string(d) == "[DONE]" {
				continue
			}
			if !checkFastAgrees(t, d) {
				t.Errorf("%s: chunk did not take the fast path: %s", p, d)
			}
		}
	}
}

// TestDecodeFastCarvesTexts checks that texts cut from shared blocks keep their bytes while
// later chunks fill the block and start new ones, that an answer read at once shares
// blocks, and that escaped text still decodes through encoding/json.
func TestDecodeFastCarvesTexts(t *testing.T) {
	const open = `{"id":"c","object":"chat.completion.chunk","model":"m",`
	var pre prefix
	var got, want []string
	for i := range 300 {
		pre.ahead = 4096 // an answer read whole: blocks of 512 bytes
		text := strings.Repeat(string(rune('a'+i%26)), 1+i%40)
		if i%50 == 7 {
			text = "esc\\\"aped" // JSON escape: not carved
		}
		var c chunk
		data := open + `"choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}`
		if !decodeFast([]byte(data), &c, nil, &pre) {
			t.Fatalf("chunk %d refused", i)
		}
		var plain string
		if err := json.Unmarshal([]byte(`"`+text+`"`), &plain); err != nil {
			t.Fatal(err)
		}
		got, want = append(got, string(c.Choices[0].Delta.Content)), append(want, plain)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("text %d: got %q, want %q", i, got[i], want[i])
		}
	}
	chunkAllocs := func(pre *prefix) float64 {
		return testing.AllocsPerRun(100, func() {
			var c chunk
			decodeFast([]byte(open+`"choices":[{"index":0,"delta":{"content":"xyz"}}]}`), &c, nil, pre)
		})
	}
	if with, without := chunkAllocs(&pre), chunkAllocs(nil); with >= without {
		t.Errorf("%.1f allocations a chunk with its text in a shared block, %.1f without: want fewer", with, without)
	}
}
