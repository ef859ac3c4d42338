package logstore

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// marshal is what encoding/json writes for v without HTML escaping: what appendDoc must
// write, byte for byte, less the record's fields that hold their zero value.
func marshal(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func checkDoc(t testing.TB, r *Record) {
	t.Helper()
	got := appendDoc(nil, r)
	if want := withoutZeros(t, marshal(t, r)); !bytes.Equal(got, want) {
		t.Fatalf("appendDoc differs from encoding/json less its zeros:\n got %s\nwant %s", got, want)
	}
	// What a reader decodes: the record, as encoding/json's whole document gives it.
	var back, whole Record
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("appendDoc wrote %s: not JSON: %v", got, err)
	}
	if err := json.Unmarshal(marshal(t, r), &whole); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, whole) {
		t.Fatalf("the document reads back as\n%+v\nnot as encoding/json's whole one:\n%+v", back, whole)
	}
	if got, want := appendMeta(nil, r.KeyMeta), marshal(t, r.KeyMeta); !bytes.Equal(got, want) {
		t.Fatalf("appendMeta differs from encoding/json:\n got %s\nwant %s", got, want)
	}
}

// withoutZeros is doc, a JSON object, without its members whose value is "", 0, false or
// null (the fields appendDoc leaves out; it always writes the id), in the same order and
// bytes otherwise.
func withoutZeros(t testing.TB, doc []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not an object", doc)
	}
	out := []byte{'{'}
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		switch string(v) {
		case `""`, "0", "-0", "false", "null":
			if name != "id" {
				continue
			}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(out, marshal(t, name)...), ':')
		out = append(out, v...)
	}
	return append(out, '}')
}

// TestDocLeavesOutZeros checks that a record with most fields empty is a short document.
func TestDocLeavesOutZeros(t *testing.T) {
	r := Record{ID: "req_1", RequestID: "req_1", Time: time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC), Status: 200, TokensIn: 3}
	const want = `{"id":"req_1","request_id":"req_1","time":"2026-12-07T01:00:00Z","status":200,"tokens_in":3}`
	if got := appendDoc(nil, &r); string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	checkDoc(t, &r)
}

// TestDocMatchesEncodingJSON compares appendDoc with encoding/json over many random
// records, every field filled by reflection (so a new field is filled too).
func TestDocMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 1))
	for range 3000 {
		var r Record
		fill(t, rng, reflect.ValueOf(&r).Elem())
		checkDoc(t, &r)
	}
}

// FuzzDoc is TestDocMatchesEncodingJSON from any seed.
func FuzzDoc(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 33, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		var r Record
		fill(t, rand.New(rand.NewPCG(seed, seed>>7)), reflect.ValueOf(&r).Elem())
		checkDoc(t, &r)
	})
}

// TestDocCoversRecord sets each field of Record, and of the structs it holds, alone: a
// field appendDoc does not write (a field added to Record and not to docjson.go) makes
// the documents differ.
func TestDocCoversRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	// walk tests each field of the struct that at finds in a record.
	var walk func(path string, typ reflect.Type, at func(*Record) reflect.Value)
	walk = func(path string, typ reflect.Type, at func(*Record) reflect.Value) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := path + f.Name
			t.Run(name, func(t *testing.T) {
				r := Record{Time: time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)}
				v := at(&r).Field(i)
				for v.IsZero() {
					fill(t, rng, v)
				}
				checkDoc(t, &r)
			})
			elem := f.Type
			if k := elem.Kind(); k == reflect.Pointer || k == reflect.Slice {
				elem = elem.Elem()
			}
			if elem.Kind() != reflect.Struct || elem == reflect.TypeFor[time.Time]() {
				continue
			}
			// A struct behind a pointer or in a slice: each of its fields alone.
			walk(name+".", elem, func(r *Record) reflect.Value {
				v := at(r).Field(i)
				if v.Kind() == reflect.Pointer {
					v.Set(reflect.New(elem))
					return v.Elem()
				}
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
				return v.Index(0)
			})
		}
	}
	walk("", reflect.TypeFor[Record](), func(r *Record) reflect.Value { return reflect.ValueOf(r).Elem() })
}

