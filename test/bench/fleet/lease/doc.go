// Package lease is a fleet node's Lease renewals, as its kubelet makes
// them, and their failures: each counted in the phase the run was in when
// it failed (Failures), the first of each phase kept with its cause, named
// the same way on every node (Cause) so that one fault reads as one cause
// across the fleet.
//
// Both sides renew through Renew: the apiserver-lite side through each
// node's door, the direct side in each direct node's process (package
// direct), which names its failures' causes itself and hands them over as
// text.
package lease
