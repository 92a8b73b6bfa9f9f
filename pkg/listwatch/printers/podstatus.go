package printers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podSummary is what kubectl's pod columns show: a faithful port of
// printPod in kube's pkg/printers/internalversion/printers.go.
type podSummary struct {
	ready, total int
	reason       string
	restarts     int
	lastRestart  metav1.Time
}

// restartTracker sums restart counts and remembers the latest restart.
type restartTracker struct {
	count int
	last  metav1.Time
}

func (r *restartTracker) add(c *corev1.ContainerStatus) {
	r.count += int(c.RestartCount)
	if t := c.LastTerminationState.Terminated; t != nil && r.last.Before(&t.FinishedAt) {
		r.last = t.FinishedAt
	}
}

// podState computes the READY, STATUS and RESTARTS columns.
func podState(pod *corev1.Pod) podSummary {
	s := podSummary{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.reason = corev1.PodReasonSchedulingGated
		}
	}
	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInit(&pod.Spec.InitContainers[i]) {
			s.total++
		}
	}
	var all, sidecars restartTracker
	initializing := s.initStatus(pod, initContainers, &all, &sidecars)
	s.restarts, s.lastRestart = all.count, all.last
	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		s.restarts, s.lastRestart = s.containerStatus(pod, sidecars)
	}
	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		s.reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		s.reason = "Terminating"
	}
	return s
}

// initStatus walks the init container statuses: it counts restarts (all,
// and of restartable sidecars), counts started sidecars that are ready, and
// sets the Init:... reason of the first init container still blocking. It
// reports whether the pod is still initializing.
func (s *podSummary) initStatus(pod *corev1.Pod, specs map[string]*corev1.Container, all, sidecars *restartTracker) bool {
	n := len(pod.Spec.InitContainers)
	for i := range pod.Status.InitContainerStatuses {
		c := &pod.Status.InitContainerStatuses[i]
		all.add(c)
		restartable := isRestartableInit(specs[c.Name])
		if restartable {
			sidecars.add(c)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case restartable && c.Started != nil && *c.Started:
			if c.Ready {
				s.ready++
			}
			continue
		case c.State.Terminated != nil:
			s.reason = initTerminatedReason(c.State.Terminated)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.reason = "Init:" + c.State.Waiting.Reason
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, n)
		}
		return true
	}
	return false
}

func initTerminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return "Init:" + t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Init:Signal:%d", t.Signal)
	default:
		return fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
	}
}

// containerStatus walks the regular containers from the last one: it sets
// the reason from their states, counts the ready running ones and returns
// the restarts, starting from those of the sidecars.
func (s *podSummary) containerStatus(pod *corev1.Pod, restarts restartTracker) (int, metav1.Time) {
	hasRunning := false
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := &pod.Status.ContainerStatuses[i]
		restarts.add(c)
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			s.reason = c.State.Waiting.Reason
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			s.reason = c.State.Terminated.Reason
		case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
			s.reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
		case c.State.Terminated != nil:
			s.reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			s.ready++
		}
	}
	// Back to Running while at least one container still runs.
	if s.reason == "Completed" && hasRunning {
		s.reason = "NotReady"
		if podConditionTrue(pod, corev1.PodReady) {
			s.reason = "Running"
		}
	}
	return restarts.count, restarts.last
}

func isRestartableInit(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podConditionTrue reports whether the pod has condition t with status True.
func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
