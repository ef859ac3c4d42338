// Package batch is the gateway's own host of files and batches (issue 48) for the aliases
// whose targets have no batch API (openai-compatible, sim): an llm.ObjectHost that answers
// OpenAI's /files and /batches exactly as OpenAI would, and a Runner that, on every replica,
// claims the lines of the batches in progress and runs each through the gateway's own HTTP
// handler as a request of the batch's key, so that fallback, redaction, guardrails, the
// key's limits and budget, usage and the request log apply to each line as to a live
// request.
//
// Everything lives in a Store every replica reads (Redis through package redisstore, or
// Memory for one process): files in chunks, streamed in and out, never held whole; the
// batches' records, the claim of their parts (a lease: a killed replica's part is taken
// over when its lease ends) and each line's result, written once (add if absent), so every
// line is answered once whichever replica ran it.
package batch
