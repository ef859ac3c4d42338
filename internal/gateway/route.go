package gateway

import (
	"os"
	"strconv"

	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/usage"
)

// routing is what routing learns of targets (issue 49): one Meter for every chat chain, so a
// target's attempts in flight and its latency are counted whichever alias calls it; with
// Redis, a Share exchanges the replica's samples with the fleet's every second.
type routing struct {
	meter *fallback.Meter
	share *fallback.Share // nil: no Redis, the samples are this replica's
}

// newRouting makes the meter; the share starts once the chains are known (start).
func newRouting() *routing { return &routing{meter: &fallback.Meter{}} }

// route gives ch the meter, which every chain feeds (adaptive health needs no route), and
// its targets' prices for route: cost (buildChain set the routes).
func (rt *routing) route(ch *fallback.Chain, prices *usage.Prices) {
	ch.Load = rt.meter
	for i := range ch.Elements {
		el := &ch.Elements[i]
		for j := range el.Targets {
			t := &el.Targets[j]
			if p, ok := prices.Lookup(t.Name, t.Model); ok {
				t.Price = p.Input + p.Output
			}
		}
	}
}

// start shares the samples of chains through rs (nil: none to share with).
func (rt *routing) start(rs *redisstore.Store, chains map[string]*fallback.Chain, replica string) {
	if rs == nil || len(chains) == 0 {
		return
	}
	aliases := map[string][]string{}
	for alias, ch := range chains {
		for t := range ch.All() {
			aliases[alias] = append(aliases[alias], t.Name)
		}
	}
	// Unique per process: a restarted replica's field is not its predecessor's.
	rt.share = &fallback.Share{Meter: rt.meter, Store: rs.Samples(), Replica: replica + "-" + strconv.Itoa(os.Getpid()),
		Aliases: aliases}
	rt.share.Start()
}

// Close stops sharing. Safe on a nil share.
func (rt *routing) Close() error {
	if rt.share != nil {
		return rt.share.Close()
	}
	return nil
}

// state is what GET /admin/health shows of a target's routing.
func (rt *routing) state(target string) admin.Routing {
	v := rt.meter.View(target)
	return admin.Routing{Weight: v.Weight, LatencyMS: ms(v.Latency), P95MS: ms(v.P95),
		InFlight: v.InFlight, ErrorRate: v.ErrorRate}
}
