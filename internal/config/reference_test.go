package config

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The configuration reference, docs/configuration.md, is held here rather than in test/docs:
// the walk needs the decoder's own shapes (elementYAML, the nodeDecoder types, the defaults
// setDefaults fills), and a change to a config type then fails the tests of the package that
// changed.

const referencePage = "../../docs/configuration.md"

// refKey is one key path the decoder accepts, as the page writes it:
// models.<alias>.targets[].upstream.
type refKey struct {
	path string
	typ  string // a word the page's type cell must hold: string, integer, duration, list, ...
	def  string // the default as the page shows it in a code span; "" when zero
}

// placeholders name the entries of the maps whose values are mappings; other maps are leaves.
var placeholders = map[string]string{"providers": "provider", "models": "alias", "embeddings": "alias",
	"guardrails": "guardrail", "tools": "tool", "prices": "model"}

var (
	durationType  = reflect.TypeFor[Duration]()
	bytesType     = reflect.TypeFor[Bytes]()
	timestampType = reflect.TypeFor[Timestamp]()
	elementType   = reflect.TypeFor[Element]()
	decoderType   = reflect.TypeFor[nodeDecoder]()
)

// refWalker walks the config types as the decoder does, each value holding its defaults.
type refWalker struct {
	keys []refKey
	errs []string
}

// referenceKeys returns every key path of the configuration: each struct field, and each
// entry of a map whose values are mappings (providers.<provider>); items of a list appear
// only inside longer paths (keys[].name), leaves are scalars, lists and maps of scalars.
func referenceKeys() ([]refKey, []string) {
	var w refWalker
	c := Config{}
	c.setDefaults()
	w.fields(reflect.ValueOf(&c).Elem(), "")
	return w.keys, w.errs
}

func (w *refWalker) fields(v reflect.Value, path string) {
	for i := range v.NumField() {
		tag := v.Type().Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		p := join(path, tag)
		w.keys = append(w.keys, refKey{path: p, typ: typeWord(v.Field(i).Type()), def: render(v.Field(i))})
		w.value(v.Field(i), p)
	}
}

// value walks what is below v, a value at path whose own key is already listed.
func (w *refWalker) value(v reflect.Value, path string) {
	t := v.Type()
	switch {
	case t == elementType:
		// An element is decoded through elementYAML (or is a bare provider/model string).
		w.fields(reflect.New(reflect.TypeFor[elementYAML]()).Elem(), path)
		return
	case isLeaf(t):
		return
	case reflect.PointerTo(t).Implements(decoderType) && t != reflect.TypeFor[Alias]() && t != reflect.TypeFor[Embedding]():
		w.errs = append(w.errs, fmt.Sprintf("%s: %s decodes itself: teach the reference walk its shape", path, t))
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		w.fields(v, path)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		setDefaults(p.Elem())
		w.value(p.Elem(), path)
	case reflect.Map, reflect.Slice:
		if !mapping(t.Elem()) {
			return
		}
		e := reflect.New(t.Elem()).Elem()
		setDefaults(e)
		if t.Kind() == reflect.Slice {
			w.value(e, path+"[]")
			return
		}
		p := path + ".<" + cmp.Or(placeholders[path], "name") + ">"
		w.keys = append(w.keys, refKey{path: p, typ: typeWord(t.Elem())})
		w.value(e, p)
	}
}

func isLeaf(t reflect.Type) bool {
	return t == durationType || t == bytesType || t == timestampType || t == rawType
}

// mapping reports whether a value of t is written as a mapping with keys of its own.
func mapping(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !isLeaf(t)
}

// typeWord is the word the type cell must contain for a value of t.
func typeWord(t reflect.Type) string {
	switch t {
	case durationType:
		return "duration"
	case bytesType:
		return "size"
	case timestampType:
		return "timestamp"
	case rawType:
		return "JSON"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeWord(t.Elem())
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "list"
	}
	return "mapping" // maps and structs
}

