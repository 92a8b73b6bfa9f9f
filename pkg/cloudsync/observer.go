package cloudsync

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
	// CloudError is called when a sync attempt fails.
	CloudError(resource string, err error)
	// CloudHeard is called when a list, a cloud event or a bookmark
	// arrives: the resource is current as of now.
	CloudHeard(resource string)
}

// nopObserver is the Observer of a Config that sets none.
type nopObserver struct{}

func (nopObserver) Relisted(string, string)  {}
func (nopObserver) CloudError(string, error) {}
func (nopObserver) CloudHeard(string)        {}
