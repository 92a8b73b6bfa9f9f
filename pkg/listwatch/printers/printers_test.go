package printers

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var tableNow = time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC)

func TestPodRow(t *testing.T) {
	started := true
	always := corev1.ContainerRestartPolicyAlways
	finished := metav1.NewTime(tableNow.Add(-5 * time.Minute))
	deleted := metav1.NewTime(tableNow)
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	tests := []struct {
		name string
		pod  corev1.Pod
		want []any // READY, STATUS, RESTARTS
	}{
		{"running and ready", corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running}, {Name: "b", Ready: false, State: running}}},
		}, []any{"1/2", "Running", "0"}},
		{"crash looping", corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "a", RestartCount: 3,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: finished}}}}},
		}, []any{"0/1", "CrashLoopBackOff", "3 (5m ago)"}},
		{"initializing", corev1.Pod{
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}, {Name: "i2"}}, Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
				{Name: "i2", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}},
		}, []any{"0/1", "Init:1/2", "0"}},
		{"init failed", corev1.Pod{
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}}, Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}},
		}, []any{"0/1", "Init:ExitCode:2", "0"}},
		{"sidecar", corev1.Pod{
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "s", RestartPolicy: &always}}, Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions:            []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
				InitContainerStatuses: []corev1.ContainerStatus{{Name: "s", Started: &started, Ready: true, RestartCount: 1, State: running}},
				ContainerStatuses:     []corev1.ContainerStatus{{Name: "a", Ready: true, State: running}}},
		}, []any{"2/2", "Running", "1"}},
		{"completed", corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: "a",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}},
		}, []any{"0/1", "Completed", "0"}},
		{"terminating", corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}, []any{"0/1", "Terminating", "0"}},
		{"scheduling gated", corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Reason: corev1.PodReasonSchedulingGated}}},
		}, []any{"0/1", "SchedulingGated", "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(&tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			cells, _, err := podRow(raw, tableNow)
			if err != nil {
				t.Fatalf("podRow: %v", err)
			}
			if got := cells[1:4]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got READY/STATUS/RESTARTS %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodeRow(t *testing.T) {
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", CreationTimestamp: metav1.NewTime(tableNow.Add(-49 * time.Hour)),
			Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.0", OSImage: "Debian", KernelVersion: "6.1", Architecture: "arm64",
				ContainerRuntimeVersion: "containerd://2.0"},
		},
	}
	raw, err := json.Marshal(&n)
	if err != nil {
		t.Fatal(err)
	}
	cells, _, err := nodeRow(raw, tableNow)
	if err != nil {
		t.Fatalf("nodeRow: %v", err)
	}
	want := []any{"n1", "NotReady", "control-plane,edge", "2d1h", "v1.36.0", "10.0.0.1", "<none>", "Debian", "6.1 (arm64)", "containerd://2.0"}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("got cells %v, want %v", cells, want)
	}
}
