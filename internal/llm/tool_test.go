package llm

import "testing"

// Flat names are Codex's own; a custom tool's input survives the trip through a function's
// arguments byte for byte, HTML characters and all.
func TestToolNames(t *testing.T) {
	for _, tt := range [][3]string{{"mcp__docs", "search", "mcp__docs__search"}, {"ns_", "_f", "ns__f"}, {"", "f", "f"}} {
		if got := FlatName(tt[0], tt[1]); got != tt[2] {
			t.Errorf("FlatName(%q, %q) = %q, want %q", tt[0], tt[1], got, tt[2])
		}
	}
	in := "*** Begin Patch\n+<a href=\"x\">&</a>\n*** End Patch\n"
	args := CustomArgs(in)
	if args != `{"input":"*** Begin Patch\n+<a href=\"x\">&</a>\n*** End Patch\n"}` || CustomInput(args) != in {
		t.Errorf("got %s and back %q", args, CustomInput(args))
	}
	if CustomInput(`not json`) != "not json" {
		t.Error("want arguments a model wrote otherwise kept as they are")
	}
}
