package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestEventRow(t *testing.T) {
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }
	microAgo := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(tableNow.Add(-d)) }
	pod := corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{app}"}
	requireRows(t, schema.GroupResource{Resource: "events"}, []rowCase{
		{"old API", &corev1.Event{ObjectMeta: meta("web-1.1"), InvolvedObject: pod, Type: "Warning", Reason: "BackOff",
			Message: " Back-off restarting \n", Source: corev1.EventSource{Component: "kubelet", Host: "edge-1"},
			FirstTimestamp: ago(time.Hour), LastTimestamp: ago(time.Minute), Count: 7},
			[]any{"60s", "Warning", "BackOff", "pod/web-1", "spec.containers{app}", "kubelet, edge-1",
				"Back-off restarting", "60m", int64(7), "web-1.1"}},
		{"new API singleton", &corev1.Event{ObjectMeta: meta("n.1"), InvolvedObject: corev1.ObjectReference{Kind: "Node"},
			Type: "Normal", Reason: "Starting", EventTime: microAgo(2 * time.Minute), ReportingController: "kubelet"},
			[]any{"2m", "Normal", "Starting", "node", "", "kubelet", "", "2m", int64(1), "n.1"}},
		{"series", &corev1.Event{ObjectMeta: meta("s.1"), InvolvedObject: pod, EventTime: microAgo(time.Hour),
			ReportingController: "ctl", ReportingInstance: "ctl-1",
			Series: &corev1.EventSeries{Count: 4, LastObservedTime: microAgo(3 * time.Second)}},
			[]any{"3s", "", "", "pod/web-1", "spec.containers{app}", "ctl, ctl-1", "", "60m", int64(4), "s.1"}},
		{"no times", &corev1.Event{ObjectMeta: meta("x")},
			[]any{"<unknown>", "", "", "", "", "", "", "<unknown>", int64(1), "x"}},
	})
	requireRows(t, schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, []rowCase{
		{"events.k8s.io", &eventsv1.Event{ObjectMeta: meta("e.1"), Regarding: pod, Type: "Normal", Reason: "Pulled",
			Note: "pulled", EventTime: microAgo(time.Hour), ReportingController: "kubelet", ReportingInstance: "edge-1",
			Series: &eventsv1.EventSeries{Count: 2, LastObservedTime: microAgo(10 * time.Second)}},
			[]any{"10s", "Normal", "Pulled", "pod/web-1", "spec.containers{app}", "kubelet, edge-1", "pulled", "60m", int64(2), "e.1"}},
		{"deprecated fields", &eventsv1.Event{ObjectMeta: meta("e.2"), Regarding: pod, Note: "n",
			DeprecatedSource: corev1.EventSource{Component: "old"}, DeprecatedFirstTimestamp: ago(2 * time.Hour),
			DeprecatedLastTimestamp: ago(time.Hour), DeprecatedCount: 3},
			[]any{"60m", "", "", "pod/web-1", "spec.containers{app}", "old", "n", "120m", int64(3), "e.2"}},
	})
}
