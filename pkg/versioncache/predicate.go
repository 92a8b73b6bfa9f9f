package versioncache

import "k8s.io/apimachinery/pkg/watch"

// Matches reports whether o satisfies p. A nil o matches nothing.
func (p Predicate) Matches(o *Object) bool {
	if o == nil {
		return false
	}
	if p.Namespace != "" && o.Namespace != p.Namespace {
		return false
	}
	if p.Label != nil && !p.Label.Empty() && !p.Label.Matches(o.Labels) {
		return false
	}
	if p.Field != nil && !p.Field.Empty() && !p.Field.Matches(o.Fields) {
		return false
	}
	return true
}

// matchesAll reports whether p matches every object, so filtering can be
// skipped.
func (p Predicate) matchesAll() bool {
	return p.Namespace == "" &&
		(p.Label == nil || p.Label.Empty()) &&
		(p.Field == nil || p.Field.Empty())
}

// matcher is a Predicate prepared for matching many events.
type matcher struct {
	p   Predicate
	all bool // p.matchesAll()
}

func newMatcher(p Predicate) matcher {
	return matcher{p: p, all: p.matchesAll()}
}

func (m *matcher) matches(o *Object) bool {
	if m.all {
		return o != nil
	}
	return m.p.Matches(o)
}

// view returns what a watcher with this predicate sees of e, following
// kube's cacheWatcher.convertToWatchEvent:
//   - progress markers always pass;
//   - a Deleted event passes when its object matches;
//   - object and Prev both match: e unchanged;
//   - only the object matches (or no Prev): Added;
//   - only Prev matches: Deleted carrying Prev with e's RV;
//   - neither: skipped (false).
//
// Every returned event shares frames with the other watchers' copies.
func (m *matcher) view(e *Event) (Event, bool) {
	switch e.Type {
	case watch.Bookmark:
		return *e, true
	case watch.Deleted:
		return *e, m.matches(e.Object)
	}
	cur := m.matches(e.Object)
	prev := e.Prev != nil && m.matches(e.Prev)
	switch {
	case cur && prev:
		return *e, true
	case cur:
		out := *e
		out.Type = watch.Added
		return out, true
	case prev:
		return e.deletedFromPrev(), true
	}
	return Event{}, false
}
