package objects

import (
	"strings"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	id := Encode(FilePrefix, "openai", "file-abc123")
	if !strings.HasPrefix(id, "file-") || strings.ContainsAny(id, "+/=") {
		t.Fatalf("id %q is not a file- id in base64url", id)
	}
	if n, up, ok := Decode(FilePrefix, id); !ok || n != "openai" || up != "file-abc123" {
		t.Errorf("got %q %q %v", n, up, ok)
	}
	for _, bad := range []string{"file-", "file-abc", "batch_" + id[5:], id + "!", Encode(FilePrefix, "a", "../x"), Encode(FilePrefix, "", "x"),
		Encode(FilePrefix, "a", "x/y")} {
		if _, _, ok := Decode(FilePrefix, bad); ok {
			t.Errorf("Decode(%q) ok, want refused", bad)
		}
	}
}

// FuzzID: whatever a client sends as an id, Decode never panics, and what it accepts
// encodes back to itself; what Encode makes decodes to its parts.
func FuzzID(f *testing.F) {
	f.Add("openai", "file-abc", "file-x")
	f.Add("emulate/a", "batch_1", "batch_\xff")
	f.Fuzz(func(t *testing.T, name, up, raw string) {
		if n, u, ok := Decode(FilePrefix, raw); ok && Encode(FilePrefix, n, u) != raw {
			t.Errorf("Decode(%q) = %q %q, which encodes otherwise", raw, n, u)
		}
		id := Encode(BatchPrefix, name, up)
		if n, u, ok := Decode(BatchPrefix, id); ok && (n != name || u != up) {
			t.Errorf("Encode(%q, %q) decodes to %q %q", name, up, n, u)
		}
	})
}
