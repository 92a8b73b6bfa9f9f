package holding

// Caps on what is held for pods, as pod-identity-namespace-max-objects,
// pod-identity-namespace-max-bytes and pod-identity-max-bytes default
// them.
const (
	// DefaultNamespaceMaxObjects bounds the objects of all holdings of one
	// namespace: an operator's ConfigMaps and custom resources fit many
	// times over, a tenant filling its namespace does not.
	DefaultNamespaceMaxObjects = 5000
	// DefaultNamespaceMaxBytes bounds their JSON size (a Kubernetes
	// quantity): 5,000 objects of about 13 KiB.
	DefaultNamespaceMaxBytes = "64Mi"
	// DefaultMaxBytes bounds the JSON size of every holding for pods,
	// cluster-wide ones included: a widened list of every pod of a large
	// cluster must not fill a small node.
	DefaultMaxBytes = "256Mi"
)