// render writes a default the way a configuration file would: 30d, 250ms, 64MiB, true.
func render(v reflect.Value) string {
	if v.IsZero() {
		return ""
	}
	switch v.Type() {
	case durationType:
		d := time.Duration(v.Int())
		for _, u := range []struct {
			d      time.Duration
			suffix string
		}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
			// Days from two on: a day reads better as 24h.
			if d%u.d == 0 && (u.suffix != "d" || d >= 48*time.Hour) {
				return strconv.FormatInt(int64(d/u.d), 10) + u.suffix
			}
		}
		return d.String()
	case bytesType:
		n := v.Int()
		for _, u := range []struct {
			n      int64
			suffix string
		}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
			if n%u.n == 0 {
				return strconv.FormatInt(n/u.n, 10) + u.suffix
			}
		}
		return strconv.FormatInt(n, 10)
	case rawType:
		return string(v.Bytes())
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Map, reflect.Slice:
		return "" // mappings and lists have no default of their own; their keys do
	}
	return fmt.Sprint(v.Interface())
}

// refEntry is a row of the page whose first cell is a key path in backticks.
var refEntry = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")

// checkReference returns what is wrong with page against keys: an entry naming no key, a
// key listed twice or not at all, a row without its four cells (key, type, default,
// meaning), a type cell without the key's type, a default cell without its default.
func checkReference(page []byte, keys []refKey) []string {
	byPath := map[string]refKey{}
	for _, k := range keys {
		byPath[k.path] = k
	}
	var errs []string
	seen := map[string]int{}
	for i, line := range strings.Split(string(page), "\n") {
		n := i + 1
		m := refEntry.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		path := m[1]
		k, ok := byPath[path]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("configuration.md:%d: `%s` names no key of the configuration", n, path))
			continue
		case seen[path] != 0:
			errs = append(errs, fmt.Sprintf("configuration.md:%d: `%s` is listed again (first at line %d)", n, path, seen[path]))
			continue
		}
		seen[path] = n
		cells := cells(line)
		if len(cells) != 4 {
			errs = append(errs, fmt.Sprintf("configuration.md:%d: `%s`: got %d cells, want 4 (key, type, default, meaning)", n, path, len(cells)))
			continue
		}
		if !strings.Contains(strings.ToLower(cells[1]), strings.ToLower(k.typ)) {
			errs = append(errs, fmt.Sprintf("configuration.md:%d: `%s`: type %q, want it to say %s", n, path, cells[1], k.typ))
		}
		if k.def != "" && !strings.Contains(cells[2], "`"+k.def+"`") {
			errs = append(errs, fmt.Sprintf("configuration.md:%d: `%s`: default %q, want it to show `%s`", n, path, cells[2], k.def))
		}
		if cells[3] == "" {
			errs = append(errs, fmt.Sprintf("configuration.md:%d: `%s`: no meaning", n, path))
		}
	}
	for _, k := range keys {
		if seen[k.path] == 0 {
			errs = append(errs, fmt.Sprintf("configuration.md: key `%s` (%s, default %q) is missing", k.path, k.typ, k.def))
		}
	}
	return errs
}

// cells splits a table row at its unescaped pipes, trimmed.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var out []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

const defaultMarker = "<!-- doc-test: embedded-default -->"

// shownDefault returns the yaml block that directly follows the marker line.
func shownDefault(page []byte) ([]byte, error) {
	_, after, ok := bytes.Cut(page, []byte(defaultMarker+"\n```yaml\n"))
	if !ok {
		return nil, fmt.Errorf("no line %s directly followed by a ```yaml block", defaultMarker)
	}
	block, _, ok := bytes.Cut(after, []byte("\n```\n"))
	if !ok {
		return nil, fmt.Errorf("the embedded default's block is not closed")
	}
	return block, nil
}

