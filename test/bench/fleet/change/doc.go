// Package change times, at the wire, the change a fleet-wide daemon
// restart is measured by: each node's new secret, configmap and pod,
// created during the restart. A client wrapped with Wrap notes, for each
// request whose context carries a *Timing (WithTiming), when it left
// after the rate limiter, when its answer came, how many attempts
// client-go made and which API Priority and Fairness level handled it;
// Summarize reads the nodes' timings against the first SIGTERM.
//
// A Timing is written by one goroutine at a time (client-go makes one
// request's attempts one after another, and a node's creates in order)
// and read once its creates have returned.
package change
