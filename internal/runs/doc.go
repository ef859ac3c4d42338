// Package runs owns frontend runs (DESIGN §8): a run is a loop of rounds on the target the
// fallback chain committed to, encoded as the AI SDK UI message stream, whose frames go to a
// log that any replica can replay and tail. It decides when a round restarts on the next
// target, when a run ends and how (finish, error, abort), who may resume or stop a run, and
// how long its frames are kept.
//
// A run does not belong to the connection that started it: it runs in a goroutine of the
// Manager, and closing the connection does not stop it. Its frames are appended to the Store
// in batches (every FlushInterval, never a round trip per token), and the running replica
// renews an owner lease with each write; a run whose lease lapses is ended with an error by
// the first replica that notices, so no reader waits forever. Each replica keeps, per run it
// serves, one window of recent frames that its connections read with their own cursors:
// one reader of the Store per run per replica, and a slow connection slows only itself.
package runs
