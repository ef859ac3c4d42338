package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// TestMaskedLog: the gateway's own secrets are masked in a log line's message, its string,
// error, Stringer and other values, in groups and in attributes added beforehand; other
// values keep their kind (issue 47).
func TestMaskedLog(t *testing.T) {
	const tok = "admin-token-of-the-gateway-7"
	rules, err := onlyOwn(ownSecrets(&config.Config{Auth: config.Auth{AdminToken: tok}}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := masked(slog.New(slog.NewJSONHandler(&buf, nil)), rules.Redact)
	log = log.With("pre", "x"+tok).WithGroup("g")
	log.Info("saw "+tok, "s", tok, "err", errors.New("bad "+tok), "list", []string{tok},
		slog.Group("inner", "v", tok), "n", 42, "plain", "kept")
	out := buf.String()
	if strings.Contains(out, tok) {
		t.Errorf("the token survived: %s", out)
	}
	for _, want := range []string{`"msg":"saw [REDACTED:secret]"`, `"pre":"x[REDACTED:secret]"`, `"n":42`, `"plain":"kept"`,
		`"err":"bad [REDACTED:secret]"`, `"inner":{"v":"[REDACTED:secret]"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("got %s, want %s in it", out, want)
		}
	}
}

// TestOwnSecretsOf: the secrets come from every place the configuration holds one.
func TestOwnSecretsOf(t *testing.T) {
	c := &config.Config{
		Auth:  config.Auth{AdminToken: "admin-token-1234"},
		Redis: config.Redis{URL: "redis://:redis-pass-5678@h:6379", Sentinel: &config.RedisSentinel{Password: "sentinel-pw-1", SentinelPassword: "sentinel-pw-2"}},
		Logs:  config.Logs{URL: "postgres://u:pg-pass-9012@db/logs"},
		Providers: map[string]config.Provider{"a": {Kind: "azure", APIKey: "azure-key-3456", ClientSecret: "entra-secret-7890",
			Headers: map[string]string{"Authorization": "Bearer header-token-2222"}}},
		Console: config.Console{OIDC: []config.OIDC{{ClientSecret: "oidc-secret-1357"}}},
		Keys:    []config.Key{{Hash: strings.Repeat("ab", 32)}},
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-from-env-2468")
	sa := filepath.Join(t.TempDir(), "sa.json")
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
	doc, _ := json.Marshal(map[string]string{"type": "service_account", "private_key": pem})
	if err := os.WriteFile(sa, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Providers["b"] = config.Provider{Kind: "bedrock"}
	c.Providers["v"] = config.Provider{Kind: "vertex", CredentialsFile: sa}
	got := ownSecrets(c)
	for _, want := range []string{"aws-secret-from-env-2468", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "admin-token-1234", "redis-pass-5678", "sentinel-pw-1", "sentinel-pw-2", "pg-pass-9012",
		"azure-key-3456", "entra-secret-7890", "header-token-2222", "oidc-secret-1357"} {
		found := false
		for _, s := range got.Secrets {
			found = found || s == want
		}
		if !found {
			t.Errorf("%q missing from %q", want, got.Secrets)
		}
	}
	if len(got.KeyHashes) != 1 || got.KeyPrefix == "" {
		t.Errorf("got hashes %q, prefix %q; want the file key's hash and the key prefix", got.KeyHashes, got.KeyPrefix)
	}
}

// TestMaskedLogCleanLine: a line that holds no secret reaches the handler as it came, with
// no copy of the record: what the mask costs an access line is its scan (issue 51). The
// allocations are compared without the race detector only (make test runs with it; its
// instrumentation allocates too).
func TestMaskedLogCleanLine(t *testing.T) {
	rules, err := onlyOwn(ownSecrets(&config.Config{Auth: config.Auth{AdminToken: "admin-token-of-the-gateway-7"}}))
	if err != nil {
		t.Fatal(err)
	}
	line := func(log *slog.Logger) func() {
		return func() {
			log.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("id", "01a24d7283e3e1c3a26ae60a"),
				slog.String("path", "/v1/chat/completions"), slog.Int("status", 200), slog.String("model", "mock/text?len=200&chunk=10"),
				slog.String("key_id", "cfg_36e40e3794b62902"), slog.Float64("ms", 1.354), slog.String("trace_id", "8883dae3d7ee50007919f08d5532acab"))
		}
	}
	plain := slog.New(slog.NewJSONHandler(io.Discard, nil))
	want := testing.AllocsPerRun(200, line(plain))
	if got := testing.AllocsPerRun(200, line(masked(plain, rules.Redact))); got != want && !raceOn {
		t.Errorf("a clean line took %v allocations behind the mask, %v without", got, want)
	}
	var buf bytes.Buffer
	line(masked(slog.New(slog.NewJSONHandler(&buf, nil)), rules.Redact))()
	if !strings.Contains(buf.String(), `"trace_id":"8883dae3d7ee50007919f08d5532acab"`) {
		t.Errorf("the line lost a value: %s", buf.String())
	}
}

// TestMaskedAccessLine: the access line, written by hand under the gateway's handler
// (telemetry.NewHandler) or through slog's under any other, has the gateway's own secrets
// masked in each of its texts, in both formats (issue 47, issue 51).
func TestMaskedAccessLine(t *testing.T) {
	const tok = "admin-token-of-the-gateway-7"
	rules, err := onlyOwn(ownSecrets(&config.Config{Auth: config.Auth{AdminToken: tok}}))
	if err != nil {
		t.Fatal(err)
	}
	a := &telemetry.Access{ID: "req_1", Method: "POST", Path: "/v1/" + tok, Status: 200, Model: "m-" + tok,
		KeyName: tok, Cache: "x " + tok}
	for name, h := range map[string]func(io.Writer) slog.Handler{
		"json":   func(w io.Writer) slog.Handler { return telemetry.NewHandler(w, "json") },
		"text":   func(w io.Writer) slog.Handler { return telemetry.NewHandler(w, "text") },
		"slog's": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		"masked twice": func(w io.Writer) slog.Handler {
			inner := func(s string) string { return strings.ReplaceAll(s, "/v1/", "/v9/") }
			return masked(slog.New(telemetry.NewHandler(w, "json")), inner).Handler()
		},
	} {
		var buf bytes.Buffer
		telemetry.LogAccess(context.Background(), masked(slog.New(h(&buf)), rules.Redact), a)
		out := buf.String()
		if strings.Contains(out, tok) || strings.Count(out, "[REDACTED:secret]") != 4 || !strings.Contains(out, "req_1") {
			t.Errorf("%s: got %s, want the four texts masked and the rest kept", name, out)
		}
		if name == "masked twice" && !strings.Contains(out, "/v9/") {
			t.Errorf("%s: got %s, want the inner mask's too", name, out)
		}
	}
}
