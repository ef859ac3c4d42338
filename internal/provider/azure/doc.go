// Package azure is the adapter for Azure OpenAI: the openai adapter (Chat Completions, or
// Responses on the v1 API), configured for a resource. It decides the URLs (the v1 API,
// {endpoint}/openai/v1, the model in the body; or deployment URLs,
// {endpoint}/openai/deployments/{model}, with api-version), the credentials (the api-key
// header, or a Microsoft Entra ID bearer token per call: one from the environment, or an app
// registration's client-credentials grant, cached and refreshed by golang.org/x/oauth2), and
// what Azure's content filtering means for the chain.
//
// Everything else is the openai adapter's (its translation tables hold): Azure speaks
// OpenAI's wire. It is wrapped, not changed: headers, query and a transport that sets the
// token go in through openai.Config.
//
// # Content filtering
//
//	| Azure                                                        | gateway                                                  |
//	|--------------------------------------------------------------|----------------------------------------------------------|
//	| a first chunk with choices: [] and prompt_filter_results     | preamble (EvStart, named after the target's model, since that chunk's id and model are empty) |
//	| content_filter_results on choices                            | ignored: the text is what passed                          |
//	| finish_reason content_filter (the completion was filtered)   | EvDone {Finish: content_filter}: the answer ends as filtered, a refusal for the client |
//	| HTTP 400 code content_filter (the prompt tripped the filter, innererror ResponsibleAIPolicyViolation) | Refused *llm.Error, status 400, code content_filter, Azure's message: the provider's guardrail; the chain does not route the prompt around it |
//	| 401 / 403, 429, 5xx, errors and cuts inside the stream       | as for OpenAI: Auth, RateLimited, Unavailable, Truncated   |
//
// A token that cannot be had is the target's Auth failure, and nothing is sent. Tokens never
// show in errors: what follows "Bearer " in the upstream's text is masked.
package azure
