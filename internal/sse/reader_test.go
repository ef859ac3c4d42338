package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// collect decodes everything in r into a transcript: one line per event, then the final
// error. Data is copied, as Event.Data is only valid until the next Next.
func collect(r io.Reader, max int) string {
	var b strings.Builder
	d := NewReader(r, max)
	for {
		ev, err := d.Next()
		if err != nil {
			fmt.Fprintf(&b, "err %v\n", err)
			return b.String()
		}
		fmt.Fprintf(&b, "event type=%q id=%q data=%q\n", ev.Type, ev.ID, ev.Data)
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", "err EOF\n"},
		{"one event", "data: hello\n\n", "event type=\"\" id=\"\" data=\"hello\"\nerr EOF\n"},
		{"no space after colon", "data:hello\n\n", "event type=\"\" id=\"\" data=\"hello\"\nerr EOF\n"},
		{"only one space removed", "data:  two\n\n", "event type=\"\" id=\"\" data=\" two\"\nerr EOF\n"},
		{"multi-line data", "data: a\ndata: b\ndata\n\n", "event type=\"\" id=\"\" data=\"a\\nb\\n\"\nerr EOF\n"},
		{"empty data dispatches", "data:\n\n", "event type=\"\" id=\"\" data=\"\"\nerr EOF\n"},
		{"CRLF", "event: x\r\ndata: a\r\n\r\n", "event type=\"x\" id=\"\" data=\"a\"\nerr EOF\n"},
		{"CR", "data: a\rdata: b\r\r", "event type=\"\" id=\"\" data=\"a\\nb\"\nerr EOF\n"},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", "event type=\"\" id=\"\" data=\"a\\nb\\nc\"\nerr EOF\n"},
		{"comments ignored", ": ping\n\n:\ndata: x\n: mid\n\n", "event type=\"\" id=\"\" data=\"x\"\nerr EOF\n"},
		{"event type resets", "event: error\ndata: 1\n\ndata: 2\n\n",
			"event type=\"error\" id=\"\" data=\"1\"\nevent type=\"\" id=\"\" data=\"2\"\nerr EOF\n"},
		{"type without data is not dispatched", "event: x\n\ndata: y\n\n", "event type=\"\" id=\"\" data=\"y\"\nerr EOF\n"},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			"event type=\"\" id=\"7\" data=\"a\"\nevent type=\"\" id=\"7\" data=\"b\"\nevent type=\"\" id=\"\" data=\"c\"\nerr EOF\n"},
		{"id with NUL ignored", "id: 1\x002\ndata: a\n\n", "event type=\"\" id=\"\" data=\"a\"\nerr EOF\n"},
		{"unknown fields and retry ignored", "retry: 10\nfoo: bar\ndata: a\n\n", "event type=\"\" id=\"\" data=\"a\"\nerr EOF\n"},
		{"BOM dropped", "\xEF\xBB\xBFdata: a\n\n", "event type=\"\" id=\"\" data=\"a\"\nerr EOF\n"},
		{"second BOM kept", "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", "err EOF\n"},
		{"trailing blank lines", "data: a\n\n\n\n", "event type=\"\" id=\"\" data=\"a\"\nerr EOF\n"},
		// Truncation: the point of the package.
		{"cut inside data line", "data: a\n\ndata: {\"x\":", "event type=\"\" id=\"\" data=\"a\"\nerr sse: stream ended inside an event\n"},
		{"cut before blank line", "data: a\n\ndata: b\n", "event type=\"\" id=\"\" data=\"a\"\nerr sse: stream ended inside an event\n"},
		{"cut after CR of a CRLF pair", "data: a\r", "err sse: stream ended inside an event\n"},
		{"cut after event field", "event: x\n", "err sse: stream ended inside an event\n"},
		{"cut inside field name", "data: a\n\nda", "event type=\"\" id=\"\" data=\"a\"\nerr sse: stream ended inside an event\n"},
		{"partial comment is clean", "data: a\n\n: keep-al", "event type=\"\" id=\"\" data=\"a\"\nerr EOF\n"},
		{"comment line then EOF is clean", "data: a\n\n: ping\n", "event type=\"\" id=\"\" data=\"a\"\nerr EOF\n"},
		{"line too large", "data: " + strings.Repeat("x", 100) + "\n\n", "err sse: event too large\n"},
		{"event too large", strings.Repeat("data: xxxxxxxxxx\n", 10) + "\n", "err sse: event too large\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"one byte", iotest.OneByteReader(strings.NewReader(tt.in))},
				{"data with EOF", iotest.DataErrReader(strings.NewReader(tt.in))},
			} {
				if got := collect(rd.r, 64); got != tt.want {
					t.Errorf("%s: got\n%s\nwant\n%s", rd.name, got, tt.want)
				}
			}
			if got, want := collect(strings.NewReader(tt.in), 64), reference(tt.in, 64); got != want {
				t.Errorf("reference: got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("got %q, %v, want \"a\", nil", ev.Data, err)
	}
	for range 2 { // sticky
		if _, err := r.Next(); !errors.Is(err, boom) {
			t.Fatalf("got %v, want %v", err, boom)
		}
	}
}

