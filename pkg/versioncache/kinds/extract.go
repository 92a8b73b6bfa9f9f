package kinds

import (
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
)

// Each Reader reads only the fields its kind's ToSelectableFields uses,
// as kube-apiserver decodes them into the v1 type (case-sensitive keys),
// and its fields function mirrors ToSelectableFields applied after kube's
// v1 to internal conversion.

// podFieldCount is the number of fields podFields sets.
const podFieldCount = 8

// Slots of a Pod's values.
const (
	podNode = iota
	podRestart
	podScheduler
	podSA
	podSADeprecated
	podHostNetwork
	podPhase
	podIP
	podIPs // "1" while status.podIPs is non-empty
	podIPs0
	podNominated
)

var podReader = &Reader{
	members: []path{
		obj("spec", str("nodeName", podNode), str("restartPolicy", podRestart),
			str("schedulerName", podScheduler), str("serviceAccountName", podSA),
			str("serviceAccount", podSADeprecated), boolean("hostNetwork", podHostNetwork)),
		obj("status", str("phase", podPhase), str("podIP", podIP),
			first("podIPs", podIPs, str("ip", podIPs0)), str("nominatedNodeName", podNominated)),
	},
	fields: podFields,
}

// podFields mirrors pkg/registry/core/pod/strategy.go ToSelectableFields:
// the deprecated spec.serviceAccount fills an empty spec.serviceAccountName,
// and status.podIP wins over status.podIPs[0] (Convert_v1_PodStatus_To_core_PodStatus).
// status.podIPs is a valid label but, as in kube, never set.
func podFields(v *Values, _ string, fs fields.Set) {
	sa := v[podSA]
	if sa == "" {
		sa = v[podSADeprecated]
	}
	ip := v[podIP]
	if ip == "" && v[podIPs] != "" {
		ip = v[podIPs0]
	}
	fs["spec.nodeName"] = v[podNode]
	fs["spec.restartPolicy"] = v[podRestart]
	fs["spec.schedulerName"] = v[podScheduler]
	fs["spec.serviceAccountName"] = sa
	fs["spec.hostNetwork"] = boolText(v[podHostNetwork])
	fs["status.phase"] = v[podPhase]
	fs["status.podIP"] = ip
	fs["status.nominatedNodeName"] = v[podNominated]
}

// boolText is a bool slot's value: false when absent.
func boolText(v string) string {
	if v == "" {
		return strconv.FormatBool(false)
	}
	return v
}

// intText is an integer slot's value: 0 when absent.
func intText(v string) string {
	if v == "" {
		return "0"
	}
	return v
}

// nodeReader mirrors NodeToSelectableFields.
var nodeReader = &Reader{
	members: []path{obj("spec", boolean("unschedulable", 0))},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["spec.unschedulable"] = boolText(v[0])
	},
}

// replicationControllerReader mirrors ControllerToSelectableFields.
var replicationControllerReader = &Reader{
	members: []path{obj("status", int32Of("replicas", 0))},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["status.replicas"] = intText(v[0])
	},
}

// namespaceReader mirrors NamespaceToSelectableFields, with its legacy
// "name" field (which no conversion function accepts).
var namespaceReader = &Reader{
	members: []path{obj("status", str("phase", 0))},
	fields: func(v *Values, name string, fs fields.Set) {
		fs["status.phase"] = v[0]
		fs["name"] = name
	},
}

// secretReader mirrors pkg/registry/core/secret SelectableFields.
var secretReader = &Reader{
	members: []path{str("type", 0)},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["type"] = v[0]
	},
}

// serviceReader mirrors pkg/registry/core/service SelectableFields.
var serviceReader = &Reader{
	members: []path{obj("spec", str("clusterIP", 0), str("type", 1))},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["spec.clusterIP"] = v[0]
		fs["spec.type"] = v[1]
	},
}

// jobReader mirrors JobToSelectableFields: status.successful is the count
// of succeeded pods.
var jobReader = &Reader{
	members: []path{obj("status", int32Of("succeeded", 0))},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["status.successful"] = intText(v[0])
	},
}

// csrReader mirrors pkg/registry/certificates SelectableFields.
var csrReader = &Reader{
	members: []path{obj("spec", str("signerName", 0))},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["spec.signerName"] = v[0]
	},
}

// resourceSliceReader mirrors the resourceslice strategy's
// toSelectableFields; an unset or null spec.nodeName is "".
var resourceSliceReader = &Reader{
	members: []path{obj("spec", strPtr("nodeName", 0), str("driver", 1))},
	fields: func(v *Values, _ string, fs fields.Set) {
		fs["spec.nodeName"] = v[0]
		fs["spec.driver"] = v[1]
	},
}
