package config

import (
	"reflect"
	"slices"
	"strings"
)

// Kind is a provider kind as the configuration knows it: its defaults, what it needs to be
// usable, and its own checks. The kinds are one table, kinds below, which resolve, the
// validator and prune read; the gateway's table (internal/gateway/kinds.go) holds how to
// build a provider of each, and a test there keeps the names of the two tables the same.
// The half that is data lives here, so that config imports no provider (DESIGN §11).
type Kind struct {
	Name string
	// BaseURL is the default base_url; "" leaves it empty (a kind that needs one says so in
	// Check).
	BaseURL string
	// APIs are the api values the kind takes, the first the default; nil: none, api must be
	// left out. APIWant describes them in the error for another value.
	APIs    []string
	APIWant string
	// NeedsKey: the kind cannot work without an api_key, and a provider without one is left
	// out of every chain with a warning, so that the embedded default runs without keys
	// (DESIGN §9). Lacks, when set, says what else a provider lacks to be usable ("": nothing),
	// with the same effect.
	NeedsKey bool
	Lacks    func(p Provider) string
	// Fields are the keys of a provider that apply to this kind only: set on a provider of
	// another kind, each is an error, so that a typo'd kind never silently drops a region.
	Fields []string
	// Check reports the kind's own problems through bad, key relative to the provider ("" for
	// the provider itself, "api", "base_url", ...). A base_url it finds no fault with is then
	// checked as an http(s) URL.
	Check func(p Provider, bad func(key, msg string))
	// Embeddings reports whether a provider of the kind serves the OpenAI embeddings
	// endpoint; nil: never.
	Embeddings func(p Provider) bool
	// Moderations, Images and Rerank report whether a provider of the kind serves OpenAI's
	// /moderations, /images/generations, and the Cohere/Jina /rerank (issue 48); nil: never.
	Moderations, Images, Rerank func(p Provider) bool
	// Audio reports whether a provider of the kind serves OpenAI's /audio/transcriptions and
	// /audio/speech (issue 48); nil: never.
	Audio func(p Provider) bool
	// ImageEdits reports whether a provider of the kind that serves Images serves OpenAI's
	// /images/edits too (the clouds: by inpainting); nil: never.
	ImageEdits func(p Provider) bool
	// NoChat: the kind serves its plain endpoints only (a reranker's API), and a chat
	// alias's target of it is an error.
	NoChat bool
}

