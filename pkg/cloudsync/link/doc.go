// Package link decides whether the cloud is reachable, and owns the
// cloud's connections: their transport, their liveness, and the pace of
// retries against it. It imports nothing of the project's stores.
//
// One Link per cloud alone decides whether it is up. While it is up the
// cloud's connections are the liveness signal: their HTTP/2 PINGs (sent
// after 11 s without a frame, past a kubelet's Lease renewal period, so a
// connection carrying its renewals sends none; the connection closed
// after 3 s more without an answer), watch events and bookmarks; the Link
// probes (GET /version with a short timeout) only when a connection
// closes or all were silent for the watch progress timeout. A probe
// without an answer, while no connection read a byte, closes every
// connection, so the next request dials anew; one that timed out while
// bytes arrived is a slow cloud, and counts as an answer (a completed dial
// is not a read). A connection closed for an unanswered PING while no
// connection read a byte is such a probe: the link is reported down at
// once, then probed. While it is down it
// probes every few seconds, jittered. Failures are retried with
// jittered exponential backoff (wait.Backoff, at most 10 s jitter
// included), cut short when the Link sees the cloud come back. When the
// probes have failed for longer than the watch progress timeout, every
// cloud watch is treated as dead (ErrDead) and re-established once the
// link works. HTTP/2 PINGs on the cloud transport end watches on
// half-open connections, and its dials give up after 5 s. The daemon's
// clients of the cloud share that transport, so a node holds one
// connection to the cloud, as a kubelet does: the transport is kept for
// the daemon's life (client-go's cache holds it weakly), and while it has
// no connection one request at a time dials, the others waiting until it
// has one, so a start's concurrent first requests cost the cloud one TLS
// handshake, not one each (firstconn.go). Clients without the node's
// client certificate (bearer tokens) get a transport, and a connection,
// of their own: the cloud authenticates a client certificate before a
// token.
//
// The Link also bounds the full relists in flight (AcquireRelist) and
// tells every syncer when one found the cloud's history behind the stored
// one (ReportRegressed), so all of them relist. It shares the readings of
// the cloud's resourceVersion among the syncers whose check is due
// (CloudRV): one reading begun after a syncer's check became due answers
// it.
package link
