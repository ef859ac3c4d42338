package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/server"
)

// runLog is the runs' log in Redis as the edge sees it: a failure to reach Redis also is
// server.ErrSharedDown, so the handlers answer it without knowing redisstore. Every other
// error, and every error's text, passes unchanged.
type runLog struct{ s runs.Store }

var _ runs.Store = runLog{}

func (l runLog) Claim(ctx context.Context, m runs.Meta, owner string, lease, ttl time.Duration) error {
	return shared(l.s.Claim(ctx, m, owner, lease, ttl))
}

func (l runLog) Lookup(ctx context.Context, chat string) (*runs.Meta, error) {
	m, err := l.s.Lookup(ctx, chat)
	return m, shared(err)
}

func (l runLog) Append(ctx context.Context, w runs.Write) (runs.Verdict, error) {
	v, err := l.s.Append(ctx, w)
	return v, shared(err)
}

func (l runLog) Read(ctx context.Context, chat, run string, after int64, max int) ([]runs.Frame, error) {
	fs, err := l.s.Read(ctx, chat, run, after, max)
	return fs, shared(err)
}

func (l runLog) Wait(ctx context.Context, chat, run string, after int64, block time.Duration) ([]runs.Frame, error) {
	fs, err := l.s.Wait(ctx, chat, run, after, block)
	return fs, shared(err)
}

func (l runLog) Stop(ctx context.Context, chat, run string) error {
	return shared(l.s.Stop(ctx, chat, run))
}

func (l runLog) Reap(ctx context.Context, w runs.Write, seq int64) (bool, error) {
	ok, err := l.s.Reap(ctx, w, seq)
	return ok, shared(err)
}

func (l runLog) Close() error { return l.s.Close() }

// shared marks err as server.ErrSharedDown when it is a failure to reach Redis.
func shared(err error) error {
	if err == nil || !errors.Is(err, redisstore.ErrUnavailable) {
		return err
	}
	return sharedDown{err}
}

// sharedDown is a failure to reach Redis that is also server.ErrSharedDown: its text, its
// kind (llm.KindOf) and its chain are the store's.
type sharedDown struct{ err error }

func (e sharedDown) Error() string        { return e.err.Error() }
func (e sharedDown) Unwrap() error        { return e.err }
func (e sharedDown) Is(target error) bool { return target == server.ErrSharedDown }
