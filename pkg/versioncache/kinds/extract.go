package kinds

import (
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Each extractor decodes only the fields it reads (utiljson matches keys
// case-sensitively, as kube-apiserver does) and mirrors the kind's
// ToSelectableFields applied after kube's v1 to internal conversion.

// podFieldCount is the number of fields podFields sets.
const podFieldCount = 8

// podDoc is the part of a v1 Pod podFields reads.
type podDoc struct {
	Spec struct {
		NodeName                 string `json:"nodeName"`
		RestartPolicy            string `json:"restartPolicy"`
		SchedulerName            string `json:"schedulerName"`
		ServiceAccountName       string `json:"serviceAccountName"`
		DeprecatedServiceAccount string `json:"serviceAccount"`
		HostNetwork              bool   `json:"hostNetwork"`
	} `json:"spec"`
	Status podStatus `json:"status"`
}

type podStatus struct {
	Phase             string  `json:"phase"`
	PodIP             string  `json:"podIP"`
	PodIPs            []podIP `json:"podIPs"`
	NominatedNodeName string  `json:"nominatedNodeName"`
}

type podIP struct {
	IP string `json:"ip"`
}

// podFields mirrors pkg/registry/core/pod/strategy.go ToSelectableFields:
// the deprecated spec.serviceAccount fills an empty spec.serviceAccountName,
// and status.podIP wins over status.podIPs[0] (Convert_v1_PodStatus_To_core_PodStatus).
// status.podIPs is a valid label but, as in kube, never set.
func podFields(raw []byte, fs fields.Set) error {
	var p podDoc
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

// nodeFields mirrors NodeToSelectableFields.
func nodeFields(raw []byte, fs fields.Set) error {
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

// replicationControllerFields mirrors ControllerToSelectableFields.
func replicationControllerFields(raw []byte, fs fields.Set) error {
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

// namespaceFields mirrors NamespaceToSelectableFields, with its legacy
// "name" field (which no conversion function accepts).
func namespaceFields(raw []byte, fs fields.Set) error {
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

// secretFields mirrors pkg/registry/core/secret SelectableFields.
func secretFields(raw []byte, fs fields.Set) error {
	var s struct {
		Type string `json:"type"`
	}
	if err := utiljson.Unmarshal(raw, &s); err != nil {
		return err
	}
	fs["type"] = s.Type
	return nil
}

// serviceFields mirrors pkg/registry/core/service SelectableFields.
func serviceFields(raw []byte, fs fields.Set) error {
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

// jobFields mirrors JobToSelectableFields: status.successful is the
// count of succeeded pods.
func jobFields(raw []byte, fs fields.Set) error {
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

// csrFields mirrors pkg/registry/certificates SelectableFields.
func csrFields(raw []byte, fs fields.Set) error {
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

// resourceSliceFields mirrors the resourceslice strategy's
// toSelectableFields; an unset spec.nodeName is "".
func resourceSliceFields(raw []byte, fs fields.Set) error {
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
