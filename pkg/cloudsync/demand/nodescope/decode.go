package nodescope

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// refPod is the part of a pod's JSON its references are read from. A pod
// is read again at every change, and most of its bytes (status, managed
// fields, the containers' other fields) name nothing, so only these
// fields are decoded: the rest is scanned, not built. Each field has its
// corev1 type and JSON name, so PodRefsJSON finds what PodRefs finds in
// the whole pod (checkPodRefs in every PodRefs test, FuzzPodRefsJSON).
type refPod struct {
	Metadata struct {
		Namespace string `json:"namespace"`
		// Annotations' values are kept raw: only the mirror pod key's
		// presence matters.
		Annotations map[string]json.RawMessage `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName            string                        `json:"nodeName"`
		ImagePullSecrets    []corev1.LocalObjectReference `json:"imagePullSecrets"`
		InitContainers      []refContainer                `json:"initContainers"`
		Containers          []refContainer                `json:"containers"`
		EphemeralContainers []refContainer                `json:"ephemeralContainers"`
		Volumes             []corev1.Volume               `json:"volumes"`
	} `json:"spec"`
}

// refContainer is the part of a container (or an ephemeral one, whose
// common fields are inlined) that names secrets and configmaps.
type refContainer struct {
	Env     []corev1.EnvVar        `json:"env"`
	EnvFrom []corev1.EnvFromSource `json:"envFrom"`
}

// refNode is the part of a node's JSON its reference is read from.
type refNode struct {
	Spec struct {
		ConfigSource *corev1.NodeConfigSource `json:"configSource"`
	} `json:"spec"`
}

// PodRefsJSON is PodRefs of the pod whose JSON raw is, decoding only the
// fields that name references.
func PodRefsJSON(raw []byte) ([]Ref, error) {
	var p refPod
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	pod := corev1.Pod{Spec: corev1.PodSpec{
		NodeName:         p.Spec.NodeName,
		ImagePullSecrets: p.Spec.ImagePullSecrets,
		Volumes:          p.Spec.Volumes,
		InitContainers:   make([]corev1.Container, len(p.Spec.InitContainers)),
		Containers:       make([]corev1.Container, len(p.Spec.Containers)),
	}}
	pod.Namespace = p.Metadata.Namespace
	if _, mirror := p.Metadata.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		pod.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: ""}
	}
	for i, c := range p.Spec.InitContainers {
		pod.Spec.InitContainers[i] = corev1.Container{Env: c.Env, EnvFrom: c.EnvFrom}
	}
	for i, c := range p.Spec.Containers {
		pod.Spec.Containers[i] = corev1.Container{Env: c.Env, EnvFrom: c.EnvFrom}
	}
	for _, c := range p.Spec.EphemeralContainers {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Env: c.Env, EnvFrom: c.EnvFrom}})
	}
	return PodRefs(&pod), nil
}

// NodeRefsJSON is NodeRefs of the node whose JSON raw is, decoding only
// spec.configSource.
func NodeRefsJSON(raw []byte) ([]Ref, error) {
	var n refNode
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	return NodeRefs(&corev1.Node{Spec: corev1.NodeSpec{ConfigSource: n.Spec.ConfigSource}}), nil
}
