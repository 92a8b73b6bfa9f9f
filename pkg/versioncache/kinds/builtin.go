package kinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Groups of the kinds in Builtin.
const (
	coreGroup         = ""
	eventsGroup       = "events.k8s.io"
	batchGroup        = "batch"
	certificatesGroup = "certificates.k8s.io"
	resourceGroup     = "resource.k8s.io"
)

// Builtin is the table of every built-in kind whose conversion function
// differs from kube's default, transcribed from kube-apiserver v1.36's
// pkg/apis/<group>/<version>/conversion.go (labels, aliases, refusals) and
// pkg/registry/<group>/<kind>/strategy.go (extraction).
var Builtin = Table{
	{Group: coreGroup, Kind: "Pod"}: {
		Labels: sets.New(FieldName, FieldNamespace, "spec.nodeName", "spec.restartPolicy",
			"spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
			"status.podIP", "status.podIPs", "status.nominatedNodeName"),
		Aliases:     map[string]string{"spec.host": "spec.nodeName"},
		Read:        podReader,
		ExtraFields: podFieldCount,
	},
	{Group: coreGroup, Kind: "Node"}: {
		Labels: sets.New(FieldName, "spec.unschedulable"),
		Read:   nodeReader, ExtraFields: 1,
	},
	{Group: coreGroup, Kind: "ReplicationController"}: {
		Labels: sets.New(FieldName, FieldNamespace, "status.replicas"),
		Read:   replicationControllerReader, ExtraFields: 1,
	},
	{Group: coreGroup, Kind: "Event"}: {
		Labels: sets.New(FieldName, FieldNamespace, "involvedObject.kind", "involvedObject.namespace",
			"involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
			"involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
			"reportingComponent", "source", "type"),
		Read: coreEventReader, ExtraFields: eventFieldCount,
	},
	{Group: coreGroup, Kind: "Namespace"}: {
		Labels: sets.New(FieldName, "status.phase"),
		Read:   namespaceReader, ExtraFields: 2,
	},
	{Group: coreGroup, Kind: "Secret"}: {
		Labels: sets.New(FieldName, FieldNamespace, "type"),
		Read:   secretReader, ExtraFields: 1,
	},
	{Group: coreGroup, Kind: "Service"}: {
		Labels: sets.New(FieldName, FieldNamespace, "spec.clusterIP", "spec.type"),
		Read:   serviceReader, ExtraFields: 2,
	},
	{Group: eventsGroup, Kind: "Event"}: {
		// events.k8s.io names the fields after its own schema and maps
		// them to the core ones every Event carries.
		Labels: sets.New(FieldName, FieldNamespace, "reason", "type"),
		Aliases: map[string]string{
			"regarding.kind":            "involvedObject.kind",
			"regarding.namespace":       "involvedObject.namespace",
			"regarding.name":            "involvedObject.name",
			"regarding.uid":             "involvedObject.uid",
			"regarding.apiVersion":      "involvedObject.apiVersion",
			"regarding.resourceVersion": "involvedObject.resourceVersion",
			"regarding.fieldPath":       "involvedObject.fieldPath",
			"reportingController":       "reportingComponent",
		},
		Read: eventsEventReader, ExtraFields: eventFieldCount,
	},
	{Group: batchGroup, Kind: "Job"}: {
		Labels: sets.New(FieldName, FieldNamespace, "status.successful"),
		Refuse: func(label string) error { return fmt.Errorf("field label %q not supported for Job", label) },
		Read:   jobReader, ExtraFields: 1,
	},
	{Group: certificatesGroup, Kind: "CertificateSigningRequest"}: {
		Labels: sets.New(FieldName, "spec.signerName"),
		Read:   csrReader, ExtraFields: 1,
	},
	{Group: resourceGroup, Kind: "ResourceSlice"}: {
		Labels: sets.New(FieldName, "spec.nodeName", "spec.driver"),
		Refuse: func(label string) error {
			gvk := schema.GroupVersionKind{Group: resourceGroup, Version: "v1", Kind: "ResourceSlice"}
			return fmt.Errorf("field label not supported for %s: %s", gvk, label)
		},
		Read: resourceSliceReader, ExtraFields: 2,
	},
}
