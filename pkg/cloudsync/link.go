package cloudsync

import "sync"

// Link tracks whether the cloud is reachable, as seen by the syncers. It is
// connected while at least one syncer has reached the cloud and none has
// failed to since. Safe for concurrent use.
type Link struct {
	mu sync.Mutex
	// failing holds the keys of resources whose last cloud call failed.
	// Guarded by mu.
	failing map[string]bool
	// reached is true once any cloud call succeeded. Guarded by mu.
	reached bool
}

// NewLink returns a Link that is not connected.
func NewLink() *Link { return &Link{failing: map[string]bool{}} }

// Connected reports the cloud-link state.
func (l *Link) Connected() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reached && len(l.failing) == 0
}

func (l *Link) report(key string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		l.reached = true
		delete(l.failing, key)
		return
	}
	l.failing[key] = true
}
