package gemini

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// vertexScope is the OAuth scope of Vertex AI calls.
const vertexScope = "https://www.googleapis.com/auth/cloud-platform"

// ErrNoCredentials is VertexCredentials' answer when no Google credentials are visible
// without the network: the gateway leaves the provider out with a warning.
var ErrNoCredentials = errors.New("no Google credentials: no credentials_file, GOOGLE_APPLICATION_CREDENTIALS or gcloud application default credentials")

// tokenTimeout bounds one call of the token endpoint (Token has no context of its own).
const tokenTimeout = 15 * time.Second

// VertexCredentials returns the token function of Vertex calls and where its credentials
// come from: file (a service-account key, an authorized user, or an external account for
// workload identity federation), else Application Default Credentials found without the
// network (GOOGLE_APPLICATION_CREDENTIALS, gcloud's well-known file), else, only when
// metadata is set, the metadata server of the instance it runs on (which cannot be seen
// without calling it). Nothing is fetched here: oauth2 gets the first token at the first
// call, caches it and gets the next one before it expires. None of them is ErrNoCredentials.
func VertexCredentials(file string, metadata bool) (func(context.Context) (string, error), string, error) {
	// The token calls use the gateway's dialer and pool, bounded as a whole.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient,
		&http.Client{Timeout: tokenTimeout, Transport: transport.HTTPClient.Transport})
	params := google.CredentialsParams{Scopes: []string{vertexScope}}
	var ts oauth2.TokenSource
	var src string
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, "", err
		}
		creds, err := google.CredentialsFromJSONWithParams(ctx, b, params)
		if err != nil {
			return nil, "", err
		}
		ts, src = creds.TokenSource, "credentials_file"
	case adcVisible():
		creds, err := google.FindDefaultCredentialsWithParams(ctx, params)
		if err != nil {
			return nil, "", err
		}
		ts, src = creds.TokenSource, "application default credentials"
	case metadata:
		ts, src = google.ComputeTokenSource("", vertexScope), "metadata server"
	default:
		return nil, "", ErrNoCredentials
	}
	return func(context.Context) (string, error) {
		t, err := ts.Token()
		if err != nil {
			return "", err
		}
		return t.AccessToken, nil
	}, src, nil
}

// adcVisible reports whether Application Default Credentials have a file source:
// FindDefaultCredentials would otherwise ask the metadata server, over the network.
func adcVisible() bool {
	if os.Getenv("GOOGLE_APPLICATION_CREDENTIALS") != "" {
		return true
	}
	dir := os.Getenv("CLOUDSDK_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return false
		}
		dir = filepath.Join(home, ".config", "gcloud")
	}
	_, err := os.Stat(filepath.Join(dir, "application_default_credentials.json"))
	return err == nil
}
