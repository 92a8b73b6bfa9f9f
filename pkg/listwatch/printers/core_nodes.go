package printers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Node role labels, as kubectl reads them.
const (
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	nodeLabelRole       = "kubernetes.io/role"
)

var nodeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the node"},
	{Name: "Roles", Type: "string", Description: "The roles of the node"},
	ageColumn,
	{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
	{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
	{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
	{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
}

func nodeRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var n corev1.Node
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, nil, fmt.Errorf("decode node: %w", err)
	}
	roles := strings.Join(nodeRoles(n.Labels), ",")
	if roles == "" {
		roles = noneValue
	}
	info := n.Status.NodeInfo
	return []any{n.Name, nodeStatus(&n), roles, age(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(&n, corev1.NodeInternalIP), nodeAddress(&n, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernelVersion(info), orUnknown(info.ContainerRuntimeVersion)}, nil, nil
}

// nodeStatus is the STATUS cell: Ready, NotReady or Unknown, then
// SchedulingDisabled when cordoned.
func nodeStatus(n *corev1.Node) string {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = []string{string(c.Type)}
		} else {
			status = []string{"Not" + string(c.Type)}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	return strings.Join(status, ",")
}

// kernelVersion is the KERNEL-VERSION cell: the kernel, followed by the
// architecture in parentheses when the node reports one, as kube-apiserver
// 1.36 prints it.
func kernelVersion(info corev1.NodeSystemInfo) string {
	k := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		k += " (" + info.Architecture + ")"
	}
	return k
}

// nodeRoles is kubectl's findNodeRoles, sorted.
func nodeRoles(labels map[string]string) []string {
	var roles []string
	for k, v := range labels {
		role := ""
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			role = strings.TrimPrefix(k, labelNodeRolePrefix)
		case k == nodeLabelRole:
			role = v
		}
		if role != "" && !slices.Contains(roles, role) {
			roles = append(roles, role)
		}
	}
	slices.Sort(roles)
	return roles
}

// nodeAddress is the first address of type t, or <none>.
func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return noneValue
}
