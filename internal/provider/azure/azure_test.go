package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "azure-key-SECRET-0123456789"

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// resource is an httptest Azure OpenAI resource: the v1 API (/openai/v1/chat/completions,
// the model in the body) and deployment URLs (/openai/deployments/{d}/chat/completions with
// api-version). It refuses a call without the api-key or the bearer token (401, as Azure
// does) and answers with body.
func resource(t *testing.T, bearer string, body func(r *http.Request, model string) (int, string)) *providertest.Upstream {
	t.Helper()
	var u *providertest.Upstream
	u = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _, _ := u.Last()
		var req struct {
			Model string `json:"model"`
		}
		json.Unmarshal(b, &req)
		authed := r.Header.Get("Api-Key") == testKey || bearer != "" && r.Header.Get("Authorization") == "Bearer "+bearer
		if !authed {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`)
			return
		}
		model := req.Model
		switch {
		case r.URL.Path == "/openai/v1/chat/completions" && r.URL.Query().Get("api-version") == "":
		case strings.HasPrefix(r.URL.Path, "/openai/deployments/") && strings.HasSuffix(r.URL.Path, "/chat/completions") && r.URL.Query().Get("api-version") == DefaultAPIVersion:
			model = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/openai/deployments/"), "/chat/completions")
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"code":"404","message":"Resource not found"}}`)
			return
		}
		status, out := body(r, model)
		if status != 200 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, out)
			return
		}
		providertest.SSE(out)(w, r)
	})
	return u
}

func chatRequest(model string) *llm.Request {
	return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}}}
}

func drain(t *testing.T, c *Client, model string) (*llm.Response, error) {
	t.Helper()
	s, err := c.Stream(context.Background(), chatRequest(model))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	if end != io.EOF {
		return providertest.Assemble(evs), end
	}
	return providertest.Assemble(evs), nil
}

// TestURLs: the v1 API with the model in the body, and deployment URLs with the model as the
// deployment and api-version, both with the api-key header and no Authorization.
func TestURLs(t *testing.T) {
	var models []string
	u := resource(t, "", func(r *http.Request, model string) (int, string) {
		models = append(models, model)
		if r.Header.Get("Authorization") != "" {
			return 400, `{"error":{"code":"unexpected_auth","message":"both credentials"}}`
		}
		return 200, fixture(t, "azure-chat-filtered-results.sse")
	})
	for _, deployments := range []bool{false, true} {
		c := New(Config{Endpoint: u.URL + "/", APIKey: testKey, Deployments: deployments})
		r, err := drain(t, c, "gpt-4o-prod")
		if err != nil {
			t.Fatalf("deployments %v: %v", deployments, err)
		}
		ch := r.Choices[0]
		if ch.Text != "Hello there" || ch.Finish != "stop" || r.Usage.TotalTokens != 11 || r.Model != "gpt-4o-prod" {
			t.Errorf("deployments %v: got %+v usage %+v model %q", deployments, ch, r.Usage, r.Model)
		}
	}
	if len(models) != 2 || models[0] != "gpt-4o-prod" || models[1] != "gpt-4o-prod" {
		t.Errorf("models %q", models)
	}
	// A trailing /openai/v1 in the endpoint is the same resource.
	if _, err := drain(t, New(Config{Endpoint: u.URL + "/openai/v1", APIKey: testKey}), "m"); err != nil {
		t.Errorf("endpoint with /openai/v1: %v", err)
	}
}

// TestContentFilter: a completion the filter stops ends with finish content_filter; a
// prompt the filter refuses (400 content_filter) is Refused, with its status, code and
// message, and is not a configuration or an upstream failure.
func TestContentFilter(t *testing.T) {
	u := resource(t, "", func(r *http.Request, model string) (int, string) {
		if model == "blocked" {
			return 400, `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":true,"detected":true},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}}}`
		}
		return 200, fixture(t, "azure-chat-content-filter.sse")
	})
	c := New(Config{Endpoint: u.URL, APIKey: testKey})
	r, err := drain(t, c, "gpt-4o")
	if err != nil || r.Choices[0].Finish != "content_filter" || r.Choices[0].Text != "The battle" {
		t.Fatalf("got %+v, %v; want the text then finish content_filter", r, err)
	}
	_, err = drain(t, c, "blocked")
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.Refused || le.Status != 400 || le.Code != "content_filter" ||
		llm.HTTPStatus(err) != 400 || llm.Retryable(le.Kind) || !strings.Contains(le.Message, "content management policy") {
		t.Fatalf("got %+v, want Refused 400 content_filter, not retried", le)
	}
}

