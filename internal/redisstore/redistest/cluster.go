package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Node is one redis-server on a loopback TCP port (a cluster's or a sentinel set's), which
// Kill takes down with SIGKILL, as a crash does.
type Node struct {
	Addr string // 127.0.0.1:port
	Dir  string
	args []string
	cmd  *exec.Cmd
}

// freePort is a loopback TCP port nobody listens on now (the server binds it a moment later:
// a race the caller retries, never met in practice on a test machine).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs the node and waits until it answers PING.
func (n *Node) start() error {
	n.cmd = exec.Command(ServerBin(), n.args...)
	logf, err := os.OpenFile(filepath.Join(n.Dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", ServerBin(), err)
	}
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(n.Dir, "redis.log"))
			return fmt.Errorf("redis-server on %s did not answer within 10s; its log:\n%s", n.Addr, out)
		}
	}
}

// Kill ends the node with SIGKILL and waits for it; a node already down is left alone.
func (n *Node) Kill() {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		_ = n.cmd.Wait()
		n.cmd = nil
	}
}

// Alive reports whether the node runs (not killed).
func (n *Node) Alive() bool { return n.cmd != nil }

// client is a plain client of this node alone.
func (n *Node) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
}

// newNode makes a node in a directory of its own under dir, with ports of its own: its
// data port, and for a cluster node the bus port (cluster-port, Redis 7).
func newNode(dir, name string, extra ...string) (*Node, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	n := &Node{Addr: "127.0.0.1:" + strconv.Itoa(port), Dir: filepath.Join(dir, name)}
	if err := os.MkdirAll(n.Dir, 0o700); err != nil {
		return nil, err
	}
	n.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", n.Dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", "--repl-diskless-sync-delay", "0"}, extra...)
	return n, nil
}

// Cluster is a Redis Cluster on loopback: 3 masters, each with a replica, failing over
// within about two seconds of a master's death (cluster-node-timeout 1000). Close kills
// every node.
type Cluster struct {
	Nodes []*Node
	// Addrs are the nodes' addresses, as redis.cluster.addrs takes them.
	Addrs []string
	dir   string
}