func TestReaderLongLineGrows(t *testing.T) {
	long := strings.Repeat("y", 100_000)
	got := collect(iotest.HalfReader(strings.NewReader("data: "+long+"\n\n")), 0)
	if want := fmt.Sprintf("event type=\"\" id=\"\" data=%q\nerr EOF\n", long); got != want {
		t.Errorf("got %d bytes of transcript, want %d", len(got), len(want))
	}
}

// reference is a direct transcription of the WHATWG algorithm over the whole input, written
// for clarity rather than speed; the fuzz target checks Reader against it.
func reference(in string, max int) string {
	var b strings.Builder
	in = strings.TrimPrefix(in, "\xEF\xBB\xBF")
	var data strings.Builder
	hasData, pending := false, false
	typ, id := "", ""
	for {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			if len(in) > max {
				b.WriteString("err sse: event too large\n")
			} else if pending || in != "" && in[0] != ':' {
				b.WriteString("err sse: stream ended inside an event\n")
			} else {
				b.WriteString("err EOF\n")
			}
			return b.String()
		}
		line := in[:i]
		if len(line) > max {
			b.WriteString("err sse: event too large\n")
			return b.String()
		}
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
		if line == "" {
			if hasData {
				fmt.Fprintf(&b, "event type=%q id=%q data=%q\n", typ, id, data.String())
			}
			data.Reset()
			hasData, pending, typ = false, false, ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			if data.Len()+len(value)+1 > max {
				b.WriteString("err sse: event too large\n")
				return b.String()
			}
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData, pending = true, true
		case "event":
			typ, pending = value, true
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
				pending = true
			}
		}
	}
}

// chunkReader returns src in pieces whose sizes come from sizes, cycling.
type chunkReader struct {
	src   []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.src) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%17 + 1
		c.i++
	}
	n = min(n, len(p), len(c.src))
	copy(p, c.src[:n])
	c.src = c.src[n:]
	return n, nil
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\n"), []byte{3, 1})
	f.Add([]byte("event: error\r\ndata: x\r\n\r\ndata: [DONE]\n\n"), []byte{0})
	f.Add([]byte("\xEF\xBB\xBFid: 1\rdata: a\rdata\r\r: c\ndata: cut"), []byte{5, 2, 9})
	f.Add([]byte(": ping\n\ndata:\n\nretry: 5\nevent: x\n"), []byte{})
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		const max = 256
		whole := collect(strings.NewReader(string(in)), max)
		if want := reference(string(in), max); whole != want {
			t.Fatalf("whole: got\n%s\nwant (reference)\n%s", whole, want)
		}
		split := collect(&chunkReader{src: in, sizes: sizes}, max)
		if split != whole {
			t.Fatalf("split: got\n%s\nwant (whole)\n%s", split, whole)
		}
	})
}

// countingReader counts the reads of its source.
type countingReader struct {
	src   io.Reader
	reads int
}

func (c *countingReader) Read(b []byte) (int, error) {
	c.reads++
	return c.src.Read(b)
}

