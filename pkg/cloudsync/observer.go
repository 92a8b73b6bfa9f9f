package cloudsync

import "github.com/apiserver-lite/apiserver-lite/pkg/versioncache"

// Relist reasons passed to Observer.Relisted.
const (
	// RelistInitial: no watermark yet, the first list fills the store.
	RelistInitial = "initial"
	// RelistExpired: the cloud answered 410 to the watermark.
	RelistExpired = "expired"
	// RelistRegressed: the cloud is behind the watermark or sent a change
	// the stored history cannot explain (an object re-created under
	// another UID with no DELETED): it was restored from a backup, and its
	// history no longer continues the stored one.
	RelistRegressed = "regressed"
)

// Observer is told of sync progress, for metrics and health. Its methods
// are called from the sync loops and must not block.
type Observer interface {
	// Relisted is called when a relist starts, with one of the Relist*
	// reasons.
	Relisted(resource, reason string)
	// RelistBytes is called when a relist has received whole objects
	// from the cloud, with the bytes of their JSON.
	RelistBytes(resource string, n int)
	// CloudError is called when a sync attempt fails.
	CloudError(resource string, err error)
	// CloudHeard is called when a list, a cloud event or a bookmark
	// arrives: the resource is current as of now.
	CloudHeard(resource string)
}

// NopObserver is the Observer of a Config that sets none.
type NopObserver struct{}

func (NopObserver) Relisted(string, string)  {}
func (NopObserver) RelistBytes(string, int)  {}
func (NopObserver) CloudError(string, error) {}
func (NopObserver) CloudHeard(string)        {}

// rawBytes is the size of objs' JSON.
func rawBytes(objs []*versioncache.Object) int {
	n := 0
	for _, o := range objs {
		n += len(o.Raw)
	}
	return n
}
