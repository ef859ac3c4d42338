package runs

import (
	"errors"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Public is err, an answer of the Manager's Start, Open or Stop, as the client is told it: the
// manager's refusals as invalid requests with their status, the store's failure as a 503.
func Public(err error) error {
	switch {
	case errors.Is(err, ErrBusy):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: "chat_busy", Type: "invalid_request_error",
			Message: "This chat has a run in progress that another API key started."}
	case errors.Is(err, ErrNotFound):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusNotFound, Code: "run_not_found", Type: "invalid_request_error",
			Message: "No run of this chat belongs to this API key."}
	case errors.Is(err, ErrTrimmed):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusGone, Code: "run_log_trimmed", Type: "invalid_request_error",
			Message: "The run's frames after Last-Event-ID are no longer kept (the run is longer than its log's length cap); start the chat's next message instead."}
	case llm.KindOf(err) == llm.Unavailable: // the store's failure to reach Redis
		return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable", Type: "server_error",
			Message: "The gateway cannot reach its shared state (Redis), where runs are kept. Retry shortly."}
	}
	return err
}

// ReadEnd is the kind of a reader's end after its connection began (Reader.Next's error):
// a connection let go (ErrBehind, ErrTrimmed: the client resumes) is Canceled, the run is
// fine; a store that failed is Unavailable; the run's end (io.EOF) is none.
func ReadEnd(err error) llm.Kind {
	if errors.Is(err, ErrBehind) || errors.Is(err, ErrTrimmed) {
		return llm.Canceled
	}
	if llm.KindOf(err) == llm.Unavailable {
		return llm.Unavailable
	}
	return llm.KindNone
}