// kinds is the table of provider kinds, in the order errors list them.
var kinds = []Kind{
	{Name: "openai", BaseURL: "https://api.openai.com/v1", APIs: chatAPIs, APIWant: chatWant, NeedsKey: true,
		Embeddings: always, Moderations: always, Images: always, ImageEdits: always, Audio: always},
	// A reranker (vLLM, Infinity, a Cohere or Jina compatible server) is one too: its base_url
	// is where its /rerank is.
	{Name: "openai-compatible", APIs: chatAPIs, APIWant: chatWant, Embeddings: always,
		Moderations: always, Images: always, ImageEdits: always, Rerank: always, Audio: always,
		Check: func(p Provider, bad func(key, msg string)) {
			if p.BaseURL == "" {
				bad("", "kind openai-compatible needs a base_url")
			}
		}},
	// No /v1: the Anthropic SDKs and docs append it to the path.
	{Name: "anthropic", BaseURL: "https://api.anthropic.com", NeedsKey: true},
	// The clouds serve rerank, embeddings, image generation and edits with their own APIs
	// (Bedrock's Rerank and InvokeModel, Vertex AI's ranking API and predict).
	{Name: "bedrock", Fields: []string{"region", "profile", "imds", "cache_points"}, Rerank: always, Embeddings: always, Images: always,
		ImageEdits: always,
		Check: func(p Provider, bad func(key, msg string)) {
			if p.Region == "" {
				bad("", "kind bedrock needs a region (us-east-1, ...)")
			}
		}},
	{Name: "gemini", BaseURL: "https://generativelanguage.googleapis.com/v1beta", NeedsKey: true},
	{Name: "vertex", Fields: []string{"project", "location", "credentials_file", "metadata"}, Rerank: always, Embeddings: always, Images: always,
		ImageEdits: always,
		Check: func(p Provider, bad func(key, msg string)) {
			switch {
			case p.Project == "" || p.Location == "":
				bad("", "kind vertex needs a project and a location (us-central1, global, ...)")
			case p.APIKey != "":
				bad("api_key", "kind vertex authenticates with Google credentials (credentials_file, or Application Default Credentials), not an api_key")
			}
		}},
	{Name: "azure", APIs: chatAPIs, APIWant: chatWant,
		Fields: []string{"deployments", "api_version", "entra_token", "tenant_id", "client_id", "client_secret"},
		Lacks: func(p Provider) string {
			if p.APIKey == "" && p.EntraToken == "" && p.ClientSecret == "" {
				// ${AZURE_OPENAI_API_KEY} and friends unset: as for a missing api_key.
				return "no api_key, entra_token or client_secret"
			}
			return ""
		},
		Check: func(p Provider, bad func(key, msg string)) {
			switch {
			case p.BaseURL == "":
				bad("", "kind azure needs a base_url, the resource's endpoint (https://{resource}.openai.azure.com)")
			case p.Deployments && p.API == "responses":
				bad("api", "responses is served by the v1 API only, not with deployments: true")
			case (p.TenantID != "" || p.ClientID != "" || p.ClientSecret != "") && (p.TenantID == "" || p.ClientID == ""):
				bad("", "kind azure: client credentials need tenant_id, client_id and client_secret")
			}
		}},
	{Name: "sim", APIs: []string{"", "chat", "responses", "anthropic"},
		APIWant: "chat, responses or anthropic (the wire the simulation speaks)",
		// A simulation speaking anthropic has no embeddings endpoint.
		Embeddings: notAnthropic, Moderations: notAnthropic, Images: notAnthropic, ImageEdits: notAnthropic,
		Rerank: notAnthropic, Audio: notAnthropic,
		Check: func(p Provider, bad func(key, msg string)) {
			if p.BaseURL != "" {
				bad("base_url", "kind sim has no base_url")
			}
		}},
	// The APIs of rerankers and embedders, which serve no chat (issue 48); their wires are
	// the routes of provider/cohere, provider/jina and provider/voyage.
	{Name: "cohere", BaseURL: "https://api.cohere.com", NeedsKey: true, NoChat: true, Rerank: always, Embeddings: always},
	{Name: "jina", BaseURL: "https://api.jina.ai/v1", NeedsKey: true, NoChat: true, Rerank: always},
	{Name: "voyage", BaseURL: "https://api.voyageai.com/v1", NeedsKey: true, NoChat: true, Rerank: always, Embeddings: always},
}

var (
	chatAPIs = []string{"chat", "responses"}
	chatWant = "chat or responses"
)

func always(Provider) bool { return true }

func notAnthropic(p Provider) bool { return p.API != "anthropic" }

// noAPI is the error for an api set on a kind that takes none. Its words predate the azure
// kind (which takes one too) and are pinned by tests and operators' scripts: kept as written.
const noAPI = "applies to kinds openai, openai-compatible and sim only"

// noEmbeddings is the error for an embeddings target whose provider serves none.
const noEmbeddings = "(want kind openai, openai-compatible, bedrock, vertex, cohere, voyage, or sim not speaking anthropic)"

// KindNames returns the provider kinds' names, in the table's order.
func KindNames() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return names
}

// kindOf is the table's entry for name.
func kindOf(name string) (Kind, bool) {
	i := slices.IndexFunc(kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return kinds[i], true
}

// kindList names the provider kinds, for errors: "openai, ..., sim, cohere, jina or voyage".
func kindList() string {
	names := KindNames()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// providerFields maps a provider's YAML keys to the index of their field, for Kind.Fields.
var providerFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Provider]()
	for i := range t.NumField() {
		if key, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); key != "" {
			m[key] = i
		}
	}
	return m
}()

// isSet reports whether the provider's field of YAML key is set (not its zero value).
func isSet(p Provider, key string) bool {
	i, ok := providerFields[key]
	if !ok {
		panic("config: Kind.Fields names " + key + ", not a key of a provider") // TestKindFields rules it out
	}
	return !reflect.ValueOf(p).Field(i).IsZero()
}

// unusable says what p lacks to be usable, "" when nothing: prune leaves it out of every
// chain.
func (k Kind) unusable(p Provider) string {
	if k.NeedsKey && p.APIKey == "" {
		return "an empty api_key"
	}
	if k.Lacks != nil {
		return k.Lacks(p)
	}
	return ""
}
