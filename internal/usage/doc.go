// Package usage decides what a call cost and keeps the account: the price of a model (a
// built-in table for common OpenAI and Anthropic models, overridden by the configuration),
// the cost of a usage report in nano-USD, the counters recorded per key, alias, served
// target and UTC day (Store; Memory here, Redis in package redisstore), the report
// GET /admin/usage answers with (Report), and the keys' spending budgets (Budgets),
// reserved before a call and settled with the real cost after it.
//
// Money is counted in integer nano-USD (1e-9 USD): sums are exact whatever the order, and an
// int64 holds 9 billion USD. Days and months are UTC.
package usage
