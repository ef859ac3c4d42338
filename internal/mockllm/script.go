package mockllm

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// script is a parsed model name: what to answer and which fault to inject.
type script struct {
	name string

	// Content.
	length     int
	say        string
	at         int // byte offset of say in the generated text; -1: len/2
	seed       uint64
	chunk      int // max bytes (or words) per delta; 0: one delta
	chunkWords bool
	n          int // choices; 0: the request's n
	think      int
	field      string // "reasoning" or "reasoning_content"
	logprobs   bool
	calls      int
	toolName   string
	then       string // "" | "text" | "echo": the answer once the last message is a tool result
	args       string
	split      int
	cuts       []int
	finish     string
	max        int  // completion tokens before the answer is cut; 0: no limit
	dims       int  // embedding dimensions; 0: the request's, else 8
	refuse     bool // content goes to delta.refusal
	echo       bool // content is the last user message
	file       string

	// Shape.
	role  bool
	usage string // "auto", "always", "never"
	end   string // "done", "nodone", "nofinish"

	// Timing.
	wait, first, delay time.Duration
	flushEnd           bool // the stream is flushed once, at its end

	// Faults.
	fail    string // "" | "error" | "event" | "ratelimit" | "stall" | "cut" | "abort" | "<status>"
	status  int
	after   int
	times   int
	retry   int
	retried bool // retry was given
	code    string
	typ     string
	msg     string
	flat    bool   // Responses error event with code and message at the top level
	quote   string // "" | "all" | "masked": the error message quotes the request's headers
}

// scriptNames lists the scripts in the order GET /v1/models reports them.
var scriptNames = []string{"echo", "text", "reason", "tools", "refuse", "empty", "replay", "embed"}

// contentKeys are the options that shape generated content; echo takes its text from the
// request, replay takes everything from its file and embed makes vectors, so none of them
// accepts them all.
var (
	contentKeys = []string{"len", "say", "at", "seed", "chunk", "n", "think", "field", "logprobs",
		"calls", "name", "args", "split", "finish", "role", "usage", "end", "max", "then"}
	commonKeys = []string{"wait", "first", "delay", "flush", "fail", "after", "times", "retry", "code", "type", "msg",
		"errshape", "quote"}
)

func allowed(name, key string) bool {
	if slices.Contains(commonKeys, key) {
		return true
	}
	switch name {
	case "replay":
		return key == "file"
	case "embed":
		return key == "dims" || key == "seed"
	case "echo":
		return slices.Contains(contentKeys, key) && key != "len" && key != "say" && key != "at" && key != "seed"
	}
	return slices.Contains(contentKeys, key)
}

