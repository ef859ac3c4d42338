package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// loader sends chat completions and times them. Safe for concurrent use.
type loader struct {
	client *http.Client
}

func newLoader() *loader {
	return &loader{client: &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        1 << 14,
		MaxIdleConnsPerHost: 1 << 14, // the memory scenario holds thousands of streams per host
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true, // neither side compresses; do not ask
	}}}
}

// close closes the idle connections, so the servers' goroutines for them end.
func (l *loader) close() { l.client.CloseIdleConnections() }

// call is one request: the server's URL and the body.
type call struct {
	url    string
	body   []byte
	stream bool
}

// chatCall builds the request of a mock script for p: the gateway is asked for the direct
// target "mock/<script>", Bifrost for "openai/<script>", the proxy passes "<script>" to the
// mock as is.
func chatCall(p *proc, script string, stream bool) call {
	model := p.model + script
	body, _ := json.Marshal(map[string]any{
		"model":    model,
		"stream":   stream,
		"messages": []map[string]string{{"role": "user", "content": "Hello, Sluice! Tell me something."}},
	})
	return call{url: p.url + "/v1/chat/completions", body: body, stream: stream}
}

// sample is the timing of one request, from its scheduled start.
type sample struct {
	total time.Duration // until the end of the body
	ttfc  time.Duration // until the first non-empty delta.content (the total if not streamed)
	err   error
}

// do sends c, timing it from sched (its scheduled time in an open loop: a late send counts
// as latency, which avoids coordinated omission). opened, if set, is called once the response
// headers are in.
func (l *loader) do(ctx context.Context, c call, sched time.Time, opened func()) sample {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.body))
	if err != nil {
		return sample{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+benchKey)
	resp, err := l.client.Do(req)
	if err != nil {
		return sample{err: err}
	}
	defer resp.Body.Close()
	if opened != nil {
		opened()
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return sample{err: fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))}
	}
	if !c.stream {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return sample{err: err}
		}
		d := time.Since(sched)
		return sample{total: d, ttfc: d}
	}
	var s sample
	done := false
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if s.ttfc == 0 && hasContent(line) {
				s.ttfc = time.Since(sched)
			}
			done = done || bytes.HasPrefix(line, []byte("data: [DONE]"))
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a long line: its head was looked at, skip the rest
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return sample{err: err}
		}
	}
	s.total = time.Since(sched)
	switch {
	case s.ttfc == 0:
		s.err = errors.New("stream without content")
	case !done:
		s.err = errors.New("stream without [DONE]")
	}
	return s
}

// hasContent reports whether an SSE line is a data line with a non-empty delta.content. Only
// lines that may carry one are decoded.
func hasContent(line []byte) bool {
	data, ok := bytes.CutPrefix(line, []byte("data: {"))
	if !ok || !bytes.Contains(data, []byte(`"content":"`)) {
		return false
	}
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(line[len("data: "):], &chunk) != nil {
		return false
	}
	for _, c := range chunk.Choices {
		if c.Delta.Content != "" {
			return true
		}
	}
	return false
}

// result is what one run measured.
type result struct {
	samples  []sample // the successful requests
	errs     int
	firstErr error
	n        int           // requests completed, successful or not
	elapsed  time.Duration // of a closed loop
	cpu      time.Duration // the server process's CPU time over the load (0: not measured)
}

// cpuPer is the server's CPU time per completed request in µs (0: not measured).
func (r *result) cpuPer() float64 {
	if r.n == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.n)
}

// perReq formats d over n requests.
func perReq(d time.Duration, n int) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(n))
}

func (r *result) add(s sample) {
	r.n++
	if s.err != nil {
		if r.errs == 0 {
			r.firstErr = s.err
		}
		r.errs++
		return
	}
	r.samples = append(r.samples, s)
}

func (r *result) merge(o result) {
	r.samples = append(r.samples, o.samples...)
	if r.errs == 0 {
		r.firstErr = o.firstErr
	}
	r.errs += o.errs
	r.n += o.n
	r.elapsed += o.elapsed
	r.cpu += o.cpu
}

// throughput is the successful requests per second of a closed loop.
func (r *result) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(len(r.samples)) / r.elapsed.Seconds()
}

// quantile returns the q-quantile (nearest rank) of the samples' total or TTFC.
func (r *result) quantile(q float64, ttfc bool) time.Duration {
	if len(r.samples) == 0 {
		return 0
	}
	ds := make([]time.Duration, len(r.samples))
	for i, s := range r.samples {
		ds[i] = s.total
		if ttfc {
			ds[i] = s.ttfc
		}
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(i, 0)]
}

// openLoop sends c at a fixed rate for dur: request i is scheduled at start + i/rate,
// whether or not earlier ones completed, each in its own goroutine.
func (l *loader) openLoop(ctx context.Context, c call, rate float64, dur time.Duration) result {
	n := int(rate * dur.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	samples := make([]sample, n)
	var wg sync.WaitGroup
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	launched := 0
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			break
		}
		launched++
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			samples[i] = l.do(rctx, c, at, nil)
		})
	}
	wg.Wait()
	var r result
	for _, s := range samples[:launched] {
		r.add(s)
	}
	return r
}

// closedLoop runs conns workers, each sending c again as soon as the last one completed, for
// dur.
func (l *loader) closedLoop(ctx context.Context, c call, conns int, dur time.Duration) result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(dur)
	parts := make([]result, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				parts[w].add(l.do(rctx, c, time.Now(), nil))
				cancel()
			}
		})
	}
	wg.Wait()
	var r result
	for _, p := range parts {
		r.merge(p)
	}
	r.elapsed = time.Since(start)
	return r
}

// hold opens n streams of c at rate per second and calls measure once all of them have their
// response headers (or failed); then it waits for every stream to end.
func (l *loader) hold(ctx context.Context, c call, n int, rate float64, measure func()) result {
	var (
		wg      sync.WaitGroup
		pending atomic.Int64
		allIn   = make(chan struct{})
		once    sync.Once
		samples = make([]sample, n)
	)
	pending.Store(int64(n))
	arrived := func() {
		if pending.Add(-1) == 0 {
			once.Do(func() { close(allIn) })
		}
	}
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			var one sync.Once
			samples[i] = l.do(rctx, c, at, func() { one.Do(arrived) })
			one.Do(arrived) // failed before its headers
		})
	}
	select {
	case <-allIn:
		measure()
	case <-ctx.Done():
	}
	wg.Wait()
	var r result
	for _, s := range samples {
		r.add(s)
	}
	return r
}
