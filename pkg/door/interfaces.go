package door

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// DecisionStore keeps reviewed tokens and authorization decisions durably
// (see package offline). Keys are opaque (hashes, never a token).
type DecisionStore = offline.Store

// PodLookup reports whether the pod namespace/name with uid is in the
// local pod cache and not being deleted (no deletionTimestamp).
type PodLookup func(namespace, name, uid string) bool

// User is an authenticated caller.
type User = caller.User

// requester is what the TLS door learnt about a request's sender.
type requester struct {
	user User
	// token is the bearer token the caller authenticated with; empty for
	// a client certificate.
	token string
	// node is true when user is this node (system:node:<name>).
	node bool
}

// Connected reports whether the cloud is reachable now.
type Connected func() bool