// BeforeRead runs before every read of the source, and only then: events already read are
// returned without it.
func TestReaderBeforeRead(t *testing.T) {
	src := &countingReader{src: iotest.OneByteReader(strings.NewReader("data: a\n\ndata: b\n\n"))}
	r := NewReader(src, 0)
	hooks := 0
	r.BeforeRead(func() {
		hooks++
		if hooks != src.reads+1 {
			t.Errorf("hook %d ran after %d reads, want before each", hooks, src.reads)
		}
	})
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if hooks != src.reads || hooks < 18 {
		t.Errorf("got %d hooks for %d reads of a one-byte source", hooks, src.reads)
	}
	whole := &countingReader{src: strings.NewReader("data: a\n\ndata: b\n\ndata: c\n\n")}
	r, hooks = NewReader(whole, 0), 0
	r.BeforeRead(func() { hooks++ })
	for range 3 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if hooks != 1 {
		t.Errorf("three events in one read ran the hook %d times, want 1", hooks)
	}
}

// TestRelease checks that a released Reader reads no more, keeps the error that ended it,
// and that Readers reusing released buffers, dirty with longer events, decode their own
// streams exactly.
func TestRelease(t *testing.T) {
	r := NewReader(strings.NewReader("data: "+strings.Repeat("x", 5000)+"\n\ndata: more\n\n"), 0)
	if ev, err := r.Next(); err != nil || len(ev.Data) != 5000 {
		t.Fatalf("got %d bytes, %v, want 5000 bytes", len(ev.Data), err)
	}
	r.Release()
	if _, err := r.Next(); err != ErrReleased {
		t.Errorf("after Release: got %v, want ErrReleased", err)
	}
	r.Release() // a second Release does nothing

	ended := NewReader(strings.NewReader("data: a"), 0)
	if _, err := ended.Next(); err != ErrCut {
		t.Fatalf("got %v, want ErrCut", err)
	}
	ended.Release()
	if _, err := ended.Next(); err != ErrCut {
		t.Errorf("after Release: got %v, want the sticky ErrCut", err)
	}

	for i := range 50 {
		want := fmt.Sprintf("e%d", i)
		r := NewReader(strings.NewReader("event: t\ndata: "+want+"\ndata: z\n\n"), 0)
		ev, err := r.Next()
		if err != nil || ev.Type != "t" || string(ev.Data) != want+"\nz" {
			t.Fatalf("reader %d: got %q %q, %v, want t %q", i, ev.Type, ev.Data, err, want+"\nz")
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("reader %d: got %v, want io.EOF", i, err)
		}
		r.Release()
	}
}

// eventReader returns one event per read, as a held stream's upstream sends them, and
// records whether the Reader it feeds held a line buffer during each read.
type eventReader struct {
	events []string
	r      *Reader
	held   []bool // r.buf != nil during each read
	sizes  []int
}

func (e *eventReader) Read(b []byte) (int, error) {
	e.held, e.sizes = append(e.held, e.r.buf != nil), append(e.sizes, len(b))
	if len(e.events) == 0 {
		return 0, io.EOF
	}
	n := copy(b, e.events[0])
	e.events[0] = e.events[0][n:]
	if e.events[0] == "" {
		e.events = e.events[1:]
	}
	return n, nil
}

// A Reader waiting for the next event with nothing buffered holds no line buffer (issue
// 51), and events longer than what it reads while waiting still decode whole.
func TestReaderWaitsWithoutLineBuffer(t *testing.T) {
	long := strings.Repeat("y", 3*waitBuf)
	src := &eventReader{events: []string{"data: a\n\n", "data: " + long + "\n\n", "id: 2\ndata: b\n\n"}}
	r := NewReader(src, 0)
	src.r = r
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		got = append(got, ev.ID+":"+string(ev.Data))
	}
	if want := []string{":a", ":" + long, "2:b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	waits := 0
	for i, held := range src.held {
		if !held {
			waits++
			if src.sizes[i] != waitBuf {
				t.Errorf("read %d: a waiting read of %d bytes, want %d", i, src.sizes[i], waitBuf)
			}
		}
	}
	if waits != 4 { // before each of the three events, and before the end
		t.Errorf("%d of %d reads waited without the line buffer, want 4", waits, len(src.held))
	}
	r.Release()
}
