package door

// The key prefixes of what the TLS door keeps in its DecisionStore, for
// the daemon to encrypt them at rest and leave them out of snapshots.
const (
	// TokenKeyPrefix starts the keys of reviewed tokens.
	TokenKeyPrefix = tokenKeyPrefix
	// DecisionKeyPrefix starts the keys of authorization decisions.
	DecisionKeyPrefix = decisionKeyPrefix
)
