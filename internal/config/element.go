package config

import (
	"reflect"

	"go.yaml.in/yaml/v3"
)

// decodeNode accepts the shorthand `alias: [p/m, ...]` besides the full mapping.
func (a *Alias) decodeNode(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.SequenceNode {
		d.decode(n, path+".targets", reflect.ValueOf(&a.Targets).Elem())
		return
	}
	d.decodeStruct(n, path, reflect.ValueOf(a).Elem())
}

// decodeNode accepts the shorthand `alias: [p/m, ...]` besides the full mapping.
func (e *Embedding) decodeNode(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.SequenceNode {
		d.decode(n, path+".targets", reflect.ValueOf(&e.Targets).Elem())
		return
	}
	d.decodeStruct(n, path, reflect.ValueOf(e).Elem())
}

// timeoutsOverride holds the timeouts an element sets itself; nil fields are the alias's.
type timeoutsOverride struct {
	Connect    *Duration `yaml:"connect"`
	FirstEvent *Duration `yaml:"first_event"`
	Idle       *Duration `yaml:"idle"`
	Total      *Duration `yaml:"total"`
}

func (o timeoutsOverride) over(t Timeouts) Timeouts {
	for _, f := range []struct {
		o *Duration
		t *Duration
	}{{o.Connect, &t.Connect}, {o.FirstEvent, &t.FirstEvent}, {o.Idle, &t.Idle}, {o.Total, &t.Total}} {
		if f.o != nil {
			*f.t = *f.o
		}
	}
	return t
}

// elementYAML is the mapping form of an element.
type elementYAML struct {
	Target         string           `yaml:"target"`
	Group          []string         `yaml:"group"`
	Weights        []int            `yaml:"weights"`
	Timeouts       timeoutsOverride `yaml:"timeouts"`
	Retries        *int             `yaml:"retries"`
	Upstream       string           `yaml:"upstream"`
	EmbeddingModel string           `yaml:"embedding_model"`
	Route          string           `yaml:"route"`
	MaxTTFT        Duration         `yaml:"max_ttft"`
}

func (e *Element) decodeNode(d *decoder, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		var s string
		d.decode(n, path, reflect.ValueOf(&s).Elem())
		*e = Element{Targets: []string{s}, Weights: []int{1}}
		return
	case yaml.MappingNode:
	default:
		d.typeError(n, path, "provider/model, {target: provider/model} or {group: [...]}")
		return
	}
	var y elementYAML
	errs := len(d.errs)
	d.decodeStruct(n, path, reflect.ValueOf(&y).Elem())
	if len(d.errs) > errs {
		return
	}
	*e = Element{EmbeddingModel: y.EmbeddingModel, over: y.Timeouts, retries: y.Retries, upstream: y.Upstream,
		Route: y.Route, MaxTTFT: y.MaxTTFT}
	route(d, n.Line, path, &y)
	switch {
	case y.Target != "" && y.Group != nil:
		d.errorf(n.Line, "%s: set either target or group, not both", path)
	case y.Target != "":
		if y.Weights != nil {
			d.errorf(n.Line, "%s: weights apply to a group only", path)
		}
		e.Targets, e.Weights = []string{y.Target}, []int{1}
	case len(y.Group) > 0:
		e.Targets, e.Weights = y.Group, y.Weights
		if y.Weights == nil {
			e.Weights = make([]int, len(y.Group))
			for i := range e.Weights {
				e.Weights[i] = 1
			}
		}
		if len(e.Weights) != len(e.Targets) {
			d.errorf(n.Line, "%s: %d weights for %d group targets", path, len(e.Weights), len(e.Targets))
		}
		for _, w := range e.Weights {
			if w <= 0 {
				d.errorf(n.Line, "%s: weights must be positive", path)
				break
			}
		}
	default:
		d.errorf(n.Line, "%s: want a target or a non-empty group", path)
	}
}

// route checks an element's route and max_ttft (issue 49): a group's, one of the four;
// weights only for weighted, max_ttft only for cost.
func route(d *decoder, line int, path string, y *elementYAML) {
	switch {
	case y.Route == "" && y.MaxTTFT == 0:
	case y.Group == nil:
		d.errorf(line, "%s: route and max_ttft apply to a group only", path)
	case !oneOf(y.Route, "", "weighted", "latency", "least_busy", "cost"):
		d.errorf(line, "%s.route: want weighted, latency, least_busy or cost, got %q", path, y.Route)
	case y.Weights != nil && !oneOf(y.Route, "", "weighted"):
		d.errorf(line, "%s: weights apply to route: weighted only", path)
	case y.MaxTTFT < 0 || (y.MaxTTFT > 0 && y.Route != "cost"):
		d.errorf(line, "%s.max_ttft: a positive duration, for route: cost only", path)
	}
}
