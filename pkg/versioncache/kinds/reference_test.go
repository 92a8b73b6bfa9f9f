package kinds

// The extractors the Readers replaced, decoding with kube's JSON decoder:
// the reference the differential fuzz test checks the one-walk reader
// against.

import (
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Each extractor decodes only the fields it reads (utiljson matches keys
// case-sensitively, as kube-apiserver does) and mirrors the kind's
// ToSelectableFields applied after kube's v1 to internal conversion.

// refPodDoc is the part of a v1 Pod refPodFields reads.
type refPodDoc struct {
	Spec struct {
		NodeName                 string `json:"nodeName"`
		RestartPolicy            string `json:"restartPolicy"`
		SchedulerName            string `json:"schedulerName"`
		ServiceAccountName       string `json:"serviceAccountName"`
		DeprecatedServiceAccount string `json:"serviceAccount"`
		HostNetwork              bool   `json:"hostNetwork"`
	} `json:"spec"`
	Status refPodStatus `json:"status"`
}

type refPodStatus struct {
	Phase             string     `json:"phase"`
	PodIP             string     `json:"podIP"`
	PodIPs            []refPodIP `json:"podIPs"`
	NominatedNodeName string     `json:"nominatedNodeName"`
}

type refPodIP struct {
	IP string `json:"ip"`
}

// refPodFields mirrors pkg/registry/core/pod/strategy.go ToSelectableFields:
// the deprecated spec.serviceAccount fills an empty spec.serviceAccountName,
// and status.podIP wins over status.podIPs[0] (Convert_v1_PodStatus_To_core_PodStatus).
// status.podIPs is a valid label but, as in kube, never set.
func refPodFields(raw []byte, fs fields.Set) error {
	var p refPodDoc
	if err := utiljson.Unmarshal(raw, &p); err != nil {
		return err
	}
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = p.Spec.DeprecatedServiceAccount
	}
	ip := p.Status.PodIP
	if ip == "" && len(p.Status.PodIPs) > 0 {
		ip = p.Status.PodIPs[0].IP
	}
	fs["spec.nodeName"] = p.Spec.NodeName
	fs["spec.restartPolicy"] = p.Spec.RestartPolicy
	fs["spec.schedulerName"] = p.Spec.SchedulerName
	fs["spec.serviceAccountName"] = sa
	fs["spec.hostNetwork"] = strconv.FormatBool(p.Spec.HostNetwork)
	fs["status.phase"] = p.Status.Phase
	fs["status.podIP"] = ip
	fs["status.nominatedNodeName"] = p.Status.NominatedNodeName
	return nil
}

// refNodeFields mirrors NodeToSelectableFields.
func refNodeFields(raw []byte, fs fields.Set) error {
	var n struct {
		Spec struct {
			Unschedulable bool `json:"unschedulable"`
		} `json:"spec"`
	}
	if err := utiljson.Unmarshal(raw, &n); err != nil {
		return err
	}
	fs["spec.unschedulable"] = strconv.FormatBool(n.Spec.Unschedulable)
	return nil
}

// refReplicationControllerFields mirrors ControllerToSelectableFields.
func refReplicationControllerFields(raw []byte, fs fields.Set) error {
	var rc struct {
		Status struct {
			Replicas int32 `json:"replicas"`
		} `json:"status"`
	}
	if err := utiljson.Unmarshal(raw, &rc); err != nil {
		return err
	}
	fs["status.replicas"] = strconv.Itoa(int(rc.Status.Replicas))
	return nil
}

// refNamespaceFields mirrors NamespaceToSelectableFields, with its legacy
// "name" field (which no conversion function accepts).
func refNamespaceFields(raw []byte, fs fields.Set) error {
	var ns struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	if err := utiljson.Unmarshal(raw, &ns); err != nil {
		return err
	}
	fs["status.phase"] = ns.Status.Phase
	fs["name"] = ns.Metadata.Name
	return nil
}

// refSecretFields mirrors pkg/registry/core/secret SelectableFields.
func refSecretFields(raw []byte, fs fields.Set) error {
	var s struct {
		Type string `json:"type"`
	}
	if err := utiljson.Unmarshal(raw, &s); err != nil {
		return err
	}
	fs["type"] = s.Type
	return nil
}

// refServiceFields mirrors pkg/registry/core/service SelectableFields.
func refServiceFields(raw []byte, fs fields.Set) error {
	var s struct {
		Spec struct {
			ClusterIP string `json:"clusterIP"`
			Type      string `json:"type"`
		} `json:"spec"`
	}
	if err := utiljson.Unmarshal(raw, &s); err != nil {
		return err
	}
	fs["spec.clusterIP"] = s.Spec.ClusterIP
	fs["spec.type"] = s.Spec.Type
	return nil
}

// refJobFields mirrors JobToSelectableFields: status.successful is the
// count of succeeded pods.
func refJobFields(raw []byte, fs fields.Set) error {
	var j struct {
		Status struct {
			Succeeded int32 `json:"succeeded"`
		} `json:"status"`
	}
	if err := utiljson.Unmarshal(raw, &j); err != nil {
		return err
	}
	fs["status.successful"] = strconv.Itoa(int(j.Status.Succeeded))
	return nil
}

// refCsrFields mirrors pkg/registry/certificates SelectableFields.
func refCsrFields(raw []byte, fs fields.Set) error {
	var c struct {
		Spec struct {
			SignerName string `json:"signerName"`
		} `json:"spec"`
	}
	if err := utiljson.Unmarshal(raw, &c); err != nil {
		return err
	}
	fs["spec.signerName"] = c.Spec.SignerName
	return nil
}

// refResourceSliceFields mirrors the resourceslice strategy's
// toSelectableFields; an unset spec.nodeName is "".
func refResourceSliceFields(raw []byte, fs fields.Set) error {
	var s struct {
		Spec struct {
			NodeName *string `json:"nodeName"`
			Driver   string  `json:"driver"`
		} `json:"spec"`
	}
	if err := utiljson.Unmarshal(raw, &s); err != nil {
		return err
	}
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	fs["spec.nodeName"] = node
	fs["spec.driver"] = s.Spec.Driver
	return nil
}

// refObjectReference is the part of an Event's involvedObject (core) or
// regarding (events.k8s.io) a field selector reads.
type refObjectReference struct {
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	APIVersion      string `json:"apiVersion"`
	ResourceVersion string `json:"resourceVersion"`
	FieldPath       string `json:"fieldPath"`
}

type refEventSource struct {
	Component string `json:"component"`
}

// refCoreEventFields mirrors pkg/registry/core/event ToSelectableFields for
// a core v1 Event, whose reportingComponent is the internal
// ReportingController.
func refCoreEventFields(raw []byte, fs fields.Set) error {
	var e struct {
		InvolvedObject     refObjectReference `json:"involvedObject"`
		Reason             string             `json:"reason"`
		ReportingComponent string             `json:"reportingComponent"`
		Source             refEventSource     `json:"source"`
		Type               string             `json:"type"`
	}
	if err := utiljson.Unmarshal(raw, &e); err != nil {
		return err
	}
	refSetEventFields(fs, &e.InvolvedObject, e.Reason, e.ReportingComponent, e.Source.Component, e.Type)
	return nil
}

// refEventsEventFields is refCoreEventFields for an events.k8s.io/v1 Event,
// read through kube's conversion to the internal Event: regarding is the
// involved object, deprecatedSource the source.
func refEventsEventFields(raw []byte, fs fields.Set) error {
	var e struct {
		Regarding           refObjectReference `json:"regarding"`
		Reason              string             `json:"reason"`
		ReportingController string             `json:"reportingController"`
		DeprecatedSource    refEventSource     `json:"deprecatedSource"`
		Type                string             `json:"type"`
	}
	if err := utiljson.Unmarshal(raw, &e); err != nil {
		return err
	}
	refSetEventFields(fs, &e.Regarding, e.Reason, e.ReportingController, e.DeprecatedSource.Component, e.Type)
	return nil
}

// refSetEventFields sets an Event's fields; source falls back to the
// reporting controller, as kube's ToSelectableFields does.
func refSetEventFields(fs fields.Set, ref *refObjectReference, reason, reporting, source, typ string) {
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

// refExtract is the reference extractor of each built-in kind.
var refExtract = map[schema.GroupKind]func([]byte, fields.Set) error{
	{Group: coreGroup, Kind: "Pod"}:                               refPodFields,
	{Group: coreGroup, Kind: "Node"}:                              refNodeFields,
	{Group: coreGroup, Kind: "ReplicationController"}:             refReplicationControllerFields,
	{Group: coreGroup, Kind: "Event"}:                             refCoreEventFields,
	{Group: coreGroup, Kind: "Namespace"}:                         refNamespaceFields,
	{Group: coreGroup, Kind: "Secret"}:                            refSecretFields,
	{Group: coreGroup, Kind: "Service"}:                           refServiceFields,
	{Group: eventsGroup, Kind: "Event"}:                           refEventsEventFields,
	{Group: batchGroup, Kind: "Job"}:                              refJobFields,
	{Group: certificatesGroup, Kind: "CertificateSigningRequest"}: refCsrFields,
	{Group: resourceGroup, Kind: "ResourceSlice"}:                 refResourceSliceFields,
}
