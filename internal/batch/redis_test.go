package batch_test

import (
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// Every test of the host runs on a real redis-server too, each replica with its own
// connection.
func init() {
	stores["redis"] = func(t *testing.T) func() batch.Store {
		srv := redistest.Start(t)
		return func() batch.Store {
			s, err := redisstore.New(redisstore.Options{URL: srv.URL, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.Batches(time.Hour)
		}
	}
}
