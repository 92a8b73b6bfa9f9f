package listwatch

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/negotiate"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
)

// A read of a resource path is answered in one of three places: from what
// is held, by the cloud, or refused. decide chooses once per request, from
// the facts readOf gathers (what the request asks, what is held for its
// caller, whether the cloud answers); the handlers only carry the choice
// out. The caller enters through the target: widen gives a caller other
// than the node the whole copy of a resource held in part.

// destination is where a read is answered.
type destination uint8

const (
	toLocal  destination = iota + 1 // from the cache
	toCloud                         // through the cloud proxy (503 while it cannot be reached)
	toRefuse                        // a Status error of our own
)

func (d destination) String() string {
	switch d {
	case toLocal:
		return "local"
	case toCloud:
		return "cloud"
	case toRefuse:
		return "refuse"
	}
	return "unknown"
}

// reason is why a read goes where it goes; each names one destination.
type reason uint8

const (
	// reasonNotLocal: the path names no held resource's collection or
	// object (an unconfigured resource, a subresource, a shape the
	// resource's scope does not allow). Cloud.
	reasonNotLocal reason = iota + 1
	// reasonNotHeldNow: a resource held on request whose cache is not
	// ready is not held now. Cloud.
	reasonNotHeldNow
	// reasonInitializing: the cache of a configured resource is not ready
	// yet. Refused, 503.
	reasonInitializing
	// reasonNotCurrent: held on request, but no sync keeps it current
	// while the cloud answers: never stale. Cloud.
	reasonNotCurrent
	// reasonInvalid: the media type or the options are refused. Refused.
	reasonInvalid
	// reasonWider: a list or watch asks for more than is held. Cloud.
	reasonWider
	// reasonWiderOffline: the same while the cloud cannot be reached: an
	// informer would take the part for the whole. Refused, 503.
	reasonWiderOffline
	// reasonLimited: the same offline, as a Table for a person: what is
	// held, with a Warning naming the scope. Local.
	reasonLimited
	// reasonHeld: a list or watch within what is held, or a get whose
	// miss is kube's 404. Local.
	reasonHeld
	// reasonHeldOrCloud: a get whose miss the cloud answers (the object
	// may exist there, a pod on another node). Local.
	reasonHeldOrCloud
	// reasonHeldOrOffline: the same while the cloud cannot be reached: a
	// miss is 503, never an invented 404. Local.
	reasonHeldOrOffline
)

// reasonNames are the reasons' names, for tests and logs.
var reasonNames = [...]string{
	reasonNotLocal: "not-local", reasonNotHeldNow: "not-held-now", reasonInitializing: "initializing",
	reasonNotCurrent: "not-current", reasonInvalid: "invalid", reasonWider: "wider",
	reasonWiderOffline: "wider-offline", reasonLimited: "limited", reasonHeld: "held",
	reasonHeldOrCloud: "held-or-cloud", reasonHeldOrOffline: "held-or-offline",
}

func (r reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return "unknown"
}

// route is the one decision of where a read is answered, and why.
type route struct {
	to  destination
	why reason
}

// routeFacts is what decide reads. Facts that do not apply are false.
type routeFacts struct {
	resolved  bool // the path names a configured resource's collection or object
	ready     bool // the caller's copy can answer (discovery info and a synced cache)
	onRequest bool // held on request for the node's pods (Scope.OnRequest, a whole copy)
	current   bool // a sync keeps a resource held on request current; true for every other
	reachable bool // the cloud answers now
	invalid   bool // negotiation or the options refused the request
	get       bool // one object, not a collection
	// covered: a list or watch asks for nothing beyond what is held; for
	// a get, every object of its name would be held, so a miss is 404.
	covered bool
	table   bool // a Table for a person was negotiated
}

// decide is where a read with facts f is answered.
func decide(f routeFacts) route {
	switch {
	case !f.resolved:
		return route{toCloud, reasonNotLocal}
	case !f.ready && f.onRequest:
		return route{toCloud, reasonNotHeldNow}
	case !f.ready:
		return route{toRefuse, reasonInitializing}
	case f.onRequest && f.reachable && !f.current:
		return route{toCloud, reasonNotCurrent}
	case f.invalid:
		return route{toRefuse, reasonInvalid}
	case f.get && f.covered:
		return route{toLocal, reasonHeld}
	case f.get && f.reachable:
		return route{toLocal, reasonHeldOrCloud}
	case f.get:
		return route{toLocal, reasonHeldOrOffline}
	case f.covered:
		return route{toLocal, reasonHeld}
	case f.reachable:
		return route{toCloud, reasonWider}
	case !f.table:
		return route{toRefuse, reasonWiderOffline}
	}
	return route{toLocal, reasonLimited}
}

// read is a read of a resource path, resolved and parsed once.
type read struct {
	t     target
	resp  response.Responder // valid only when negotiated
	list  *listRequest       // a list's or watch's options; nil for a get or when refused
	err   error              // why the request is refused (reasonInvalid)
	facts routeFacts
	// negotiated: resp is the answer's negotiated encoding.
	negotiated bool
}

// readOf resolves a GET or HEAD of the path after /api/v1/ or
// /apis/{g}/{v}/ to the caller's target, and gathers decide's facts.
func (s *server) readOf(r *http.Request, gv schema.GroupVersion, rest string) read {
	t, ok := s.resolve(gv, strings.Split(rest, "/"))
	t.synced = s.synced[t.cache]
	if !ok {
		return read{t: t}
	}
	t = s.widen(r.Context(), t)
	onRequest := s.onRequest[t.cache]
	rd := read{t: t, facts: routeFacts{
		resolved:  true,
		ready:     t.ready(),
		onRequest: onRequest,
		current:   !onRequest || s.current(t.gvr),
		reachable: s.cloudReachable(),
		get:       t.name != "",
	}}
	if rd.facts.ready { // the kind, which negotiation and options need, is known
		rd.parse(r)
	}
	return rd
}

// parse negotiates the answer's encoding and reads the options, noting
// whether the request asks for more than is held.
func (rd *read) parse(r *http.Request) {
	t := &rd.t
	pc := encode.ProtobufFor(t.resource())
	resp, err := negotiate.Resource(r, pc != nil, t.name == "")
	if err != nil {
		rd.err, rd.facts.invalid = err, true
		return
	}
	if resp.Protobuf() {
		t.proto = pc
	}
	rd.resp, rd.negotiated, rd.facts.table = resp, true, resp.Table() != nil
	if t.name != "" {
		rd.facts.covered = t.coversMiss()
		return
	}
	req, err := parseList(r.URL.Query(), *t)
	if err != nil {
		rd.err, rd.facts.invalid = err, true
		return
	}
	rd.list = req
	rd.facts.covered = t.covers(scope.Request{Namespace: t.namespace, Label: req.opts.LabelSelector, Field: req.pred.Field})
}

// refuse answers a read decide refused.
func (rd *read) refuse(w http.ResponseWriter, rt route) {
	err := rd.err
	switch rt.why {
	case reasonInitializing:
		err = response.StorageInitializing()
	case reasonWiderOffline:
		err = narrowerThanAsked(rd.t)
	}
	if !rd.negotiated {
		response.WriteError(w, err)
		return
	}
	rd.resp.Error(w, err)
}
