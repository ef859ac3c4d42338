package fallback

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// SampleStore shares the replicas' routing samples (redisstore.Samples): one small record
// per alias, a field per replica.
type SampleStore interface {
	// Exchange stores this replica's digest of each alias (mine: alias -> JSON), to be read
	// for ttl, and returns the other replicas' digests of those aliases written within ttl:
	// alias -> replica -> JSON.
	Exchange(ctx context.Context, replica string, mine map[string][]byte, ttl time.Duration) (map[string]map[string][]byte, error)
}

// DefaultShareEvery is how often a replica exchanges its samples with the fleet.
const DefaultShareEvery = time.Second

// Share brings the fleet's samples into a Meter and publishes its own, in the background:
// one goroutine, started by Start and ended by Close, so that no request waits on the
// store. A failed exchange keeps the last fleet digest (the store counts and logs it).
type Share struct {
	Meter   *Meter
	Store   SampleStore
	Replica string              // this replica's field, unique per process
	Aliases map[string][]string // the aliases shared, with their routed targets
	Every   time.Duration       // 0: DefaultShareEvery

	stop chan struct{}
	done sync.WaitGroup
}

// Start begins the exchanges. Not safe for concurrent use with Close.
func (s *Share) Start() {
	every := s.Every
	if every <= 0 {
		every = DefaultShareEvery
	}
	stop := make(chan struct{})
	s.stop = stop
	s.done.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), every)
				_ = s.Tick(ctx)
				cancel()
			}
		}
	})
}

// Close stops the exchanges and waits for the one in flight. Safe to call more than once.
func (s *Share) Close() error {
	if s.stop != nil {
		close(s.stop)
		s.stop = nil
		s.done.Wait()
	}
	return nil
}

// Tick makes one exchange: it publishes this replica's digests and takes in the fleet's.
// A digest is read for five exchanges.
func (s *Share) Tick(ctx context.Context) error {
	every := s.Every
	if every <= 0 {
		every = DefaultShareEvery
	}
	mine := make(map[string][]byte, len(s.Aliases))
	for alias, targets := range s.Aliases {
		// Written even when empty: the exchange reads the aliases it writes.
		b, err := json.Marshal(s.Meter.Digests(targets))
		if err != nil {
			return err
		}
		mine[alias] = b
	}
	theirs, err := s.Store.Exchange(ctx, s.Replica, mine, 5*every)
	if err != nil {
		return err
	}
	// A target of several aliases is in each one's record: counted once per replica.
	type key struct{ replica, target string }
	seen := map[key]bool{}
	fleet := map[string]Digest{}
	for _, byReplica := range theirs {
		for replica, b := range byReplica {
			var ds map[string]Digest
			if json.Unmarshal(b, &ds) != nil {
				continue
			}
			for t, d := range ds {
				if k := (key{replica, t}); !seen[k] {
					seen[k] = true
					fleet[t] = merge(fleet[t], d)
				}
			}
		}
	}
	s.Meter.SetFleet(fleet)
	return nil
}