func TestReference(t *testing.T) {
	keys, errs := referenceKeys()
	for _, e := range errs {
		t.Error(e)
	}
	if len(keys) < 100 {
		t.Fatalf("got %d keys, want the whole configuration", len(keys))
	}
	page, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range checkReference(page, keys) {
		t.Error(e)
	}
	shown, err := shownDefault(page)
	if err != nil {
		t.Fatalf("configuration.md: %v", err)
	}
	if want := bytes.TrimSuffix(defaultYAML, []byte("\n")); !bytes.Equal(shown, want) {
		t.Errorf("configuration.md: the embedded default shown differs from internal/config/default.yaml: copy it whole")
	}
}

// TestReferenceFails plants faults in a page, so TestReference is known to catch them.
func TestReferenceFails(t *testing.T) {
	keys := []refKey{{path: "listen", typ: "string", def: "127.0.0.1:8080"},
		{path: "models.<alias>.targets[].upstream", typ: "string"}}
	good := "| Key | Type | Default | Meaning |\n|---|---|---|---|\n" +
		"| `listen` | string | `127.0.0.1:8080` | the address |\n" +
		"| `models.<alias>.targets[].upstream` | string | the alias's | stream or plain |\n"
	if errs := checkReference([]byte(good), keys); len(errs) != 0 {
		t.Fatalf("good page: got %q, want no error", errs)
	}
	tests := []struct{ name, page, want string }{
		{"missing", "| `listen` | string | `127.0.0.1:8080` | x |\n", "key `models.<alias>.targets[].upstream` (string, default \"\") is missing"},
		{"unknown", good + "| `listne` | string | | x |\n", ":5: `listne` names no key"},
		{"twice", good + "| `listen` | string | `127.0.0.1:8080` | x |\n", ":5: `listen` is listed again (first at line 3)"},
		{"default", strings.Replace(good, "`127.0.0.1:8080`", "`:8080`", 1), "want it to show `127.0.0.1:8080`"},
		{"type", strings.Replace(good, "| string | `127", "| integer | `127", 1), "want it to say string"},
		{"cells", strings.Replace(good, " | the address |", " |", 1), "got 3 cells, want 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := checkReference([]byte(tt.page), keys)
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tt.want) }) {
				t.Errorf("got %q, want an error containing %q", errs, tt.want)
			}
		})
	}
	if _, err := shownDefault([]byte("```yaml\nlisten: x\n```\n")); err == nil {
		t.Error("a page without the marker: got no error, want one")
	}
	if got, _ := shownDefault([]byte(defaultMarker + "\n```yaml\nlisten: x\n```\n")); string(got) != "listen: x" {
		t.Errorf("shownDefault: got %q, want %q", got, "listen: x")
	}
}

// TestReferenceKeys pins a few paths of the walk, its shapes included (an element's mapping
// form, a pointer's defaults, a map's entries).
func TestReferenceKeys(t *testing.T) {
	keys, _ := referenceKeys()
	want := map[string]refKey{
		"models.<alias>.targets[].upstream":         {typ: "string"},
		"models.<alias>.targets[].timeouts.connect": {typ: "duration"},
		"models.<alias>.cache.ttl":                  {typ: "duration", def: "10m"},
		"models.<alias>.ttl":                        {typ: "duration", def: "30d"},
		"providers.<provider>":                      {typ: "mapping"},
		"providers.<provider>.stream":               {typ: "boolean", def: "true"},
		"tools.<tool>.http.parameters":              {typ: "JSON", def: `{"type":"object"}`},
		"cache.memory_bytes":                        {typ: "size", def: "64MiB"},
		"redis.timeout":                             {typ: "duration", def: "250ms"},
		"keys[].expires_at":                         {typ: "timestamp"},
		"console.oidc[].roles[].team":               {typ: "string"},
		"redaction.detectors":                       {typ: "mapping"},
	}
	got := map[string]refKey{}
	for _, k := range keys {
		got[k.path] = refKey{typ: k.typ, def: k.def}
	}
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("%s: got %+v (listed %v), want %+v", p, g, ok, w)
		}
	}
	for _, p := range []string{"redaction.pii", "keys[]", "redaction.detectors.<name>"} {
		if _, ok := got[p]; ok {
			t.Errorf("%s: listed, want it left out", p)
		}
	}
}
