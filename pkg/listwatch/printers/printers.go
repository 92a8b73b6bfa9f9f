package printers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Printer renders rows of one resource the way kube-apiserver's table
// convertor for it does (pkg/printers/internalversion/printers.go, always
// generated wide: kubectl drops the priority-1 columns unless -o wide).
type Printer struct {
	Columns []metav1.TableColumnDefinition
	// Row returns the cells and conditions of one object's raw JSON;
	// now is the server time ages are measured against.
	Row func(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error)
	// EmptyRows makes an empty Table's rows [] rather than null, as kube's
	// resource printers (not its default convertor) answer.
	EmptyRows bool
}

// For returns the printer of gr: kube's resource printer where one exists,
// else the default convertor.
func For(gr schema.GroupResource) Printer {
	if p, ok := printers[gr]; ok {
		return p
	}
	return defaultPrinter
}

// defaultPrinter is kube-apiserver's default table convertor
// (pkg/registry/rest/table.go): Name and Created At.
var defaultPrinter = Printer{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Created At", Type: "date", Description: createdDescription},
	},
	Row: func(raw []byte, _ time.Time) ([]any, []metav1.TableRowCondition, error) {
		m, err := ObjectMeta(raw)
		if err != nil {
			return nil, nil, err
		}
		return []any{m.Name, m.CreationTimestamp.UTC().Format(time.RFC3339)}, nil, nil
	},
}

// ObjectMeta decodes the metadata of an object's raw JSON.
func ObjectMeta(raw []byte) (metav1.ObjectMeta, error) {
	var doc struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return metav1.ObjectMeta{}, fmt.Errorf("decode metadata: %w", err)
	}
	return doc.Metadata, nil
}

// Column descriptions, as kube's printers take them from the API docs.
var (
	nameDescription    = metav1.ObjectMeta{}.SwaggerDoc()["name"]
	createdDescription = metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]
)

// Placeholders kube's printers show for unset values.
const (
	noneValue    = "<none>"
	unknownValue = "<unknown>"
	// nodeUnreachablePodReason is the reason the node lifecycle controller
	// gives pods of a lost node.
	nodeUnreachablePodReason = "NodeLost"
	// Node role labels, as kubectl reads them.
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	nodeLabelRole       = "kubernetes.io/role"
)

// printers are the resource-specific convertors; other resources get the
// default Name and Created At columns.
var printers = map[schema.GroupResource]Printer{
	{Resource: "pods"}: {Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		{Name: "Age", Type: "string", Description: createdDescription},
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	}, Row: podRow, EmptyRows: true},
	{Resource: "nodes"}: {Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		{Name: "Age", Type: "string", Description: createdDescription},
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	}, Row: nodeRow, EmptyRows: true},
	{Resource: "namespaces"}: {Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		{Name: "Age", Type: "string", Description: createdDescription},
	}, Row: namespaceRow, EmptyRows: true},
	{Resource: "secrets"}: {Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		{Name: "Age", Type: "string", Description: createdDescription},
	}, Row: secretRow, EmptyRows: true},
	{Group: coordinationv1.GroupName, Resource: "leases"}: {Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		{Name: "Age", Type: "string", Description: createdDescription},
	}, Row: leaseRow, EmptyRows: true},
	{Resource: "configmaps"}: {Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		{Name: "Age", Type: "string", Description: createdDescription},
	}, Row: configMapRow, EmptyRows: true},
}

// Row conditions of finished pods.
var (
	podSuccessConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
		Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
		Reason: string(corev1.PodFailed), Message: "The pod failed."}}
)

// age is kube's translateTimestampSince.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return unknownValue
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func configMapRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var cm corev1.ConfigMap
	if err := json.Unmarshal(raw, &cm); err != nil {
		return nil, nil, fmt.Errorf("decode configmap: %w", err)
	}
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}, nil, nil
}

func namespaceRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var ns corev1.Namespace
	if err := json.Unmarshal(raw, &ns); err != nil {
		return nil, nil, fmt.Errorf("decode namespace: %w", err)
	}
	return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}, nil, nil
}

func leaseRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var l coordinationv1.Lease
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, nil, fmt.Errorf("decode lease: %w", err)
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []any{l.Name, holder, age(l.CreationTimestamp, now)}, nil, nil
}

func secretRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var s corev1.Secret
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, fmt.Errorf("decode secret: %w", err)
	}
	return []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp, now)}, nil, nil
}

func nodeRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var n corev1.Node
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, nil, fmt.Errorf("decode node: %w", err)
	}
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
	roles := strings.Join(nodeRoles(n.Labels), ",")
	if roles == "" {
		roles = noneValue
	}
	info := n.Status.NodeInfo
	return []any{n.Name, strings.Join(status, ","), roles, age(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(&n, corev1.NodeInternalIP), nodeAddress(&n, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernelVersion(info), orUnknown(info.ContainerRuntimeVersion)}, nil, nil
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

func orUnknown(s string) string {
	if s == "" {
		return unknownValue
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return noneValue
	}
	return s
}

func podRow(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
	var pod corev1.Pod
	if err := json.Unmarshal(raw, &pod); err != nil {
		return nil, nil, fmt.Errorf("decode pod: %w", err)
	}
	st := podState(&pod)
	restarts := strconv.Itoa(st.restarts)
	if st.restarts != 0 && !st.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", st.restarts, age(st.lastRestart, now))
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	cells := []any{pod.Name, fmt.Sprintf("%d/%d", st.ready, st.total), st.reason, restarts,
		age(pod.CreationTimestamp, now), orNone(podIP), orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName), readinessGates(&pod)}
	var conditions []metav1.TableRowCondition
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		conditions = podSuccessConditions
	case corev1.PodFailed:
		conditions = podFailedConditions
	}
	return cells, conditions, nil
}

// readinessGates is "true gates/all gates", or <none>.
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return noneValue
	}
	trueConditions := 0
	for _, g := range pod.Spec.ReadinessGates {
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType {
				if c.Status == corev1.ConditionTrue {
					trueConditions++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
}
