package runs

import (
	"fmt"
	"io"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestPublic(t *testing.T) {
	down := &llm.Error{Kind: llm.Unavailable, Message: "dial tcp 127.0.0.1:6379: connection refused"}
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("start: %w", ErrBusy), 409, "chat_busy"},
		{ErrNotFound, 404, "run_not_found"},
		{ErrTrimmed, 410, "run_log_trimmed"},
		{down, 503, "redis_unavailable"},
	} {
		got := Public(tc.err)
		le, ok := got.(*llm.Error)
		if !ok || llm.HTTPStatus(got) != tc.status || le.Code != tc.code {
			t.Errorf("Public(%v) = %v (%d), want %d %s", tc.err, got, llm.HTTPStatus(got), tc.status, tc.code)
		}
		if ok && le.Message == down.Message {
			t.Errorf("Public(%v) passes the store's own message on", tc.err)
		}
	}
	if other := io.ErrUnexpectedEOF; Public(other) != other {
		t.Error("Public changed an error it does not know")
	}
	for err, want := range map[error]llm.Kind{ErrBehind: llm.Canceled, ErrTrimmed: llm.Canceled, down: llm.Unavailable, io.EOF: llm.KindNone} {
		if got := ReadEnd(err); got != want {
			t.Errorf("ReadEnd(%v) = %v, want %v", err, got, want)
		}
	}
}