// fill sets v to a random value of its type, as prepare leaves it: finite floats, a UTC
// time RFC 3339 can write. A type it does not know fails the test, so that a new kind of
// field is added here and to appendDoc.
func fill(t testing.TB, rng *rand.Rand, v reflect.Value) {
	t.Helper()
	if v.Type() == reflect.TypeFor[time.Time]() {
		sec := rng.Int64N(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() - time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
		at := time.Unix(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()+sec, rng.Int64N(1e9)).UTC()
		if rng.IntN(2) == 0 {
			at = at.Truncate(time.Duration([]int{1, 1000, 1e6, 1e9}[rng.IntN(4)]))
		}
		v.Set(reflect.ValueOf(at))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randString(rng))
	case reflect.Int, reflect.Int64:
		switch rng.IntN(3) {
		case 0:
			v.SetInt(rng.Int64N(1000))
		case 1:
			v.SetInt(int64(rng.Uint64()))
		default:
			v.SetInt(-rng.Int64N(1 << 20))
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Float64:
		v.SetFloat(randFloat(rng))
	case reflect.Map:
		if rng.IntN(5) == 0 {
			v.SetZero() // nil: null
			return
		}
		m := reflect.MakeMap(v.Type())
		for range rng.IntN(12) { // past appendMeta's 8 on the stack
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, rng, k)
			fill(t, rng, e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Slice:
		if rng.IntN(4) == 0 {
			v.SetZero() // nil: null
			return
		}
		n := rng.IntN(4) // 0: []
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(t, rng, s.Index(i))
		}
		v.Set(s)
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(t, rng, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, rng, v.Field(i))
		}
	default:
		t.Fatalf("fill does not know %s: add it here and to appendDoc (docjson.go)", v.Type())
	}
}

// randString draws from the characters JSON escapes and those it must not: quotes,
// backslashes, controls, HTML's <>&, multi-byte runes, U+2028, invalid UTF-8.
func randString(rng *rand.Rand) string {
	parts := []string{"a", "Zebra", " ", `"`, `\`, "\n", "\t", "\x00", "\x1f", "\x7f", "<", ">", "&", "é", "中", "\u2028", "\u2029", "😀", "\xff", "\xe2\x80", "/", "key_a", "openai/gpt-4o"}
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// randFloat draws the forms encoding/json writes differently: integers, fractions, the
// exponent form below 1e-6 and from 1e21, negative zero, the extremes.
func randFloat(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return float64(rng.IntN(100000))
	case 1:
		return math.Round(rng.Float64()*1e6) / 1000
	case 2:
		return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(60)-30))
	case 3:
		return []float64{0, math.Copysign(0, -1), 1e-6, 9.99999e-7, 1e21, 9.99999e20, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-7}[rng.IntN(9)]
	case 4:
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7ff))<<52) // any finite bits
	default:
		return rng.NormFloat64() * 1000
	}
}

// rowColumns are the members appendRowDoc leaves to the row's columns.
var rowColumns = []string{"id", "request_id", "time", "key_id", "key_name", "team", "alias", "target", "status", "kind",
	"stream", "cache", "affinity", "tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens", "cost_usd",
	"first_token_ms", "saved_usd"}

// TestRowDocLeavesColumnsOut: a row's document (rowsOf) holds none of its columns' members, and
// decoded, with the columns' values put back, it is the whole record.
func TestRowDocLeavesColumnsOut(t *testing.T) {
	now := time.Now()
	set := append(recs(30, now), full(now), Record{ID: "bare", Time: now})
	rows, err := rowsOf(set)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range set {
		p, err := prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		p.Content = nil
		doc := []byte(rows[i].doc)
		var members map[string]json.RawMessage
		if err := json.Unmarshal(doc, &members); err != nil {
			t.Fatalf("%s: appendRowDoc wrote %s: %v", r.ID, doc, err)
		}
		for _, c := range rowColumns {
			if _, ok := members[c]; ok {
				t.Errorf("%s: the document holds the column %s: %s", r.ID, c, doc)
			}
		}
		var back Record
		if err := json.Unmarshal(doc, &back); err != nil {
			t.Fatal(err)
		}
		back.ID, back.RequestID, back.Time, back.KeyID, back.KeyName, back.Team = p.ID, p.RequestID, p.Time, p.KeyID, p.KeyName, p.Team
		back.Alias, back.Target, back.Status, back.Kind, back.Stream, back.Cache, back.Affinity = p.Alias, p.Target, p.Status, p.Kind, p.Stream, p.Cache, p.Affinity
		back.TokensIn, back.TokensOut, back.CacheReadTokens, back.CacheWriteTokens = p.TokensIn, p.TokensOut, p.CacheReadTokens, p.CacheWriteTokens
		back.CostUSD, back.FirstTokenMS, back.SavedUSD = p.CostUSD, p.FirstTokenMS, p.SavedUSD
		if !reflect.DeepEqual(back, p) {
			t.Errorf("%s: the document and the columns read back as\n%+v\nnot\n%+v", r.ID, back, p)
		}
	}
}
