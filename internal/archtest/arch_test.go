package archtest

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/sluice-gw/sluice"

type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	Standard   bool
	Imports    []string
	Deps       []string
	GoFiles    []string
}

// list runs go list on the module's packages.
func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if len(ps) < 5 {
		t.Fatalf("go list found %d packages, want the whole module", len(ps))
	}
	return ps
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// owners says which packages may import a dependency directly (prefix match on both).
var owners = []struct {
	dep     string
	allowed []string
}{
	{"github.com/labstack/echo", []string{module + "/internal/server", module + "/cmd/"}},
	{"github.com/openai/openai-go", []string{module + "/internal/provider/openai"}},
	{"github.com/redis/go-redis", []string{module + "/internal/redisstore"}},
	// SQL stays in the request log's store.
	{"github.com/jackc/pgx", []string{module + "/internal/logstore"}},
	{"modernc.org/sqlite", []string{module + "/internal/logstore"}},
	// The OpenTelemetry SDK, its exporters and the Prometheus client belong to telemetry
	// (TestSDKOnlyInSetup narrows it to one file); the otel API may be used anywhere.
	{"go.opentelemetry.io/otel/sdk", []string{module + "/internal/telemetry"}},
	{"go.opentelemetry.io/otel/exporters", []string{module + "/internal/telemetry"}},
	{"github.com/prometheus/", []string{module + "/internal/telemetry"}},
	{"github.com/r3labs/sse", []string{module + "/internal/provider/"}},
	{"github.com/santhosh-tekuri/jsonschema", []string{module + "/internal/guard"}},
	// DESIGN §10: the AWS SDK (signer, credential chain, event-stream decoder) is Bedrock's.
	{"github.com/aws/", []string{module + "/internal/provider/bedrock"}},
	// golang.org/x/oauth2: Vertex AI's credentials, Entra ID's client credentials, the
	// console's OpenID Connect sign-in (with go-oidc, its only user).
	{"golang.org/x/oauth2", []string{module + "/internal/provider/gemini", module + "/internal/provider/azure", module + "/internal/console"}},
	{"github.com/coreos/go-oidc", []string{module + "/internal/console"}},
}

func TestDependencyOwners(t *testing.T) {
	for _, p := range list(t) {
		for _, imp := range p.Imports {
			for _, o := range owners {
				if !strings.HasPrefix(imp, o.dep) {
					continue
				}
				ok := false
				for _, a := range o.allowed {
					ok = ok || p.ImportPath == a || strings.HasPrefix(p.ImportPath, a)
				}
				if !ok {
					t.Errorf("%s imports %s; only %v may", p.ImportPath, imp, o.allowed)
				}
			}
		}
	}
}

// never says which packages of the module a part must not import, directly or through
// another package (DESIGN §11): part and the forbidden packages are paths under the module,
// each standing for itself and the packages below it.
var never = []struct {
	part   string
	banned []string
	why    string
	direct bool // only the package's own imports: what it uses may use the banned
}{
	{"internal/provider", []string{"internal/fallback", "internal/relay", "internal/server"},
		"adapters know nothing of the chain, the relay or the HTTP server", false},
	// internal/dialect and internal/turn may not exist yet: a rule about a package that is
	// not there holds trivially.
	{"internal/provider", []string{"internal/dialect", "internal/turn"},
		"adapters speak their upstream's wire: the client's wire and the round are above them", false},
	{"internal/server", []string{"internal/provider", "internal/redisstore", "internal/config"},
		"the edge gets its parts from internal/gateway, the store behind interfaces it defines", false},
	// A client wire is a codec: it never picks a target, runs a round or knows the edge (echo
	// is kept to the edge by owners).
	{"internal/dialect", []string{"internal/fallback", "internal/turn", "internal/server", "internal/provider"},
		"a dialect decodes and encodes one client wire; the round is run elsewhere", false},
	{"internal/uistream", []string{"internal/fallback", "internal/turn", "internal/server", "internal/provider"},
		"a dialect decodes and encodes one client wire; the round is run elsewhere", false},
	// The guardrails (internal/guard) use the redaction detectors: the edge must only not
	// build the rules itself.
	{"internal/server", []string{"internal/redact"}, "the edge gets its redaction rules from internal/gateway", true},
	{"internal/turn", []string{"internal/server", "internal/dialect", "internal/uistream", "internal/runs"},
		"a round knows no HTTP and writes to a sink, whatever its wire", false},
	{"internal/relay", []string{"internal/fallback", "internal/turn", "internal/server"},
		"the relay copies one committed stream to a sink", false},
	{"internal/admit", []string{"internal/server", "internal/turn", "internal/dialect", "internal/provider", "internal/redisstore"},
		"a key's limits and budget are policy: the edge turns its answers into HTTP, the gateway gives it its stores", false},
	{"internal/fallback", []string{"internal/relay", "internal/turn", "internal/provider", "internal/redisstore"},
		"the chain decides the target, not the output, and sees providers and health through its interfaces", false},
	{"internal/shadow", []string{"internal/server", "internal/provider", "internal/redisstore", "internal/logstore", "internal/admit"},
		"a shadow call is a round on a chain the gateway gives it, its record handed to a func: never the key's admission (issue 49)", false},
}

