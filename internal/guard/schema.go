package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluice-gw/sluice/internal/llm"
)

// responseFormat is what a request's response_format asks of the answer.
type responseFormat struct {
	json   bool               // JSON: json_object or json_schema
	schema *jsonschema.Schema // json_schema's schema
	err    error              // json_schema's schema does not compile
}

func decodeFormat(req *llm.Request) *responseFormat {
	f := &responseFormat{}
	if req == nil || len(req.ResponseFormat) == 0 {
		return f
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(req.ResponseFormat, &rf) != nil {
		return f
	}
	switch rf.Type {
	case "json_object":
		f.json = true
	case "json_schema":
		f.json = true
		if s := rf.JSONSchema.Schema; len(s) > 0 && string(s) != "null" {
			f.schema, f.err = compileSchema(s)
		}
	}
	return f
}

// schemaURL names the one resource a compiler holds.
const schemaURL = "https://sluice.invalid/schema.json"

// noLoader refuses every reference outside the schema: a client's schema must never make
// the gateway read a file or fetch a URL.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("references outside the schema are not followed")
}

// compileSchema compiles a JSON Schema (draft 2020-12 unless it says otherwise).
func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.New("the schema is not JSON")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// validate judges text against s. The refusal names where in the schema the answer failed,
// never a value of the answer.
func (g *Guardrail) validate(s *jsonschema.Schema, text string) *Refusal {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return g.refuse("the answer is not valid JSON")
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return g.refuse("the answer does not match the JSON schema")
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0] // the first leaf: the most specific failure
	}
	at := "#"
	if _, frag, ok := strings.Cut(ve.SchemaURL, "#"); ok && frag != "" {
		at += frag
	}
	if ve.ErrorKind != nil {
		if kw := ve.ErrorKind.KeywordPath(); len(kw) > 0 {
			at += "/" + strings.Join(kw, "/") // the failed keyword, schema side: never a value
		}
	}
	return g.refuse("the answer does not match the JSON schema at %s", at)
}
