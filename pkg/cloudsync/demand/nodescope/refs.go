package nodescope

import (
	corev1 "k8s.io/api/core/v1"
)

// Kind is the kind of a referenced object.
type Kind int

// The kinds a pod or node can reference and a node may read.
const (
	Secret Kind = iota
	ConfigMap
)

func (k Kind) String() string {
	if k == Secret {
		return "secret"
	}
	return "configmap"
}

// Ref names one referenced object.
type Ref struct {
	Kind      Kind
	Namespace string
	Name      string
}

// PodRefs returns every secret and configmap pod references, in the pod's
// namespace, without duplicates. It follows the Node authorizer of
// Kubernetes v1.36 (plugin/pkg/auth/authorizer/node, Graph.AddPod): a pod
// without spec.nodeName and a mirror pod reference nothing, and names are
// visited as pkg/api/v1/pod VisitPodSecretNames and VisitPodConfigmapNames
// visit them.
func PodRefs(pod *corev1.Pod) []Ref {
	if pod.Spec.NodeName == "" {
		return nil
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	c := newCollector(pod.Namespace)
	visitPodSecretNames(&pod.Spec, c.visitor(Secret))
	visitPodConfigMapNames(&pod.Spec, c.visitor(ConfigMap))
	return c.refs
}

// NodeRefs returns the configmap named by the node's spec.configSource, if
// any.
func NodeRefs(node *corev1.Node) []Ref {
	src := node.Spec.ConfigSource
	if src == nil || src.ConfigMap == nil || src.ConfigMap.Name == "" || src.ConfigMap.Namespace == "" {
		return nil
	}
	return []Ref{{Kind: ConfigMap, Namespace: src.ConfigMap.Namespace, Name: src.ConfigMap.Name}}
}

// collector gathers distinct non-empty names of one namespace.
type collector struct {
	namespace string
	seen      map[Ref]bool
	refs      []Ref
}

func newCollector(namespace string) *collector {
	return &collector{namespace: namespace, seen: map[Ref]bool{}}
}

// visitor returns a function that records names of kind k.
func (c *collector) visitor(k Kind) func(string) {
	return func(name string) {
		if name == "" {
			return
		}
		r := Ref{Kind: k, Namespace: c.namespace, Name: name}
		if !c.seen[r] {
			c.seen[r] = true
			c.refs = append(c.refs, r)
		}
	}
}

// visitContainers calls visit for every container, init container and
// ephemeral container of spec.
func visitContainers(spec *corev1.PodSpec, visit func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource)) {
	for i := range spec.InitContainers {
		visit(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom)
	}
	for i := range spec.Containers {
		visit(spec.Containers[i].Env, spec.Containers[i].EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i].EphemeralContainerCommon
		visit(c.Env, c.EnvFrom)
	}
}
