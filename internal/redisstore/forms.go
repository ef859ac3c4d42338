package redisstore

import (
	"crypto/tls"
	"errors"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Cluster is a Redis Cluster (redis.cluster): go-redis's ClusterClient, which learns the
// slots from any of Addrs and follows MOVED and ASK by itself.
type Cluster struct {
	Addrs              []string
	Username, Password string
	TLS                bool
}

// Sentinel is a master watched by Sentinel (redis.sentinel): go-redis's FailoverClient,
// which asks the sentinels for the master and follows a promotion.
type Sentinel struct {
	Master string
	Addrs  []string
	// Password is the data nodes'; SentinelPassword the sentinels' own.
	Password, SentinelPassword string
}

// form is which of the three a Store talks to.
type form int

const (
	formNode form = iota
	formCluster
	formSentinel
)

// dialer checks o's form and returns it with a constructor of clients on its servers: the
// Store's (pool 0, go-redis's default size) and the blocking reads' own (a large pool).
func dialer(o Options) (form, func(pool int) redis.UniversalClient, error) {
	n := 0
	for _, set := range []bool{o.URL != "", o.Cluster != nil, o.Sentinel != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return 0, nil, errors.New("redis: set exactly one of url, cluster and sentinel")
	}
	u := &redis.UniversalOptions{}
	f := formNode
	switch {
	case o.Cluster != nil:
		if len(o.Cluster.Addrs) == 0 {
			return 0, nil, errors.New("redis.cluster.addrs: want at least one host:port")
		}
		f = formCluster
		u.Addrs, u.Username, u.Password = o.Cluster.Addrs, o.Cluster.Username, o.Cluster.Password
		if o.Cluster.TLS {
			u.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	case o.Sentinel != nil:
		if o.Sentinel.Master == "" || len(o.Sentinel.Addrs) == 0 {
			return 0, nil, errors.New("redis.sentinel: want master and at least one of addrs")
		}
		f = formSentinel
		u.MasterName, u.Addrs = o.Sentinel.Master, o.Sentinel.Addrs
		u.Password, u.SentinelPassword = o.Sentinel.Password, o.Sentinel.SentinelPassword
	}
	var node *redis.Options
	if f == formNode {
		var err error
		if node, err = redis.ParseURL(o.URL); err != nil {
			// Not err itself: it may quote the URL, password included.
			return 0, nil, errors.New("redis.url: not a valid redis:// or unix:// URL")
		}
	}
	d := o.Timeout
	dial := func(pool int) redis.UniversalClient {
		// The timeout, not retries, bounds a call: one dial per attempt and one retry (a
		// pooled connection broken by a restart or a failover).
		switch f {
		case formCluster:
			c := u.Cluster()
			c.DialTimeout, c.ReadTimeout, c.WriteTimeout, c.PoolTimeout = d, d, d, d
			c.ContextTimeoutEnabled, c.DialerRetries, c.MaxRetries, c.Protocol, c.DisableIdentity = true, 1, 1, 2, true
			c.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
			c.PoolSize, c.MaxIdleConns = pool, poolIdle(pool)
			return redis.NewClusterClient(c)
		case formSentinel:
			c := u.Failover()
			c.DialTimeout, c.ReadTimeout, c.WriteTimeout, c.PoolTimeout = d, d, d, d
			c.ContextTimeoutEnabled, c.DialerRetries, c.MaxRetries, c.Protocol, c.DisableIdentity = true, 1, 1, 2, true
			c.PoolSize, c.MaxIdleConns = pool, poolIdle(pool)
			return redis.NewFailoverClient(c)
		}
		c := *node
		c.DialTimeout, c.ReadTimeout, c.WriteTimeout, c.PoolTimeout = d, d, d, d
		c.ContextTimeoutEnabled, c.DialerRetries, c.MaxRetries, c.Protocol, c.DisableIdentity = true, 1, 1, 2, true
		c.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		c.PoolSize, c.MaxIdleConns = pool, poolIdle(pool)
		return redis.NewClient(&c)
	}
	return f, dial, nil
}

// poolIdle is how many idle connections a pool of size pool keeps: go-redis's default for
// the Store's (0), a few for the blocking reads', which open one per read in flight.
func poolIdle(pool int) int {
	if pool == 0 {
		return 0
	}
	return 16
}
