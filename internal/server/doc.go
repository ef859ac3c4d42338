// Package server is the gateway's HTTP edge: routing (echo), request decoding and validation,
// the client-facing wire formats, and the mapping of every error to an OpenAI-format answer.
// It decides what the client sees; which target serves is the fallback package's decision.
package server
