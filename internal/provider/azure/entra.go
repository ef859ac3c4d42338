package azure

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// entraScope is the scope of Azure OpenAI data-plane tokens.
const entraScope = "https://cognitiveservices.azure.com/.default"

// EntraTokenURL is the Microsoft Entra ID token endpoint of tenant.
func EntraTokenURL(tenant string) string {
	return "https://login.microsoftonline.com/" + tenant + "/oauth2/v2.0/token"
}

// ClientCredentials returns the token function of an app registration's client-credentials
// grant at tokenURL (EntraTokenURL): oauth2 gets the first token at the first call, caches
// it and gets the next one before it expires. Nothing is fetched here.
func ClientCredentials(tokenURL, clientID, secret string) func(context.Context) (string, error) {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient,
		&http.Client{Timeout: 15 * time.Second, Transport: transport.HTTPClient.Transport})
	ts := (&clientcredentials.Config{ClientID: clientID, ClientSecret: secret, TokenURL: tokenURL,
		Scopes: []string{entraScope}, AuthStyle: oauth2.AuthStyleInParams}).TokenSource(ctx)
	return func(context.Context) (string, error) {
		t, err := ts.Token()
		if err != nil {
			return "", err
		}
		return t.AccessToken, nil
	}
}

// StaticToken is the token function of an access token given as it is (from the
// environment: AZURE_OPENAI_AD_TOKEN, az account get-access-token).
func StaticToken(tok string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return tok, nil }
}
