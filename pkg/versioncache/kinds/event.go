package kinds

import (
	"k8s.io/apimachinery/pkg/fields"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// eventFieldCount is the number of fields an Event's extractor sets.
const eventFieldCount = 11

// objectReference is the part of an Event's involvedObject (core) or
// regarding (events.k8s.io) a field selector reads.
type objectReference struct {
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	APIVersion      string `json:"apiVersion"`
	ResourceVersion string `json:"resourceVersion"`
	FieldPath       string `json:"fieldPath"`
}

type eventSource struct {
	Component string `json:"component"`
}

// coreEventFields mirrors pkg/registry/core/event ToSelectableFields for
// a core v1 Event, whose reportingComponent is the internal
// ReportingController.
func coreEventFields(raw []byte, fs fields.Set) error {
	var e struct {
		InvolvedObject     objectReference `json:"involvedObject"`
		Reason             string          `json:"reason"`
		ReportingComponent string          `json:"reportingComponent"`
		Source             eventSource     `json:"source"`
		Type               string          `json:"type"`
	}
	if err := utiljson.Unmarshal(raw, &e); err != nil {
		return err
	}
	setEventFields(fs, &e.InvolvedObject, e.Reason, e.ReportingComponent, e.Source.Component, e.Type)
	return nil
}

// eventsEventFields is coreEventFields for an events.k8s.io/v1 Event,
// read through kube's conversion to the internal Event: regarding is the
// involved object, deprecatedSource the source.
func eventsEventFields(raw []byte, fs fields.Set) error {
	var e struct {
		Regarding           objectReference `json:"regarding"`
		Reason              string          `json:"reason"`
		ReportingController string          `json:"reportingController"`
		DeprecatedSource    eventSource     `json:"deprecatedSource"`
		Type                string          `json:"type"`
	}
	if err := utiljson.Unmarshal(raw, &e); err != nil {
		return err
	}
	setEventFields(fs, &e.Regarding, e.Reason, e.ReportingController, e.DeprecatedSource.Component, e.Type)
	return nil
}

// setEventFields sets an Event's fields; source falls back to the
// reporting controller, as kube's ToSelectableFields does.
func setEventFields(fs fields.Set, ref *objectReference, reason, reporting, source, typ string) {
	if source == "" {
		source = reporting
	}
	fs["involvedObject.kind"] = ref.Kind
	fs["involvedObject.namespace"] = ref.Namespace
	fs["involvedObject.name"] = ref.Name
	fs["involvedObject.uid"] = ref.UID
	fs["involvedObject.apiVersion"] = ref.APIVersion
	fs["involvedObject.resourceVersion"] = ref.ResourceVersion
	fs["involvedObject.fieldPath"] = ref.FieldPath
	fs["reason"] = reason
	fs["reportingComponent"] = reporting
	fs["source"] = source
	fs["type"] = typ
}
