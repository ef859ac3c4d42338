package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The decoder walks yaml.v3 nodes itself rather than using yaml.Decoder.KnownFields: the
// errors must name the file, the line and the path of the key ("unknown key "tiemouts" in
// models.default"), which yaml.v3 does not. It also expands ${ENV} in string scalars, after
// parsing, so a variable's value can never inject YAML.

// maxNodes bounds the walk: anchors and aliases may expand a small file exponentially.
const maxNodes = 100_000

type decoder struct {
	file   string
	lookup func(string) (string, bool)
	lines  map[string]int // path -> line, for the validation that follows
	errs   []*Error
	nodes  int
}

// nodeDecoder is implemented by the types whose YAML shape is not a plain struct.
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, path string)
}

// defaulter is implemented by the types whose zero value is not their default; it is called
// on every new value before its node is decoded over it.
type defaulter interface{ setDefaults() }

var rawType = reflect.TypeFor[json.RawMessage]()

func (d *decoder) errorf(line int, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// typeError names what was found by its YAML kind only: the value could be a misplaced secret.
func (d *decoder) typeError(n *yaml.Node, path, want string) {
	d.errorf(n.Line, "%s: want %s, got %s", path, want, describe(n))
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	}
	switch n.ShortTag() {
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	}
	return "a string"
}

func setDefaults(v reflect.Value) {
	if df, ok := v.Addr().Interface().(defaulter); ok {
		df.setDefaults()
	}
}

// decode decodes n into v, which must be addressable. A null node leaves v as it is, so a
// key written with no value keeps its default.
func (d *decoder) decode(n *yaml.Node, path string, v reflect.Value) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if d.nodes++; d.nodes == maxNodes {
		d.errorf(n.Line, "too many nodes (anchors expanding without bound?)")
	}
	if d.nodes >= maxNodes || n.ShortTag() == "!!null" {
		return
	}
	if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
		nd.decodeNode(d, n, path)
		return
	}
	if v.Type() == rawType {
		d.decodeRaw(n, path, v)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Map:
		d.decodeMap(n, path, v)
	case reflect.Slice:
		d.decodeSlice(n, path, v)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		setDefaults(p.Elem())
		d.decode(n, path, p.Elem())
		v.Set(p)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.typeError(n, path, "a string")
			return
		}
		s, err := expand(n.Value, d.lookup)
		if err != nil {
			d.errorf(n.Line, "%s: %v", path, err)
			return
		}
		v.SetString(s)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.typeError(n, path, "true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			d.typeError(n, path, "an integer")
			return
		}
		if v.OverflowInt(i) {
			d.errorf(n.Line, "%s: integer out of range", path)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		tag := n.ShortTag()
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
			d.typeError(n, path, "a number")
			return
		}
		v.SetFloat(f)
	default:
		panic("config: no decoding for " + v.Type().String())
	}
}

// keys iterates the key/value pairs of a mapping, rejecting keys that are not plain strings
// and duplicates (yaml.v3 checks neither when building nodes).
func (d *decoder) keys(n *yaml.Node, path string, yield func(k *yaml.Node, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a mapping")
		return
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			d.errorf(k.Line, "unsupported key in %s (keys are plain strings; merge keys are not supported)", where(path))
			continue
		}
		if seen[k.Value] {
			d.errorf(k.Line, "duplicate key %q in %s", k.Value, where(path))
			continue
		}
		seen[k.Value] = true
		yield(k, v)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	t := v.Type()
	d.keys(n, path, func(k, val *yaml.Node) {
		i := fieldIndex(t, k.Value)
		if i < 0 {
			msg := fmt.Sprintf("unknown key %q in %s", k.Value, where(path))
			if s := suggest(t, k.Value); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.errorf(k.Line, "%s", msg)
			return
		}
		p := join(path, k.Value)
		d.lines[p] = k.Line
		d.decode(val, p, v.Field(i))
	})
}

func (d *decoder) decodeMap(n *yaml.Node, path string, v reflect.Value) {
	t := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMap(t))
	}
	d.keys(n, path, func(k, val *yaml.Node) {
		p := join(path, k.Value)
		d.lines[p] = k.Line
		e := reflect.New(t.Elem()).Elem()
		setDefaults(e)
		d.decode(val, p, e)
		v.SetMapIndex(reflect.ValueOf(k.Value), e)
	})
}

func (d *decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(n, path, "a sequence")
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = item.Line
		setDefaults(s.Index(i))
		d.decode(item, p, s.Index(i))
	}
	v.Set(s)
}

// decodeRaw turns a YAML mapping (or a string holding JSON) into raw JSON: schemas are
// passed on as written, with no ${ENV} expansion.
func (d *decoder) decodeRaw(n *yaml.Node, path string, v reflect.Value) {
	var b []byte
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		b = []byte(strings.TrimSpace(n.Value))
	} else {
		var x any
		var err error
		if err = n.Decode(&x); err == nil {
			b, err = json.Marshal(x)
		}
		if err != nil {
			d.errorf(n.Line, "%s: not expressible as JSON (keys must be strings)", path)
			return
		}
	}
	if !json.Valid(b) || len(b) == 0 || b[0] != '{' {
		d.errorf(n.Line, "%s: want a JSON schema object", path)
		return
	}
	v.SetBytes(b)
}

func fieldIndex(t reflect.Type, key string) int {
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" && tag != "-" && tag == key {
			return i
		}
	}
	return -1
}

// suggest returns the key of t closest to a misspelt one, if it is close enough.
func suggest(t reflect.Type, key string) string {
	best, bestDist := "", 3
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		if dist := editDistance(key, tag); dist < bestDist {
			best, bestDist = tag, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}
