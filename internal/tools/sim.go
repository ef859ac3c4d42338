package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// simKind is a tool that runs in process with no network (tools: {name: {sim: ...}}): each
// call reports steps progress events interval apart ("Step 3 of 10", done and total), then
// answers "Finished 10 of 10 steps." (a JSON string), or fails when fail is set. The
// arguments are not read. For demos (the embedded default's demo_progress) and tests.
type simKind struct {
	steps    int
	interval time.Duration
	fail     bool
}

func (k *simKind) start(ctx context.Context, _ json.RawMessage, _ string, _ func()) (call, error) {
	return &simCall{ctx: ctx, k: k}, nil
}

// simCall keeps the context of its call: it is the call's lifetime, as a request's is.
type simCall struct {
	ctx  context.Context
	k    *simKind
	i    int
	done bool
}

func (c *simCall) Streaming() bool { return true }
func (c *simCall) Close() error    { return nil }

func (c *simCall) Recv() (event, error) {
	if c.done {
		return event{}, io.EOF
	}
	if c.i < c.k.steps {
		t := time.NewTimer(c.k.interval)
		defer t.Stop()
		select {
		case <-c.ctx.Done():
			c.done = true
			return event{}, c.ctx.Err()
		case <-t.C:
		}
		c.i++
		done, total := float64(c.i), float64(c.k.steps)
		return event{progress: &Progress{Done: &done, Total: &total, Message: fmt.Sprintf("Step %d of %d", c.i, c.k.steps)}}, nil
	}
	c.done = true
	if c.k.fail {
		return event{}, failed(fmt.Sprintf("The simulated tool failed after %d steps (sim.fail: true).", c.k.steps))
	}
	out, _ := json.Marshal(fmt.Sprintf("Finished %d of %d steps.", c.k.steps, c.k.steps))
	return event{output: out}, nil
}
