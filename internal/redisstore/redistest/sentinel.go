package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SentinelMaster is the name the sentinels of a SentinelSet monitor.
const SentinelMaster = "mymaster"

// SentinelSet is a master, its replica and three sentinels on loopback (quorum 2), which
// promote the replica about two seconds after the master's death (down-after-milliseconds
// 1000). Close kills them all.
type SentinelSet struct {
	Master, Replica *Node
	Sentinels       []*Node
	// Addrs are the sentinels' addresses, as redis.sentinel.addrs takes them.
	Addrs []string
}

// NewSentinelSet starts the set in dir and waits until every sentinel knows the replica.
func NewSentinelSet(dir string) (*SentinelSet, error) {
	s := &SentinelSet{}
	var err error
	if s.Master, err = newNode(dir, "master"); err == nil {
		err = s.Master.start()
	}
	if err == nil {
		if s.Replica, err = newNode(dir, "replica", "--replicaof", "127.0.0.1", port(s.Master)); err == nil {
			err = s.Replica.start()
		}
	}
	for i := 0; err == nil && i < 3; i++ {
		var n *Node
		if n, err = newNode(dir, fmt.Sprintf("sentinel%d", i)); err != nil {
			break
		}
		// A sentinel rewrites its file: it must be its own, writable, and the first argument.
		conf := filepath.Join(n.Dir, "sentinel.conf")
		body := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]s 2\nsentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 10000\nsentinel parallel-syncs %[1]s 1\n", SentinelMaster, port(s.Master))
		if err = os.WriteFile(conf, []byte(body), 0o600); err != nil {
			break
		}
		n.args = append([]string{conf, "--sentinel"}, n.args[:6]...) // port, bind, dir
		if err = n.start(); err == nil {
			s.Sentinels, s.Addrs = append(s.Sentinels, n), append(s.Addrs, n.Addr)
		}
	}
	if err == nil {
		err = s.wait(func() error {
			if err := synced(s.Replica); err != nil {
				return err
			}
			for _, n := range s.Sentinels {
				c := n.client()
				reps, err := c.Do(context.Background(), "SENTINEL", "REPLICAS", SentinelMaster).Slice()
				c.Close()
				if err != nil || len(reps) == 0 {
					return fmt.Errorf("sentinel %s does not know the replica yet (%v)", n.Addr, err)
				}
			}
			return nil
		})
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func port(n *Node) string { return n.Addr[strings.LastIndex(n.Addr, ":")+1:] }

func (s *SentinelSet) wait(cond func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after 30s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitPromoted waits until every sentinel alive names the replica as the master.
func (s *SentinelSet) WaitPromoted() error {
	return s.wait(func() error {
		for _, n := range s.Sentinels {
			c := n.client()
			addr, err := c.Do(context.Background(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster).StringSlice()
			c.Close()
			if err != nil || len(addr) != 2 || addr[0]+":"+addr[1] != s.Replica.Addr {
				return fmt.Errorf("sentinel %s names %v (%v), not the replica %s", n.Addr, addr, err, s.Replica.Addr)
			}
		}
		c := s.Replica.client()
		defer c.Close()
		role, err := c.Do(context.Background(), "ROLE").Slice()
		if err != nil || len(role) == 0 || role[0] != "master" {
			return fmt.Errorf("the replica's role: %v (%v)", role, err)
		}
		return nil
	})
}

// Failover is an operator's switch-over: SENTINEL FAILOVER promotes the replica while the
// master is alive. It waits until every sentinel names the replica, the former master
// replicates from it in sync, and every sentinel knows it as a replica it could promote;
// then Master and Replica swap, so that Master is the master again.
func (s *SentinelSet) Failover() error {
	c := s.Sentinels[0].client()
	err := c.Do(context.Background(), "SENTINEL", "FAILOVER", SentinelMaster).Err()
	c.Close()
	if err != nil {
		return fmt.Errorf("SENTINEL FAILOVER: %w", err)
	}
	if err := s.WaitPromoted(); err != nil {
		return err
	}
	s.Master, s.Replica = s.Replica, s.Master
	return s.wait(func() error {
		c := s.Replica.client()
		info, err := c.Info(context.Background(), "replication").Result()
		c.Close()
		if err != nil || !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("the former master %s does not replicate from the new one yet (%v)", s.Replica.Addr, err)
		}
		for _, n := range s.Sentinels {
			if err := knows(n, s.Replica.Addr); err != nil {
				return err
			}
		}
		return nil
	})
}

// knows fails unless sentinel n lists addr as a replica in good standing (neither down nor
// disconnected): one it would promote.
func knows(n *Node, addr string) error {
	c := n.client()
	defer c.Close()
	reps, err := c.Do(context.Background(), "SENTINEL", "REPLICAS", SentinelMaster).Slice()
	if err != nil {
		return fmt.Errorf("sentinel %s: %w", n.Addr, err)
	}
	for _, r := range reps {
		kv, _ := r.([]any)
		f := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			k, _ := kv[i].(string)
			v, _ := kv[i+1].(string)
			f[k] = v
		}
		if f["name"] == addr && !strings.Contains(f["flags"], "down") && !strings.Contains(f["flags"], "disconnected") {
			return nil
		}
	}
	return fmt.Errorf("sentinel %s does not list %s as a replica in good standing: %v", n.Addr, addr, reps)
}

// Close kills every process of the set.
func (s *SentinelSet) Close() {
	for _, n := range append([]*Node{s.Master, s.Replica}, s.Sentinels...) {
		if n != nil {
			n.Kill()
		}
	}
}
