package printers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeUnreachablePodReason is the reason the node lifecycle controller
// gives pods of a lost node.
const nodeUnreachablePodReason = "NodeLost"

var podColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
	{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
	{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
	ageColumn,
	{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
	{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
	{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
	{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
}

// Row conditions of finished pods.
var (
	podSuccessConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
		Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
		Reason: string(corev1.PodFailed), Message: "The pod failed."}}
)

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