// NewCluster starts six nodes in dir, joins them with redis-cli --cluster create
// --cluster-replicas 1, and waits until every node reports cluster_state:ok. Without
// ServerBin or CLIBin it fails with exec.ErrNotFound in its chain.
func NewCluster(dir string) (*Cluster, error) {
	for _, bin := range []string{ServerBin(), CLIBin()} {
		if _, err := exec.LookPath(bin); err != nil {
			// A path (SLUICE_REDIS_SERVER=/usr/...) that is not there fails with fs.ErrNotExist.
			return nil, fmt.Errorf("%w: %w", exec.ErrNotFound, err)
		}
	}
	c := &Cluster{dir: dir}
	for i := range 6 {
		bus, err := freePort()
		if err != nil {
			c.Close()
			return nil, err
		}
		n, err := newNode(dir, fmt.Sprintf("node%d", i), "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000",
			"--cluster-port", strconv.Itoa(bus), "--cluster-replica-validity-factor", "0",
			"--cluster-allow-replica-migration", "no")
		if err == nil {
			err = n.start()
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes, c.Addrs = append(c.Nodes, n), append(c.Addrs, n.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	out, err := exec.Command(CLIBin(), append(args, "--cluster-replicas", "1", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.WaitOK(30 * time.Second); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close kills every node.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Kill()
	}
}

// WaitOK waits until every node alive reports cluster_state:ok and sees no master marked
// failed without a replacement: after a failover, the cluster serves every slot again.
func (c *Cluster) WaitOK(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := c.ok()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster is not ok after %v: %w", within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) ok() error {
	ctx := context.Background()
	masters := map[string]bool{}
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		cl := n.client()
		info, err := cl.ClusterInfo(ctx).Result()
		var slots []redis.ClusterSlot
		if err == nil {
			slots, err = cl.ClusterSlots(ctx).Result()
		}
		cl.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Addr, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state is not ok", n.Addr)
		}
		if err := synced(n); err != nil {
			return err
		}
		covered := 0
		for _, s := range slots {
			covered += s.End - s.Start + 1
			masters[s.Nodes[0].Addr] = true
		}
		if covered != 16384 {
			return fmt.Errorf("%s: %d slots covered", n.Addr, covered)
		}
	}
	for addr := range masters {
		if n := c.node(addr); n == nil || !n.Alive() {
			return fmt.Errorf("a node still names %s, which is down, as a master", addr)
		}
	}
	return nil
}

// synced fails for a replica whose link to its master is not up (still loading the
// master's data): killing the master then would lose what it has not received.
func synced(n *Node) error {
	cl := n.client()
	defer cl.Close()
	info, err := cl.Info(context.Background(), "replication").Result()
	if err != nil {
		return fmt.Errorf("%s: %w", n.Addr, err)
	}
	if strings.Contains(info, "role:slave") && !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("%s: a replica not in sync with its master yet", n.Addr)
	}
	return nil
}

func (c *Cluster) node(addr string) *Node {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// MasterOf is the node that serves key's slot now.
func (c *Cluster) MasterOf(key string) (*Node, error) {
	ctx := context.Background()
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		cl := n.client()
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		var slots []redis.ClusterSlot
		if err == nil {
			slots, err = cl.ClusterSlots(ctx).Result()
		}
		cl.Close()
		if err != nil {
			continue
		}
		for _, s := range slots {
			if int(slot) >= s.Start && int(slot) <= s.End {
				if m := c.node(s.Nodes[0].Addr); m != nil {
					return m, nil
				}
			}
		}
	}
	return nil, errors.New("no node alive knows the slot's master")
}

// Masters are the nodes serving slots now, as the first node alive to answer sees them.
func (c *Cluster) Masters() []*Node {
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		cl := n.client()
		slots, err := cl.ClusterSlots(context.Background()).Result()
		cl.Close()
		if err != nil {
			continue
		}
		var out []*Node
		for _, s := range slots {
			if m := c.node(s.Nodes[0].Addr); m != nil && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// Flush empties every master (the replicas follow), between tests on a shared cluster.
func (c *Cluster) Flush() error {
	for _, n := range c.Masters() {
		cl := n.client()
		err := cl.FlushAll(context.Background()).Err()
		cl.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Dump is Server.Dump over every master.
func (c *Cluster) Dump() ([]string, error) {
	var out []string
	for _, n := range c.Masters() {
		cl := n.client()
		kv, err := dump(cl)
		cl.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, kv...)
	}
	return out, nil
}

// Reshard moves n slots from the master of from to the master of to with redis-cli
// --cluster reshard, as an operator does, while clients keep running.
func (c *Cluster) Reshard(from, to *Node, slots int) error {
	fid, err := from.id()
	if err != nil {
		return err
	}
	tid, err := to.id()
	if err != nil {
		return err
	}
	out, err := exec.Command(CLIBin(), "--cluster", "reshard", from.Addr, "--cluster-from", fid,
		"--cluster-to", tid, "--cluster-slots", strconv.Itoa(slots), "--cluster-yes").CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster reshard: %w\n%s", err, out)
	}
	return nil
}

// Restart starts a node Kill took down, with its cluster configuration (nodes.conf): a
// master killed comes back as a replica of the one promoted in its place.
func (n *Node) Restart() error { return n.start() }

// id is the node's cluster id (CLUSTER MYID).
func (n *Node) id() (string, error) {
	cl := n.client()
	defer cl.Close()
	return cl.Do(context.Background(), "CLUSTER", "MYID").Text()
}

// HalfMoved begins to move the slot of key from its master to the master to, as redis-cli
// --cluster reshard does, and stops there: the slot is MIGRATING on its master and
// IMPORTING on to, its keys not moved yet, so a command with several keys of the slot, some
// of which exist, is answered TRYAGAIN (the state a resharding leaves a slot in while it
// moves its keys). finish moves the keys and gives the slot to to, on every master.
func (c *Cluster) HalfMoved(key string, to *Node) (finish func() error, err error) {
	ctx := context.Background()
	from, err := c.MasterOf(key)
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("%s serves the slot of %s already", to.Addr, key)
	}
	fid, err := from.id()
	if err != nil {
		return nil, err
	}
	tid, err := to.id()
	if err != nil {
		return nil, err
	}
	fc, tc := from.client(), to.client()
	defer fc.Close()
	defer tc.Close()
	slot, err := fc.ClusterKeySlot(ctx, key).Result()
	if err == nil {
		err = tc.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", fid).Err()
	}
	if err == nil {
		err = fc.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", tid).Err()
	}
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SETSLOT %d: %w", slot, err)
	}
	host, port, _ := net.SplitHostPort(to.Addr)
	masters := append([]*Node{to, from}, c.Masters()...)
	return func() error {
		fc, tc := from.client(), to.client()
		defer fc.Close()
		defer tc.Close()
		for {
			keys, err := fc.ClusterGetKeysInSlot(ctx, int(slot), 100).Result()
			if err != nil || len(keys) == 0 {
				if err != nil {
					return fmt.Errorf("CLUSTER GETKEYSINSLOT %d: %w", slot, err)
				}
				break
			}
			args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
			for _, k := range keys {
				args = append(args, k)
			}
			if err := fc.Do(ctx, args...).Err(); err != nil {
				return fmt.Errorf("MIGRATE: %w", err)
			}
		}
		for _, m := range masters { // to first, then from, as redis-cli does
			cl := m.client()
			err := cl.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", tid).Err()
			cl.Close()
			if err != nil {
				return fmt.Errorf("CLUSTER SETSLOT %d NODE on %s: %w", slot, m.Addr, err)
			}
		}
		return nil
	}, nil
}
