// Package pool is what the members of a pool (nodes of one site sharing
// an uplink) share: the election of the pool's leader through a Lease in
// the cloud, and who that leader is.
//
// Invariants:
//   - The election runs on client-go's tools/leaderelection with a
//     LeaseLock, with durations pinned here (LeaseDuration, RenewDeadline,
//     RetryPeriod), never configured: their request cost is documented in
//     docs/pool.md.
//   - It runs on a token the node mints for the pool service account's
//     pod on the node (PodFinder, Tokens), never on node credentials,
//     which NodeRestriction refuses for any Lease but the node's own.
//   - The holder identity names the leader's node and its pool door
//     (Holder); a follower trusts the address only as far as the door's
//     certificate confirms it (docs/pool.md).
//   - Nothing here is needed offline: with the cloud away there is no
//     leader and every member serves what it holds.
//   - Every timer is the injected clock's but client-go's own election
//     loop, which takes no clock.
//
// NewElection and NewMemberFollower (member.go) build a member's election
// and follower from its settings; the node's TokenRequest and transport
// come in as functions, so it reaches neither listwatch, door nor
// holding, and none of them reaches it: holding/forpods (pool.go) gives
// it the node's and reads the holdings for pods from the leader, and cmd
// wires it. RunnerOf and NodeOf are the election's Run and the upstream
// of the node's own syncs, nil without a pool.
package pool