// TestOneRoundRunner keeps relay.Run to internal/turn: a round runs in one place, so every
// wire gets the same accounting, guardrails and failure rules (tests may call it).
func TestOneRoundRunner(t *testing.T) {
	for _, p := range list(t) {
		if under(p.ImportPath, "internal/turn") || under(p.ImportPath, "internal/relay") {
			continue
		}
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("relay.Run(")) {
				t.Errorf("%s/%s calls relay.Run: rounds run in internal/turn only", p.ImportPath, f)
			}
		}
	}
}

// under reports whether the import path imp is the module's package dir or one below it.
func under(imp, dir string) bool {
	dir = module + "/" + dir
	return imp == dir || strings.HasPrefix(imp, dir+"/")
}

// TestNeverImports holds the never rules over each package's build, not its tests: a test
// may assemble what the package must not know (openai's tests run a fallback chain).
func TestNeverImports(t *testing.T) {
	for _, p := range list(t) {
		for _, n := range never {
			if !under(p.ImportPath, n.part) {
				continue
			}
			deps := p.Deps
			if n.direct {
				deps = p.Imports
			}
			for _, dep := range deps {
				for _, b := range n.banned {
					if under(dep, b) {
						t.Errorf("%s depends on %s: %s", p.ImportPath, dep, n.why)
					}
				}
			}
		}
	}
}

// TestStandardLibraryOnly keeps the vocabulary and the redaction rules free of dependencies,
// direct or indirect (other packages of the module excepted for redact: none today).
func TestStandardLibraryOnly(t *testing.T) {
	for _, path := range []string{"internal/llm", "internal/redact", "internal/sse", "internal/jsonstr", "internal/jsonscan"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./"+path)
		cmd.Dir = root(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", path, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			imp, std, _ := strings.Cut(line, " ")
			if std != "true" && imp != module+"/"+path {
				t.Errorf("%s depends on %s; it must use the standard library only", path, imp)
			}
		}
	}
}

// TestSchemaImportsNothing keeps the wire types (internal/schema/...) free of the module and
// of dependencies, direct or indirect: the adapters, the dialects and the mock all import
// them, so a schema that imported any of those would tie them together.
func TestSchemaImportsNothing(t *testing.T) {
	n := 0
	for _, p := range list(t) {
		if !under(p.ImportPath, "internal/schema") {
			continue
		}
		n++
		for _, dep := range p.Deps {
			first, _, _ := strings.Cut(dep, "/")
			if strings.HasPrefix(dep, module+"/") || strings.Contains(first, ".") {
				t.Errorf("%s depends on %s; a schema uses the standard library only", p.ImportPath, dep)
			}
		}
	}
	if n < 2 {
		t.Errorf("found %d packages under internal/schema, want openai and anthropic at least", n)
	}
}

func TestPackageNames(t *testing.T) {
	banned := map[string]bool{"utils": true, "util": true, "common": true, "models": true, "schemas": true, "helpers": true}
	for _, p := range list(t) {
		if banned[p.Name] {
			t.Errorf("package %s is named %q: cut packages by what they decide", p.ImportPath, p.Name)
		}
	}
}

func TestDocComments(t *testing.T) {
	for _, p := range list(t) {
		found := false
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil && strings.HasPrefix(af.Doc.Text(), "Package "+p.Name) || af.Doc != nil && p.Name == "main" && strings.HasPrefix(af.Doc.Text(), "Command ") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no doc comment saying what it decides", p.ImportPath)
		}
	}
}

// TestSDKOnlyInSetup keeps the OpenTelemetry SDK, its exporters and the Prometheus client in
// telemetry/setup.go: the rest of the package, like every other, records through the API
// (DESIGN §7, "the SDK is set up in one place").
func TestSDKOnlyInSetup(t *testing.T) {
	sdk := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "github.com/prometheus/"}
	for _, p := range list(t) {
		if p.ImportPath != module+"/internal/telemetry" {
			continue
		}
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				for _, d := range sdk {
					if strings.HasPrefix(path, d) && f != "setup.go" {
						t.Errorf("telemetry/%s imports %s; only setup.go may", f, path)
					}
				}
			}
		}
	}
}
