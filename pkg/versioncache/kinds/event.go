package kinds

import (
	"k8s.io/apimachinery/pkg/fields"
)

// eventFieldCount is the number of fields an Event's reader sets.
const eventFieldCount = 11

// Slots of an Event's values.
const (
	evKind = iota
	evNamespace
	evName
	evUID
	evAPIVersion
	evResourceVersion
	evFieldPath
	evReason
	evReporting
	evSource
	evType
)

// reference is the part of an Event's involvedObject (core) or regarding
// (events.k8s.io) a field selector reads.
func reference(name string) path {
	return obj(name, str("kind", evKind), str("namespace", evNamespace), str("name", evName),
		str("uid", evUID), str("apiVersion", evAPIVersion), str("resourceVersion", evResourceVersion),
		str("fieldPath", evFieldPath))
}

// coreEventReader mirrors pkg/registry/core/event ToSelectableFields for
// a core v1 Event, whose reportingComponent is the internal
// ReportingController.
var coreEventReader = &Reader{
	members: []path{reference("involvedObject"), str("reason", evReason),
		str("reportingComponent", evReporting), obj("source", str("component", evSource)), str("type", evType)},
	fields: eventFields,
}

// eventsEventReader is coreEventReader for an events.k8s.io/v1 Event,
// read through kube's conversion to the internal Event: regarding is the
// involved object, deprecatedSource the source.
var eventsEventReader = &Reader{
	members: []path{reference("regarding"), str("reason", evReason),
		str("reportingController", evReporting), obj("deprecatedSource", str("component", evSource)), str("type", evType)},
	fields: eventFields,
}

// eventFields sets an Event's fields; source falls back to the reporting
// controller, as kube's ToSelectableFields does.
func eventFields(v *Values, _ string, fs fields.Set) {
	source := v[evSource]
	if source == "" {
		source = v[evReporting]
	}
	fs["involvedObject.kind"] = v[evKind]
	fs["involvedObject.namespace"] = v[evNamespace]
	fs["involvedObject.name"] = v[evName]
	fs["involvedObject.uid"] = v[evUID]
	fs["involvedObject.apiVersion"] = v[evAPIVersion]
	fs["involvedObject.resourceVersion"] = v[evResourceVersion]
	fs["involvedObject.fieldPath"] = v[evFieldPath]
	fs["reason"] = v[evReason]
	fs["reportingComponent"] = v[evReporting]
	fs["source"] = source
	fs["type"] = v[evType]
}
