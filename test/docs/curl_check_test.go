package docs

import (
	"slices"
	"strings"
	"testing"
)

func TestCurls(t *testing.T) {
	p := parse("README.md", "```sh\nmake run\ncurl -N http://127.0.0.1:8080/v1/chat/completions \\\n"+
		"  -H 'Content-Type: application/json' \\\n  -d '{}'   # expect 400\n# curl in a comment\n```\n"+
		"```\ncurl outside sh\n```\n")
	got := p.curls()
	want := []command{{file: "README.md", line: 3,
		text: "curl -N http://127.0.0.1:8080/v1/chat/completions  -H 'Content-Type: application/json'  -d '{}'   # expect 400"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestWords(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k"}
	tests := []struct {
		in     string
		want   []string
		expect int
		err    string
	}{
		{in: `curl -s 'a b' "c $TOKEN" d\ e "" ${TOKEN}x # expect 404`, want: []string{"curl", "-s", "a b", "c t0k", "d e", "", "t0kx"}, expect: 404},
		{in: `curl x # newest first`, want: []string{"curl", "x"}},
		{in: `curl "a\"b\\c\$d" '$TOKEN' a#b`, want: []string{"curl", `a"b\c$d`, "$TOKEN", "a#b"}},
		{in: `curl -H "Authorization: Bearer $SLUICE_KEY" x`, err: "uses $SLUICE_KEY, which the embedded default gives no value"},
		{in: `curl x | jq .`, err: "a pipe, redirection"},
		{in: `curl x > out.csv`, err: "a pipe, redirection"},
		{in: `curl "$(cat f)"`, err: "command substitution"},
		{in: `curl 'x`, err: "unclosed '"},
	}
	for _, tt := range tests {
		args, expect, err := words(tt.in, env)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("words(%q): got error %v, want one containing %q", tt.in, err, tt.err)
			}
		case err != nil || !slices.Equal(args, tt.want) || expect != tt.expect:
			t.Errorf("words(%q): got %q, %d, %v; want %q, %d", tt.in, args, expect, err, tt.want, tt.expect)
		}
	}
}

// TestRunCurl plants commands, so TestQuickstartCurls is known to catch a wrong one.
func TestRunCurl(t *testing.T) {
	addr, env := startDefault(t)
	tests := []struct{ cmd, err string }{
		{cmd: `curl -s http://127.0.0.1:8080/v1/models`},
		{cmd: `curl -s localhost:8080/v1/nope`, err: "got status 404, want 2xx"},
		{cmd: `curl -s localhost:8080/v1/nope   # expect 404`},
		{cmd: `curl -s http://localhost:8080/healthz # expect 500`, err: "got status 200, want 500"},
		{cmd: `curl -s -H "Authorization: Bearer $SLUICE_ADMIN_TOKEN" http://127.0.0.1:8080/admin/keys`, err: "uses $SLUICE_ADMIN_TOKEN"},
		{cmd: `curl -s https://api.openai.com/v1/models`, err: "calls no http://127.0.0.1:8080"},
		{cmd: `curl -s -o out.json http://127.0.0.1:8080/v1/models`, err: "sets -o"},
		{cmd: `curl -s http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' ` +
			`-d '{"model":"default","stream":true,"messages":[{"role":"user","content":"Hello"}]}'`},
	}
	for _, tt := range tests {
		err := runCurl(t.Context(), command{file: "README.md", line: 1, text: tt.cmd}, addr, env)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tt.cmd, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: got %v, want an error containing %q", tt.cmd, err, tt.err)
		}
	}
}
