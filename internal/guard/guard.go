package guard

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluice-gw/sluice/internal/redact"
)

// Stages.
const (
	Input  = "input"
	Output = "output"
)

// Spec is one configured guardrail (config.Guardrail, named).
type Spec struct {
	Name  string
	Stage string // input | output
	// Kind is terms, regex, pii, max_size, or json_schema (output only).
	Kind string
	// Mode is hold or stream, for output guardrails.
	Mode string
	// Action is block (the default), mask (input terms, regex and pii: the matches are
	// masked before the request is sent) or retry (output: frontend runs restart on the next
	// target; elsewhere a refusal).
	Action string

	Terms     []string        // terms: whole words, ASCII case-insensitive
	Pattern   string          // regex (Go syntax)
	Schema    json.RawMessage // json_schema: checked on every answer; absent: response_format's
	MaxBytes  int64           // max_size
	MaxTokens int64           // max_size: the prompt's estimated tokens, the answer's completion tokens
}

// Guardrail is a compiled Spec.
type Guardrail struct {
	Name  string
	Stage string
	// Hold is set on output guardrails in mode hold: the round must not reach the client
	// before the verdict.
	Hold bool

	kind      string
	mask      bool
	retry     bool
	rules     *redact.Rules // terms and pii; regex when masking
	re        *regexp.Regexp
	schema    *jsonschema.Schema
	maxBytes  int64
	maxTokens int64
}

// Refusal is a guardrail's verdict against a request or an answer. Reason never quotes the
// judged text.
type Refusal struct {
	Guardrail string
	Stage     string
	Reason    string
	// Retry is set when the guardrail's action is retry: a frontend run restarts the round
	// on the next target; elsewhere it is a refusal like any other.
	Retry bool
}

func (r *Refusal) Error() string { return "guardrail '" + r.Guardrail + "': " + r.Reason }

// maskWindow bounds a masked regex match on a prompt (redact's window for patterns without
// a literal prefix).
const maskWindow = 4096

// New compiles s. Errors name the guardrail.
func New(s Spec) (*Guardrail, error) {
	g := &Guardrail{Name: s.Name, Stage: s.Stage, Hold: s.Stage == Output && s.Mode != "stream",
		kind: s.Kind, mask: s.Action == "mask", retry: s.Action == "retry", maxBytes: s.MaxBytes, maxTokens: s.MaxTokens}
	if s.Stage != Input && s.Stage != Output {
		return nil, fmt.Errorf("guardrail %s: unknown stage %q", s.Name, s.Stage)
	}
	if g.mask && (s.Stage != Input || (s.Kind != "terms" && s.Kind != "regex" && s.Kind != "pii")) {
		return nil, fmt.Errorf("guardrail %s: action mask applies to input guardrails of kind terms, regex or pii", s.Name)
	}
	var err error
	switch s.Kind {
	case "terms":
		g.rules, err = onlyRules(redact.Config{Terms: s.Terms})
	case "pii":
		g.rules, err = onlyRules(redact.Config{PII: true})
	case "regex":
		if g.re, err = regexp.Compile(s.Pattern); err == nil && g.mask {
			g.rules, err = onlyRules(redact.Config{Patterns: []redact.Pattern{{Name: s.Name, Regex: s.Pattern}},
				WindowBytes: maskWindow, MaxMatchBytes: maskWindow})
		}
	case "max_size":
		if s.MaxBytes <= 0 && s.MaxTokens <= 0 {
			err = fmt.Errorf("needs max_bytes or max_tokens")
		}
	case "json_schema":
		if s.Stage != Output {
			err = fmt.Errorf("kind json_schema applies to output guardrails only")
		} else if len(s.Schema) > 0 {
			g.schema, err = compileSchema(s.Schema)
		}
	default:
		err = fmt.Errorf("unknown kind %q", s.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("guardrail %s: %w", s.Name, err)
	}
	return g, nil
}

// onlyRules compiles c with every built-in detector off but the PII ones when c.PII asks:
// a guardrail finds what it names, not the redaction's secrets.
func onlyRules(c redact.Config) (*redact.Rules, error) {
	c.Detectors = map[string]bool{}
	for _, n := range redact.DetectorNames() {
		c.Detectors[n] = false
	}
	if c.PII {
		for _, n := range []string{"email", "phone", "credit_card", "iban"} {
			c.Detectors[n] = true
		}
	}
	return redact.Compile(c)
}
