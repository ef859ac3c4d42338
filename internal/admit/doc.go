// Package admit is what a virtual key may spend (DESIGN §6): its rate limits, reserved before
// a call and reconciled with the real usage after it, its budget, reserved at the estimated
// cost and settled with the real one, the same checks for each later round of a frontend
// run, and the wording of every refusal. It knows keys, limits and prices, not HTTP: the edge
// turns its answers into headers and bodies.
package admit
