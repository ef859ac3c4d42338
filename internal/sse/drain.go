package sse

import (
	"io"
	"time"
)

// Drain reads what is left of a body after its answer's last event, then closes it. net/http
// only returns a connection to its pool when the body was read to EOF before Close; the
// closing chunk of a chunked body usually arrives a moment after the last event, so closing
// at once would cost a new connection (dial, and TLS upstream) on the next call. A body that
// has more than limit bytes left, or does not end within wait, is closed as it is: the
// connection is lost, the answer is not held up.
func Drain(body io.ReadCloser, limit int64, wait time.Duration) {
	t := time.AfterFunc(wait, func() { body.Close() })
	io.CopyN(io.Discard, body, limit) // any error ends the drain; the answer is already whole
	t.Stop()
	body.Close()
}
