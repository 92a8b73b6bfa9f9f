package discovery

import "k8s.io/apimachinery/pkg/version"

// VersionSource knows the cloud kube-apiserver's version, so /version can
// be answered while the cloud is unreachable. cloudsync's VersionKeeper
// satisfies it.
type VersionSource interface {
	// Version returns the version the cloud last reported, and false while
	// none is known.
	Version() (version.Info, bool)
}
