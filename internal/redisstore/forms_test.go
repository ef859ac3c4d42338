package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// backend is a Redis the tests' replicas share, in one of its forms: a single node
// (*redistest.Server) or the package's cluster (clustered).
type backend interface {
	Dump(t testing.TB) []string
	// Do sends one command; the reply's first line ("+OK", ":12").
	Do(args ...string) (string, error)
}

// configure points o at b.
func configure(b backend, o *redisstore.Options) {
	switch b := b.(type) {
	case *redistest.Server:
		o.URL = b.URL
	case clustered:
		o.Cluster = &redisstore.Cluster{Addrs: b.Addrs}
	}
}

// clustered is the 6-node cluster all the tests of the package share (starting one costs a
// few seconds), emptied before each test.
type clustered struct{ *redistest.Cluster }

func (c clustered) Dump(t testing.TB) []string {
	t.Helper()
	out, err := c.Cluster.Dump()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c clustered) Do(args ...string) (string, error) {
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, Protocol: 2, DisableIdentity: true})
	defer cl.Close()
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	v, err := cl.Do(context.Background(), a...).Result()
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case int64:
		return fmt.Sprintf(":%d", v), nil
	case string:
		return "+" + v, nil
	}
	return fmt.Sprint(v), nil
}

var cluster struct {
	once sync.Once
	c    *redistest.Cluster
	dir  string
	err  error
}

// sharedCluster starts the package's cluster at its first use; TestMain stops it.
func sharedCluster(t *testing.T) clustered {
	t.Helper()
	cluster.once.Do(func() {
		if cluster.dir, cluster.err = os.MkdirTemp("", "redis-cluster"); cluster.err == nil {
			cluster.c, cluster.err = redistest.NewCluster(cluster.dir)
		}
	})
	switch {
	case errors.Is(cluster.err, exec.ErrNotFound) && os.Getenv("CI") == "":
		t.Skipf("no Redis Cluster: %v", cluster.err)
	case cluster.err != nil:
		t.Fatalf("starting the cluster: %v", cluster.err)
	}
	if err := cluster.c.Flush(); err != nil {
		t.Fatal(err)
	}
	return clustered{cluster.c}
}

func stopSharedCluster() {
	if cluster.c != nil {
		cluster.c.Close()
	}
	if cluster.dir != "" {
		_ = os.RemoveAll(cluster.dir)
	}
}

// forms runs fn against a single node and against the cluster: the same rules hold on both.
func forms(t *testing.T, fn func(t *testing.T, srv backend)) {
	t.Run("node", func(t *testing.T) { fn(t, redistest.Start(t)) })
	t.Run("cluster", func(t *testing.T) { fn(t, sharedCluster(t)) })
}

// stop takes a single node down for the end of a test that checks an outage, and reports
// whether it did: a cluster's outages are a failover's (failover_test.go).
func stop(t *testing.T, srv backend) bool {
	t.Helper()
	s, ok := srv.(*redistest.Server)
	if ok {
		s.Stop(t)
	}
	return ok
}
