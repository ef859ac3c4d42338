package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// The gateway's own secrets (issue 47): what it holds to be reached and to reach others,
// masked in every text it keeps or shows (captured content, the stream, error texts, its
// log lines and the audit log) whatever their shape and whatever redaction.detectors says.
// The values flow from here into internal/redact, which only matches them (DESIGN §11).

// ownSecrets is what the rules take of the gateway's own secrets.
func ownSecrets(c *config.Config) redact.Config {
	vals := append([]string{c.Auth.AdminToken}, c.Credentials()...) // providers' and OIDC's
	for _, u := range []string{c.Redis.URL, c.Logs.URL} {
		vals = append(vals, urlSecrets(u)...)
	}
	if r := c.Redis.Cluster; r != nil {
		vals = append(vals, r.Password)
	}
	if r := c.Redis.Sentinel; r != nil {
		vals = append(vals, r.Password, r.SentinelPassword)
	}
	vals = append(vals, envSecrets(c)...)
	out := redact.Config{KeyPrefix: auth.Prefix} // minted keys and personal tokens, on any replica
	for _, v := range vals {
		// A header's value may carry its scheme ("Bearer tok"): the credential alone too.
		if scheme, rest, ok := strings.Cut(v, " "); ok && !strings.ContainsAny(scheme, ":=") && len(rest) >= redact.MinSecret {
			out.Secrets = append(out.Secrets, rest)
		}
		if len(v) >= redact.MinSecret {
			out.Secrets = append(out.Secrets, v)
		}
	}
	for _, k := range c.Keys { // the file's keys, known by their hashes only
		out.KeyHashes = append(out.KeyHashes, k.Hash)
	}
	return out
}

// urlSecrets are the password and the query values of a connection URL.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return nil
	}
	var out []string
	if pw, ok := u.User.Password(); ok {
		out = append(out, pw)
	}
	for k, vs := range u.Query() {
		if strings.Contains(strings.ToLower(k), "pass") || strings.Contains(strings.ToLower(k), "secret") {
			out = append(out, vs...)
		}
	}
	return out
}

// envSecrets are the cloud credentials the providers take from the environment and from
// files rather than from the configuration: the AWS secret key and session token of the
// default chain, and the private key (each line of it too) and secrets of a Google
// service-account or ADC file.
func envSecrets(c *config.Config) []string {
	var out []string
	files := map[string]bool{}
	for _, p := range c.Providers {
		switch p.Kind {
		case "bedrock":
			out = append(out, os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
		case "vertex":
			f := p.CredentialsFile
			if f == "" {
				f = os.Getenv("GOOGLE_APPLICATION_CREDENTIALS")
			}
			if f != "" {
				files[f] = true
			}
		}
	}
	for f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the provider reports its own failure
		}
		var sa struct {
			PrivateKey   string `json:"private_key"`
			ClientSecret string `json:"client_secret"`
			RefreshToken string `json:"refresh_token"`
		}
		if json.Unmarshal(b, &sa) != nil {
			continue
		}
		out = append(out, sa.PrivateKey, sa.ClientSecret, sa.RefreshToken)
		for _, line := range strings.Split(sa.PrivateKey, "\n") {
			if !strings.HasPrefix(line, "-----") {
				out = append(out, strings.TrimSpace(line))
			}
		}
	}
	return out
}

// onlyOwn are the rules of the gateway's own secrets alone, every built-in detector off:
// for its log lines and audit entries, where the rest would blur ids and hashes.
func onlyOwn(own redact.Config) (*redact.Rules, error) {
	own.Detectors = map[string]bool{}
	for _, n := range redact.DetectorNames() {
		own.Detectors[n] = false
	}
	return redact.Compile(own)
}

// withOwn adds the gateway's own secrets to rules of the configuration.
func withOwn(rc, own redact.Config) redact.Config {
	rc.Secrets, rc.KeyHashes, rc.KeyPrefix = own.Secrets, own.KeyHashes, own.KeyPrefix
	return rc
}

// maskHandler masks the gateway's own secrets in every message and attribute of a log line.
type maskHandler struct {
	h    slog.Handler
	mask func(string) string
}

func masked(log *slog.Logger, mask func(string) string) *slog.Logger {
	short := func(s string) string {
		if len(s) < redact.MinSecret { // most values of a line: no secret fits
			return s
		}
		return mask(s)
	}
	return slog.New(maskHandler{log.Handler(), short})
}

func (m maskHandler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m maskHandler) Handle(ctx context.Context, r slog.Record) error {
	// Most lines hold no secret: they go on as they are, without a copy of the record (an
	// access line on every request, issue 51).
	msg := m.mask(r.Message)
	changed := msg != r.Message
	r.Attrs(func(a slog.Attr) bool {
		_, changed = m.attr(a)
		return !changed
	})
	if !changed {
		return m.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	as := make([]slog.Attr, 0, r.NumAttrs()) // added at once: the record grows once
	r.Attrs(func(a slog.Attr) bool {
		a, _ = m.attr(a)
		as = append(as, a)
		return true
	})
	out.AddAttrs(as...)
	return m.h.Handle(ctx, out)
}

var _ telemetry.AccessHandler = maskHandler{}

// HandleAccess has the handler below write the access line with the gateway's secrets
// masked in its texts (and mask's, a masking handler's above), when it can; else the line
// goes through Handle as any other.
func (m maskHandler) HandleAccess(ctx context.Context, level slog.Level, a *telemetry.Access, mask func(string) string) error {
	own := m.mask
	if mask != nil {
		own = func(s string) string { return mask(m.mask(s)) }
	}
	if h, ok := m.h.(telemetry.AccessHandler); ok {
		return h.HandleAccess(ctx, level, a, own)
	}
	return maskHandler{m.h, own}.Handle(ctx, telemetry.AccessRecord(ctx, level, a))
}

func (m maskHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i], _ = m.attr(a)
	}
	return maskHandler{m.h.WithAttrs(out), m.mask}
}

func (m maskHandler) WithGroup(name string) slog.Handler {
	return maskHandler{m.h.WithGroup(name), m.mask}
}

// attr masks a string, an error, a Stringer or any value whose text holds a secret, and
// says whether it masked anything; a value whose text holds none is kept as it is.
func (m maskHandler) attr(a slog.Attr) (slog.Attr, bool) {
	v := a.Value.Resolve()
	changed := false
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		ms := m.mask(s)
		a.Value, changed = slog.StringValue(ms), ms != s
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, x := range g {
			var c bool
			out[i], c = m.attr(x)
			changed = changed || c
		}
		a.Value = slog.GroupValue(out...)
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprint(x)
		}
		if ms := m.mask(s); ms != s {
			a.Value, changed = slog.StringValue(ms), true
		} else {
			a.Value = v
		}
	default:
		a.Value = v
	}
	return a, changed
}

// maskedAudit masks the gateway's own secrets in every audit entry it stores.
type maskedAudit struct {
	logstore.AuditStore
	rules *redact.Rules
}

// Unwrap is the store m writes to, for GET /admin/audit's "store".
func (m maskedAudit) Unwrap() logstore.AuditStore { return m.AuditStore }

func (m maskedAudit) WriteAudit(ctx context.Context, e logstore.AuditEntry) error {
	r := m.rules
	e.User, e.Action, e.ResourceID = r.Redact(e.User), r.Redact(e.Action), r.Redact(e.ResourceID)
	for _, j := range []*json.RawMessage{&e.Before, &e.After} {
		if len(*j) > 0 {
			*j = json.RawMessage(r.RedactJSON(string(*j)))
		}
	}
	return m.AuditStore.WriteAudit(ctx, e)
}
