package versioncache

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Kinds with selectable fields beyond metadata.name and metadata.namespace.
// Both live in the core group, whose apiVersion is plain "v1".
const (
	coreAPIVersion = "v1"
	kindPod        = "Pod"
	kindNode       = "Node"
	kindService    = "Service"
	kindSecret     = "Secret"
	kindNamespace  = "Namespace"
)

// Field selector labels, as kube-apiserver names them.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// podFieldCount sizes a pod's field set: 2 metadata fields plus 8 pod fields
// (see podSelectableFields).
const podFieldCount = 10

// objectDoc is the part of an object NewObject decodes: metadata plus the
// union of the pod and node fields a field selector may name, so the common
// case takes one pass. Spec and Status are nil when absent.
type objectDoc struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   *objectMeta     `json:"metadata"`
	Spec       *selectableSpec `json:"spec"`
	Status     *podStatus      `json:"status"`
	Type       string          `json:"type"` // a Secret's type
}

type selectableSpec struct {
	podSpec
	nodeSpec
	serviceSpec
}

// serviceSpec holds the v1 Service fields a field selector may name.
type serviceSpec struct {
	ClusterIP string `json:"clusterIP"`
	Type      string `json:"type"`
}

// objectHeader is objectDoc with spec and status kept raw, for objects
// whose kind uses those field names with other types (a custom resource's
// spec.nodeName may be a number).
type objectHeader struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   *objectMeta     `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     json.RawMessage `json:"status"`
	Type       json.RawMessage `json:"type"`
}

type objectMeta struct {
	Namespace       string            `json:"namespace"`
	Name            string            `json:"name"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
}

// podSpec and podStatus hold the v1 Pod fields a field selector may name.
type podSpec struct {
	NodeName                 string `json:"nodeName"`
	RestartPolicy            string `json:"restartPolicy"`
	SchedulerName            string `json:"schedulerName"`
	ServiceAccountName       string `json:"serviceAccountName"`
	DeprecatedServiceAccount string `json:"serviceAccount"`
	HostNetwork              bool   `json:"hostNetwork"`
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

type nodeSpec struct {
	Unschedulable bool `json:"unschedulable"`
}

// NewObject decodes raw JSON into an Object, extracting namespace, name,
// resourceVersion, labels and the selectable fields for its kind. Object
// keys are matched case-sensitively, as kube-apiserver does. raw is kept as
// given; the caller must not modify it afterwards.
//
// It fails on invalid JSON, a missing metadata.name, and a missing, zero or
// non-decimal metadata.resourceVersion.
func NewObject(raw []byte) (*Object, error) {
	var d objectDoc
	if err := utiljson.Unmarshal(raw, &d); err != nil {
		if err := decodeByKind(raw, &d); err != nil {
			return nil, fmt.Errorf("decode object: %w", err)
		}
	}
	if d.Metadata == nil || d.Metadata.Name == "" {
		return nil, errors.New("decode object: missing metadata.name")
	}
	rv, err := parseRV(d.Metadata.ResourceVersion)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", d.Metadata.Name, err)
	}
	return &Object{
		Namespace: d.Metadata.Namespace,
		Name:      d.Metadata.Name,
		RV:        rv,
		Raw:       raw,
		Labels:    labels.Set(d.Metadata.Labels),
		Fields:    selectableFields(&d),
		enc:       new(encodings),
	}, nil
}

// decodeByKind decodes raw into d, decoding spec, status and type only for
// the core kinds that have selectable fields in them.
func decodeByKind(raw []byte, d *objectDoc) error {
	var h objectHeader
	if err := utiljson.Unmarshal(raw, &h); err != nil {
		return err
	}
	*d = objectDoc{APIVersion: h.APIVersion, Kind: h.Kind, Metadata: h.Metadata}
	if h.APIVersion != coreAPIVersion {
		return nil
	}
	d.Spec, d.Status = &selectableSpec{}, &podStatus{}
	var err error
	switch h.Kind {
	case kindNode:
		err = decodeOptional(h.Spec, &d.Spec.nodeSpec)
	case kindService:
		err = decodeOptional(h.Spec, &d.Spec.serviceSpec)
	case kindSecret:
		err = decodeOptional(h.Type, &d.Type)
	case kindNamespace:
		err = decodeOptional(h.Status, d.Status)
	case kindPod:
		if err = decodeOptional(h.Spec, &d.Spec.podSpec); err == nil {
			err = decodeOptional(h.Status, d.Status)
		}
	}
	if err != nil {
		return fmt.Errorf("decode %s: %w", h.Kind, err)
	}
	return nil
}

