package config

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed default.yaml
var defaultYAML []byte

// Load reads and parses the file at path, expanding ${ENV} from the process environment.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse parses data, expanding ${ENV} from the process environment; name is the file name
// errors start with.
func Parse(data []byte, name string) (*Config, error) {
	return ParseWith(data, name, os.LookupEnv)
}

// Default returns the embedded default configuration (real providers first when their keys
// are in the environment, the simulated provider last), for a gateway started without
// --config. It panics if the embedded file is broken, which a test rules out.
func Default() *Config {
	c, err := Parse(defaultYAML, "default.yaml")
	if err != nil {
		panic("config: embedded default: " + err.Error())
	}
	return c
}

// ParseWith is Parse with the environment given as lookup (os.LookupEnv in production).
// The error, if any, joins every problem found, each an *Error with its line.
func ParseWith(data []byte, name string, lookup func(string) (string, bool)) (*Config, error) {
	c := &Config{}
	c.setDefaults()
	d := &decoder{file: name, lookup: lookup, lines: map[string]int{}}
	root, err := parseYAML(data)
	if err != nil {
		return nil, yamlError(name, err)
	}
	if root != nil {
		d.decode(root, "", reflect.ValueOf(c).Elem())
	}
	errs := d.errs
	if len(errs) == 0 {
		c.resolve()
		v := &validator{file: name, lines: d.lines}
		v.config(c)
		errs = v.errs
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *Error) int { return a.Line - b.Line })
		joined := make([]error, len(errs))
		for i, e := range errs {
			joined[i] = e
		}
		return nil, errors.Join(joined...)
	}
	c.prune()
	return c, nil
}

// parseYAML returns the root value of the single document in data, nil when it is empty.
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err == nil {
			return nil, fmt.Errorf("yaml: line %d: a second document (one document per file)", next.Line)
		}
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError rewrites yaml.v3's "yaml: line 3: ..." as "name:3: ...".
func yamlError(name string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Msg: m[2]}
	}
	return &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

// resolve fills the defaults that depend on other fields: per-kind provider defaults, the
// effective timeouts and retries of every element, the PII switch, the keys' hashes in lower
// case and their models ("*" when absent).
func (c *Config) resolve() {
	for name, p := range c.Providers {
		k, _ := kindOf(p.Kind) // an unknown kind has no defaults, and fails validation
		if p.BaseURL == "" {
			p.BaseURL = k.BaseURL
		}
		if p.API == "" && len(k.APIs) > 0 {
			p.API = k.APIs[0]
		}
		c.Providers[name] = p
	}
	for name, a := range c.Models {
		resolveElements(a.Targets, a.Timeouts, a.Retries, a.Upstream)
		if a.Affinity == "" {
			a.Affinity = defaultAffinity(name, &a)
		}
		c.Models[name] = a
	}
	for _, sec := range c.Plain() {
		for name, e := range sec.Aliases {
			resolveElements(e.Targets, e.Timeouts, e.Retries, "")
			sec.Aliases[name] = e
		}
	}
	for i := range c.Keys {
		k := &c.Keys[i]
		k.Hash = strings.ToLower(k.Hash)
		if k.Models == nil {
			k.Models = []string{"*"}
		}
	}
	for i := range c.Teams {
		if t := &c.Teams[i]; t.Models == nil {
			t.Models = []string{"*"}
		}
	}
	if pii, ok := c.Redaction.Detectors["pii"]; ok {
		c.Redaction.PII = pii
		delete(c.Redaction.Detectors, "pii")
	}
}

// defaultAffinity is an alias's affinity when its file sets none: conversation for a group
// of equivalent targets (two of them would each hold half a conversation's cache) and for
// the aliases coding agents use, off otherwise.
func defaultAffinity(name string, a *Alias) string {
	if strings.HasPrefix(name, "claude-") || strings.HasPrefix(name, "gpt-") {
		return "conversation"
	}
	for _, e := range a.Targets {
		if len(e.Targets) > 1 {
			return "conversation"
		}
	}
	return "off"
}

func resolveElements(es []Element, t Timeouts, retries int, upstream string) {
	for i := range es {
		es[i].Timeouts = es[i].over.over(t)
		es[i].Retries = retries
		if es[i].retries != nil {
			es[i].Retries = *es[i].retries
		}
		es[i].Upstream = cmp.Or(es[i].upstream, upstream)
	}
}

// SplitTarget splits "provider/model" at its first slash; a model may hold more slashes
// (OpenRouter's "meta-llama/llama-3").
func SplitTarget(target string) (provider, model string, ok bool) {
	provider, model, ok = strings.Cut(target, "/")
	return provider, model, ok && provider != "" && model != ""
}

// AliasNames returns the model aliases, sorted, for listing.
func (c *Config) AliasNames() []string { return sortedKeys(c.Models) }

// EmbeddingNames returns the embeddings aliases, sorted, for listing.
func (c *Config) EmbeddingNames() []string { return sortedKeys(c.Embeddings) }

// Targets returns every provider/model named in a models or embeddings chain, sorted and
// without duplicates: what a client may also call directly (GET /v1/models).
func (c *Config) Targets() []string {
	var ts []string
	for _, a := range c.Models {
		for _, e := range a.Targets {
			ts = append(ts, e.Targets...)
		}
	}
	for _, sec := range c.Plain() {
		for _, a := range sec.Aliases {
			for _, e := range a.Targets {
				ts = append(ts, e.Targets...)
			}
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// AuthEnabled reports whether requests must carry a key: keys are listed, or an admin token
// is set (keys may then be created through the admin API).
func (c *Config) AuthEnabled() bool { return len(c.Keys) > 0 || c.Auth.AdminToken != "" }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
