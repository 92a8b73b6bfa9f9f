package listwatch

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// fieldLabels is what kube-apiserver's field label conversion function for
// one kind accepts (pkg/apis/<group>/<version>/conversion.go), and how it
// words a refusal.
type fieldLabels struct {
	accepted sets.Set[string]
	aliases  map[string]string // deprecated label -> the one objects carry
	refuse   func(label string) error
}

// notSupported is the refusal most conversion functions use.
func notSupported(label string) error {
	return fmt.Errorf("field label not supported: %s", label)
}

// kindFieldLabels lists the kinds with their own conversion function. A
// kind's own fields are accepted only where versioncache extracts them
// (pods, nodes, services, secrets, namespaces); for the other kinds listed
// here only their metadata fields are, with the kind's own refusal.
var kindFieldLabels = map[schema.GroupKind]fieldLabels{
	{Kind: "Pod"}: {
		accepted: sets.New("metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
			"spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
			"status.podIP", "status.podIPs", "status.nominatedNodeName"),
		aliases: map[string]string{"spec.host": "spec.nodeName"},
		refuse:  notSupported,
	},
	{Kind: "Node"}:                  {accepted: sets.New("metadata.name", "spec.unschedulable"), refuse: notSupported},
	{Kind: "Namespace"}:             {accepted: sets.New("metadata.name", "status.phase"), refuse: notSupported},
	{Kind: "Secret"}:                {accepted: sets.New("metadata.name", "metadata.namespace", "type"), refuse: notSupported},
	{Kind: "Service"}:               {accepted: sets.New("metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"), refuse: notSupported},
	{Kind: "ReplicationController"}: {accepted: sets.New("metadata.name", "metadata.namespace"), refuse: notSupported},
	{Kind: "Event"}:                 {accepted: sets.New("metadata.name", "metadata.namespace"), refuse: notSupported},
	{Group: "events.k8s.io", Kind: "Event"}: {
		accepted: sets.New("metadata.name", "metadata.namespace"), refuse: notSupported,
	},
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}: {
		accepted: sets.New("metadata.name"), refuse: notSupported,
	},
	{Group: "batch", Kind: "Job"}: {
		accepted: sets.New("metadata.name", "metadata.namespace"),
		refuse:   func(label string) error { return fmt.Errorf("field label %q not supported for Job", label) },
	},
}

// convertFieldSelector checks that every field in sel is selectable for
// kind and rewrites aliases, as kube-apiserver's ConvertFieldLabel does:
// with the kind's conversion function, else with
// runtime.DefaultMetaV1FieldSelectorConversion.
func convertFieldSelector(sel fields.Selector, kind schema.GroupKind) (fields.Selector, error) {
	if sel == nil {
		return nil, nil
	}
	fl, ok := kindFieldLabels[kind]
	if !ok {
		return sel.Transform(runtime.DefaultMetaV1FieldSelectorConversion)
	}
	return sel.Transform(func(label, value string) (string, string, error) {
		if alias, ok := fl.aliases[label]; ok {
			return alias, value, nil
		}
		if fl.accepted.Has(label) {
			return label, value, nil
		}
		return "", "", fl.refuse(label)
	})
}