// parseScript parses a model name of the form name[?key=value&key=value...] (URL query
// encoding: %XX escapes, '+' is a space).
func parseScript(model string) (*script, error) {
	name, query, _ := strings.Cut(model, "?")
	sc := &script{name: name, at: -1, seed: 1, chunk: 1, chunkWords: true, field: "reasoning_content",
		split: 7, role: true, usage: "auto", end: "done", length: -1}
	switch name {
	case "echo":
		sc.echo = true
	case "text", "empty", "tools", "refuse":
	case "reason":
		sc.think = 64
	case "replay", "embed":
	default:
		return nil, fmt.Errorf("unknown script %q (scripts: %s)", name, strings.Join(scriptNames, ", "))
	}
	if name == "tools" {
		sc.calls = 1
	}
	if name == "refuse" {
		sc.refuse = true
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("options: %v", err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic error messages
	for _, k := range keys {
		if len(vals[k]) > 1 {
			return nil, fmt.Errorf("option %s given twice", k)
		}
		if !allowed(name, k) {
			return nil, fmt.Errorf("option %q does not apply to %s", k, name)
		}
		if err := sc.set(k, vals[k][0]); err != nil {
			return nil, fmt.Errorf("option %s=%q: %v", k, vals[k][0], err)
		}
	}
	if sc.length < 0 {
		sc.length = 0
		if name == "text" || name == "reason" {
			if sc.say == "" {
				sc.length = 64
			}
		}
	}
	if sc.refuse && sc.say == "" && sc.length == 0 {
		sc.say = "I'm sorry, but I can't help with that."
	}
	if name == "replay" && sc.file == "" {
		return nil, fmt.Errorf("replay needs file=NAME")
	}
	return sc, nil
}

func (sc *script) set(k, v string) error {
	var err error
	switch k {
	case "len":
		sc.length, err = count(v, 1<<24)
	case "say":
		sc.say = v
	case "at":
		sc.at, err = count(v, 1<<24)
	case "seed":
		sc.seed, err = strconv.ParseUint(v, 10, 64)
	case "chunk":
		sc.chunkWords = strings.HasSuffix(v, "w")
		sc.chunk, err = count(strings.TrimSuffix(v, "w"), 1<<24)
	case "n":
		sc.n, err = count(v, 128)
		if err == nil && sc.n == 0 {
			err = fmt.Errorf("want 1 to 128")
		}
	case "think":
		sc.think, err = count(v, 1<<24)
	case "field":
		sc.field, err = oneOf(v, "reasoning", "reasoning_content")
	case "logprobs":
		sc.logprobs, err = strconv.ParseBool(v)
	case "calls":
		sc.calls, err = count(v, 128)
	case "name":
		sc.toolName = v
	case "then":
		sc.then, err = oneOf(v, "text", "echo")
	case "args":
		if !json.Valid([]byte(v)) {
			err = fmt.Errorf("not valid JSON")
		}
		sc.args = v
	case "split":
		return sc.setSplit(v)
	case "finish":
		sc.finish = v
	case "max":
		sc.max, err = count(v, 1<<22)
		if err == nil && sc.max == 0 {
			err = fmt.Errorf("want at least 1")
		}
	case "dims":
		sc.dims, err = count(v, maxDims)
		if err == nil && sc.dims == 0 {
			err = fmt.Errorf("want at least 1")
		}
	case "errshape":
		var shape string
		shape, err = oneOf(v, "nested", "flat")
		sc.flat = shape == "flat"
	case "quote":
		sc.quote, err = oneOf(v, "all", "masked")
	case "role":
		sc.role, err = strconv.ParseBool(v)
	case "usage":
		sc.usage, err = oneOf(v, "auto", "always", "never")
	case "end":
		sc.end, err = oneOf(v, "done", "nodone", "nofinish")
	case "wait":
		sc.wait, err = duration(v)
	case "first":
		sc.first, err = duration(v)
	case "delay":
		sc.delay, err = duration(v)
	case "flush":
		var f string
		f, err = oneOf(v, "event", "end")
		sc.flushEnd = f == "end"
	case "fail":
		return sc.setFail(v)
	case "after":
		sc.after, err = count(v, 1<<24)
	case "times":
		sc.times, err = count(v, 1<<24)
	case "retry":
		sc.retry, err = count(v, 1<<24)
		sc.retried = true
	case "code":
		sc.code = v
	case "type":
		sc.typ = v
	case "msg":
		sc.msg = v
	case "file":
		sc.file = v
	}
	return err
}

// setSplit takes a fragment size ("7") or explicit cut offsets ("1,5,20").
func (sc *script) setSplit(v string) error {
	parts := strings.Split(v, ",")
	if len(parts) == 1 {
		n, err := count(v, 1<<24)
		if err == nil && n == 0 {
			err = fmt.Errorf("want at least 1")
		}
		sc.split = n
		return err
	}
	sc.cuts = sc.cuts[:0]
	for _, p := range parts {
		n, err := count(p, 1<<24)
		if err != nil {
			return err
		}
		sc.cuts = append(sc.cuts, n)
	}
	slices.Sort(sc.cuts)
	return nil
}

func (sc *script) setFail(v string) error {
	switch v {
	case "error", "event", "ratelimit", "stall", "cut", "abort":
		sc.fail = v
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 400 || n > 599 {
		return fmt.Errorf("want error, event, ratelimit, stall, cut, abort or an HTTP status 400-599")
	}
	sc.fail, sc.status = v, n
	return nil
}

func count(v string, max int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > max {
		return 0, fmt.Errorf("want an integer from 0 to %d", max)
	}
	return n, nil
}

func duration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration like 10ms or 2s")
	}
	return d, nil
}

func oneOf(v string, choices ...string) (string, error) {
	if slices.Contains(choices, v) {
		return v, nil
	}
	return "", fmt.Errorf("want one of %s", strings.Join(choices, ", "))
}