// TestEntraClientCredentials: an app registration's client-credentials grant against a
// loopback token endpoint: the token is fetched once, cached, sent as a bearer token with no
// api-key; a token endpoint that refuses is Auth and nothing reaches the resource.
func TestEntraClientCredentials(t *testing.T) {
	var tokenCalls atomic.Int32
	var refuse atomic.Bool
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenCalls.Add(1)
		r.ParseForm()
		f := r.PostForm
		w.Header().Set("Content-Type", "application/json")
		if refuse.Load() || f.Get("grant_type") != "client_credentials" || f.Get("client_id") != "app-1" ||
			f.Get("client_secret") != "client-SECRET" || f.Get("scope") != entraScope {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)
			return
		}
		io.WriteString(w, `{"token_type":"Bearer","expires_in":3599,"access_token":"eyJ0eXAiOi.entra-token"}`)
	}))
	defer tokens.Close()
	var calls atomic.Int32
	u := resource(t, "eyJ0eXAiOi.entra-token", func(r *http.Request, model string) (int, string) {
		calls.Add(1)
		if r.Header.Get("Api-Key") != "" {
			return 400, `{"error":{"code":"x","message":"api-key sent"}}`
		}
		return 200, fixture(t, "azure-chat-filtered-results.sse")
	})
	c := New(Config{Endpoint: u.URL, Token: ClientCredentials(tokens.URL+"/tenant/oauth2/v2.0/token", "app-1", "client-SECRET")})
	for range 2 {
		if _, err := drain(t, c, "gpt-4o"); err != nil {
			t.Fatal(err)
		}
	}
	if tokenCalls.Load() != 1 || calls.Load() != 2 {
		t.Errorf("token calls %d, resource calls %d; want 1 and 2", tokenCalls.Load(), calls.Load())
	}
	refuse.Store(true)
	c = New(Config{Endpoint: u.URL, Token: ClientCredentials(tokens.URL+"/t/oauth2/v2.0/token", "app-1", "client-SECRET")})
	_, err := drain(t, c, "gpt-4o")
	if llm.KindOf(err) != llm.Auth || calls.Load() != 2 || strings.Contains(fmt.Sprint(err), "client-SECRET") {
		t.Errorf("got %v after %d resource calls, want Auth and no call", err, calls.Load())
	}
}

// TestStaticTokenMasked: an access token from the environment is sent as a bearer token and
// never shows in an error, even where the upstream quotes the request's headers.
func TestStaticTokenMasked(t *testing.T) {
	const tok = "eyJhbGciOi.static-SECRET"
	u := resource(t, tok, func(r *http.Request, model string) (int, string) {
		return 400, `{"error":{"code":"invalid","message":"header Authorization: ` + r.Header.Get("Authorization") + ` not allowed here"}}`
	})
	_, err := drain(t, New(Config{Endpoint: u.URL, Token: StaticToken(tok)}), "gpt-4o")
	if llm.KindOf(err) != llm.Invalid || strings.Contains(err.Error(), tok) || !strings.Contains(err.Error(), "Bearer [MASKED]") {
		t.Errorf("got %v, want Invalid with the token masked", err)
	}
}

// TestFaults: the openai adapter's handling of Azure's answers: a 401 is Auth, a 429 with
// retry-after RateLimited, an error chunk before content and a cut stream fall back.
func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   llm.Kind
	}{
		{"wrong key", 0, "", llm.Auth},
		{"rate limit", 429, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded call rate limit. Please retry after 2 seconds."}}`, llm.RateLimited},
		{"error before content", 200, "data: {\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error while processing your request.\"}}\n\ndata: [DONE]\n\n", llm.Unavailable},
		{"cut", 200, "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"},\"index\":0}],\"id\":\"c\",\"object\":\"chat.completion.chunk\"}\n\ndata: {\"choi", llm.Truncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := resource(t, "", func(r *http.Request, model string) (int, string) { return tt.status, tt.body })
			key := testKey
			if tt.status == 0 {
				key = "wrong"
			}
			_, err := drain(t, New(Config{Endpoint: u.URL, APIKey: key, Scrub: providertest.Scrub(key)}), "gpt-4o")
			if llm.KindOf(err) != tt.kind {
				t.Errorf("got %v (%v), want %v", err, llm.KindOf(err), tt.kind)
			}
		})
	}
}
