//go:build e2e

package fleet

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// maxChecksPerNode is how many resourceVersion checks (a LIST with
// limit=1) one node may make when it starts: its resources share one
// reading of the cloud's resourceVersion.
const maxChecksPerNode = 1

// rebootLists are the LISTs a fleet-wide daemon restart made that the
// restart itself caused: the change made after it adds a pod whose new
// secret and configmap are read by name, as a kubelet would, and those
// are left out.
type rebootLists struct {
	// collection and single count collection and single-object LISTs.
	collection, single int
	// streams count the streaming watches (sendInitialEvents=true) that
	// read a state as a LIST would, of a collection or a held object.
	streams int
	// maxChecks is the most limit=1 checks one node made that the cloud
	// answered, the first such node's user in maxChecksOf and the
	// resources it listed ("user resource, resource"); checksThrottled counts the checks API Priority and
	// Fairness refused with 429 before reading anything, each retried
	// after the daemon's backoff.
	maxChecks       int
	maxChecksOf     string
	checksThrottled int
	// newLists are the change's single-object reads (LISTs or streaming
	// watches); newForbidden and
	// newThrottled those answered 403 (the Node authorizer's graph did
	// not have the new pod yet) and 429, each followed by a retry after
	// the object's backoff.
	newLists, newForbidden, newThrottled int
}

// countRebootLists counts the fleet's LISTs since start, leaving out the
// single-object LISTs of names ending in "-"+suffix (the change's).
func countRebootLists(c *framework.Cluster, start time.Time, suffix string) rebootLists {
	return rebootListsOf(c.CloudRequests(isFleetUser, start, time.Now().Add(time.Hour)), suffix)
}

// rebootListsOf counts the LISTs among audited requests, leaving out the
// single-object LISTs of names ending in "-"+suffix.
func rebootListsOf(events []framework.AuditEvent, suffix string) rebootLists {
	var l rebootLists
	checks, checked := map[string]int{}, map[string]string{}
	for _, e := range events {
		if e.Verb != "list" && e.Verb != "watch" {
			continue
		}
		u, err := url.Parse(e.RequestURI)
		if err != nil {
			l.collection++
			continue
		}
		q := u.Query()
		name, single := strings.CutPrefix(q.Get("fieldSelector"), "metadata.name=")
		switch {
		case e.Verb == "watch":
			switch {
			case !isStream(q):
			case single && strings.HasSuffix(name, "-"+suffix):
				l.countNew(e)
			default:
				l.streams++
			}
		case q.Get("limit") == "1" && throttled(e):
			l.checksThrottled++
		case q.Get("limit") == "1":
			at := e.User.Username
			checked[at] = strings.TrimPrefix(checked[at]+", "+e.Resource(), ", ")
			if checks[at]++; checks[at] > l.maxChecks {
				l.maxChecks, l.maxChecksOf = checks[at], at+" "+checked[at]
			}
		case single && strings.HasSuffix(name, "-"+suffix):
			l.countNew(e)
		case single:
			l.single++
		default:
			l.collection++
		}
	}
	return l
}

// isStream reports whether a watch's query asks for its initial events
// (WatchList): a read of the state, as a LIST is.
func isStream(q url.Values) bool {
	return q.Get("sendInitialEvents") == "true"
}

// throttled reports whether e was refused with 429.
func throttled(e framework.AuditEvent) bool {
	return e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusTooManyRequests
}

// countNew counts one of the change's single-object reads by its answer.
func (l *rebootLists) countNew(e framework.AuditEvent) {
	l.newLists++
	if e.ResponseStatus == nil {
		return
	}
	switch e.ResponseStatus.Code {
	case http.StatusForbidden:
		l.newForbidden++
	case http.StatusTooManyRequests:
		l.newThrottled++
	}
}

// check fails a daemon restart that listed, or read with a streaming
// watch, anything but the change's new objects, or checked the cloud's
// resourceVersion more than once a node.
func (l rebootLists) check() []error {
	var errs []error
	if l.collection > 0 || l.single > 0 || l.streams > 0 {
		errs = append(errs, fmt.Errorf("the fleet-wide daemon restart made %d collection LISTs, %d single-object LISTs and %d streaming watches (sendInitialEvents) of held objects, want none",
			l.collection, l.single, l.streams))
	}
	if l.maxChecks > maxChecksPerNode {
		errs = append(errs, fmt.Errorf("the fleet-wide daemon restart made %d limit=1 resourceVersion checks (%s), want at most %d per node",
			l.maxChecks, l.maxChecksOf, maxChecksPerNode))
	}
	return errs
}