// parseRV parses a stored object's resourceVersion: a positive decimal
// integer. Zero is rejected because no stored object carries it.
func parseRV(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("missing metadata.resourceVersion")
	}
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil || rv == 0 {
		return 0, fmt.Errorf("invalid metadata.resourceVersion %q", s)
	}
	return rv, nil
}

// selectableFields mirrors kube-apiserver's per-kind ToSelectableFields.
func selectableFields(d *objectDoc) fields.Set {
	if d.APIVersion == coreAPIVersion {
		spec := d.Spec
		if spec == nil {
			spec = &selectableSpec{}
		}
		switch d.Kind {
		case kindPod:
			status := d.Status
			if status == nil {
				status = &podStatus{}
			}
			return podSelectableFields(d.Metadata, &spec.podSpec, status)
		case kindNode:
			return nodeSelectableFields(d.Metadata, &spec.nodeSpec)
		case kindService:
			return serviceSelectableFields(d.Metadata, &spec.serviceSpec)
		case kindSecret:
			fs := metaFields(d.Metadata, 3)
			fs["type"] = d.Type // SecretToSelectableFields
			return fs
		case kindNamespace:
			return namespaceSelectableFields(d.Metadata, d.Status)
		}
	}
	return metaFields(d.Metadata, 2)
}

func metaFields(m *objectMeta, size int) fields.Set {
	fs := make(fields.Set, size)
	fs[fieldName] = m.Name
	fs[fieldNamespace] = m.Namespace
	return fs
}

// podSelectableFields mirrors pkg/registry/core/pod/strategy.go
// ToSelectableFields applied after the v1 to internal conversion: the
// deprecated spec.serviceAccount fills an empty spec.serviceAccountName, and
// status.podIP wins over status.podIPs[0] when both are set.
func podSelectableFields(m *objectMeta, spec *podSpec, status *podStatus) fields.Set {
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = spec.DeprecatedServiceAccount
	}
	ip := status.PodIP
	if ip == "" && len(status.PodIPs) > 0 {
		ip = status.PodIPs[0].IP
	}
	fs := metaFields(m, podFieldCount)
	fs["spec.nodeName"] = spec.NodeName
	fs["spec.restartPolicy"] = spec.RestartPolicy
	fs["spec.schedulerName"] = spec.SchedulerName
	fs["spec.serviceAccountName"] = sa
	fs["spec.hostNetwork"] = strconv.FormatBool(spec.HostNetwork)
	fs["status.phase"] = status.Phase
	fs["status.podIP"] = ip
	fs["status.nominatedNodeName"] = status.NominatedNodeName
	return fs
}

// nodeSelectableFields mirrors pkg/registry/core/node/strategy.go
// NodeToSelectableFields (plus metadata.namespace, always "").
func nodeSelectableFields(m *objectMeta, spec *nodeSpec) fields.Set {
	fs := metaFields(m, 3)
	fs["spec.unschedulable"] = strconv.FormatBool(spec.Unschedulable)
	return fs
}

// serviceSelectableFields mirrors pkg/registry/core/service/strategy.go
// ServiceToSelectableFields.
func serviceSelectableFields(m *objectMeta, spec *serviceSpec) fields.Set {
	fs := metaFields(m, 4)
	fs["spec.clusterIP"] = spec.ClusterIP
	fs["spec.type"] = spec.Type
	return fs
}

// namespaceSelectableFields mirrors pkg/registry/core/namespace/strategy.go
// NamespaceToSelectableFields, with its legacy "name" field.
func namespaceSelectableFields(m *objectMeta, status *podStatus) fields.Set {
	phase := ""
	if status != nil {
		phase = status.Phase
	}
	fs := metaFields(m, 4)
	fs["status.phase"] = phase
	fs["name"] = m.Name
	return fs
}

// decodeOptional decodes raw into v unless raw is absent.
func decodeOptional(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return utiljson.Unmarshal(raw, v)
}
