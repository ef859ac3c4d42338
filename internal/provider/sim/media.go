package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The passed endpoints a simulated provider answers itself (issue 48), so that `make run`
// serves them with no key:
//
//   - audio/transcriptions: "Simulated transcription of FILE (N bytes)." in the
//     response_format asked: json (with usage in seconds), text, verbose_json (duration, one
//     segment), srt or vtt. The duration is the file's when it is a WAV, else one second.
//   - audio/speech: a WAV (8 kHz, 16-bit mono) of a 440 Hz tone, 50 ms per word of the
//     input (at most 5 s), whatever response_format asked, in pieces of 1 KB.
//   - images/edits: n (default 1) copies of the 8x8 PNG, as images/generations answers.
func (p chat) Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error) {
	return passed(ctx, p.Client, path, model, req)
}

func (p responses) Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error) {
	return passed(ctx, p.Responses, path, model, req)
}

type passer interface {
	Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error)
}

func passed(ctx context.Context, up passer, path, model string, req *llm.Request) (llm.Stream, error) {
	fields := map[string]string{}
	for _, f := range req.Extra {
		var s string
		if json.Unmarshal(f.Value, &s) != nil {
			s = string(f.Value)
		}
		fields[f.Name] = s
	}
	switch path {
	case "audio/transcriptions":
		if len(req.Files) == 0 {
			return nil, &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: "sim: no file"}
		}
		ct, body := transcribe(req.Files[0], fields["response_format"])
		return &pieces{ct: ct, b: body, size: len(body)}, nil
	case "audio/speech":
		return &pieces{ct: "audio/wav", b: speech(fields["input"]), size: 1 << 10}, nil
	case "images/edits":
		var n *int
		if v, ok := fields["n"]; ok {
			var i int
			fmt.Sscan(v, &i)
			n = &i
		}
		body, _ := json.Marshal(map[string]any{"prompt": fields["prompt"], "n": n, "response_format": fields["response_format"]})
		out, err := generate(body)
		if err != nil {
			return nil, &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: "sim: " + err.Error()}
		}
		b, _ := json.Marshal(out)
		return &pieces{ct: "application/json", b: b, size: len(b)}, nil
	}
	return up.Pass(ctx, path, model, req)
}

// transcribe is the simulated transcription of f in format.
func transcribe(f llm.FilePart, format string) (string, []byte) {
	text := fmt.Sprintf("Simulated transcription of %s (%d bytes).", f.Filename, f.Size)
	d := wavSeconds(f.Open())
	stamp := func(sep string) string {
		ms := int(d * 1000)
		return fmt.Sprintf("00:00:%02d%s%03d", ms/1000%60, sep, ms%1000)
	}
	switch format {
	case "text":
		return "text/plain; charset=utf-8", []byte(text + "\n")
	case "srt":
		return "text/plain; charset=utf-8", fmt.Appendf(nil, "1\n00:00:00,000 --> %s\n%s\n\n", stamp(","), text)
	case "vtt":
		return "text/plain; charset=utf-8", fmt.Appendf(nil, "WEBVTT\n\n00:00:00.000 --> %s\n%s\n\n", stamp("."), text)
	case "verbose_json":
		b, _ := json.Marshal(map[string]any{"task": "transcribe", "language": "english", "duration": d, "text": text,
			"segments": []map[string]any{{"id": 0, "seek": 0, "start": 0, "end": d, "text": text}},
			"usage":    map[string]any{"type": "duration", "seconds": math.Ceil(d)}})
		return "application/json", b
	}
	b, _ := json.Marshal(map[string]any{"text": text, "usage": map[string]any{"type": "duration", "seconds": math.Ceil(d)}})
	return "application/json", b
}

// wavSeconds is the duration of a WAV file (its data over its byte rate), else 1.
func wavSeconds(r io.Reader) float64 {
	var h [44]byte
	if _, err := io.ReadFull(r, h[:]); err != nil || string(h[:4]) != "RIFF" || string(h[8:12]) != "WAVE" || string(h[36:40]) != "data" {
		return 1
	}
	rate := binary.LittleEndian.Uint32(h[28:32])
	if rate == 0 {
		return 1
	}
	return float64(binary.LittleEndian.Uint32(h[40:44])) / float64(rate)
}

// speech is the simulated speech of input: a WAV of a tone, 50 ms per word.
func speech(input string) []byte {
	const rate = 8000
	words := len(bytes.Fields([]byte(input)))
	n := min(max(words, 1)*rate/20, 5*rate)
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))        // PCM
	le(uint16(1))        // mono
	le(uint32(rate))     // sample rate
	le(uint32(2 * rate)) // byte rate
	le(uint16(2))        // block align
	le(uint16(16))       // bits per sample
	b.WriteString("data")
	le(uint32(2 * n))
	for i := range n {
		le(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate)))
	}
	return b.Bytes()
}

// pieces is an answer passed in pieces of size bytes: EvData events, the first with ct.
type pieces struct {
	ct   string
	b    []byte
	size int
	sent bool
}

func (s *pieces) Recv() (llm.Event, error) {
	if s.sent && len(s.b) == 0 {
		return llm.Event{}, io.EOF
	}
	ev := llm.Event{Type: llm.EvData}
	if !s.sent {
		ev.Field, s.sent = s.ct, true
	}
	n := min(s.size, len(s.b))
	ev.Raw, s.b = s.b[:n:n], s.b[n:]
	return ev, nil
}

func (s *pieces) Close() error { return nil }
