// Package cache decides which answers the gateway may give again without calling a provider
// (issue 24): the key of a request as its alias sees it, whether the request may be cached at
// all, what of a round is kept (the events the client's sink received, after redaction and
// output guardrails, and the complete response with its usage), and where it is kept (a
// bounded in-memory LRU, or a Store shared by every replica, redisstore's). A store that
// fails is a miss, never an error: the cache can only save a provider call, not cost one.
//
// The package knows no HTTP and no wire: it decorates the client of a request's round
// (turn.Keeper: record, lead, store), and replays an Entry's events into the request's
// turn.Wire through its turn.Edge, so a hit is encoded by the same code as a live answer.
package cache
