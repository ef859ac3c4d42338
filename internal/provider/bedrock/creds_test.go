package bedrock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
)

// TestLoadCredentials: the sources the default chain would use are seen without calling
// anything; with none, the provider is left out, and instance metadata counts only when
// asked for. The metadata endpoint is only called by a Retrieve, never by the load.
func TestLoadCredentials(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		files   map[string]string
		profile string
		imds    bool
		source  string // "" wants ErrNoCredentials
		wantErr bool
	}{
		{name: "nothing"},
		{name: "environment", env: map[string]string{"AWS_ACCESS_KEY_ID": testAKID, "AWS_SECRET_ACCESS_KEY": testSecret}, source: "environment"},
		{name: "web identity", env: map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}, source: "web identity"},
		{name: "container", env: map[string]string{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x"}, source: "container"},
		{name: "shared credentials", files: map[string]string{"credentials": "[default]\naws_access_key_id = " + testAKID + "\naws_secret_access_key = " + testSecret + "\n"}, source: "profile default"},
		{name: "named profile", profile: "team", files: map[string]string{"config": "[profile team]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Environment\n"}, source: "profile team"},
		{name: "missing profile", profile: "nope", wantErr: true},
		{name: "instance metadata asked for", imds: true, source: "instance metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			hits := bedrocktest.CleanEnv(t, dir)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			for f, body := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			creds, src, err := LoadCredentials(context.Background(), testRegion, tt.profile, tt.imds)
			switch {
			case tt.wantErr:
				if err == nil || errors.Is(err, ErrNoCredentials) {
					t.Fatalf("got %v, want the SDK's error for a missing profile", err)
				}
			case tt.source == "":
				if !errors.Is(err, ErrNoCredentials) {
					t.Fatalf("got %v, %q, want ErrNoCredentials", err, src)
				}
			case err != nil || src != tt.source || creds == nil:
				t.Fatalf("got %v, %q, want source %q", err, src, tt.source)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the load called the instance metadata service %d times, want none", n)
			}
			if tt.imds {
				// The check above can fail: a Retrieve does call the endpoint.
				if _, err := creds.Retrieve(context.Background()); err == nil || hits.Load() == 0 {
					t.Errorf("Retrieve: %v after %d metadata calls, want a failure after calling it", err, hits.Load())
				}
			}
		})
	}
}
