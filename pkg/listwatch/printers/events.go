package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// eventsPrinters are kube's printers of events.k8s.io: its Events are the
// core Events, printed with the same columns.
func eventsPrinters() map[schema.GroupResource]Printer {
	return map[schema.GroupResource]Printer{
		{Group: eventsv1.GroupName, Resource: "events"}: resourcePrinter(eventColumns,
			func(e *eventsv1.Event, now time.Time) []any { return eventRow(coreEvent(e), now) }),
	}
}

var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
	{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
	{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
	{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: nameDescription},
}

// eventRow is kube's printEvent, wide.
func eventRow(e *corev1.Event, now time.Time) []any {
	first := age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1 // singleton events of the new API have no count
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, e.InvolvedObject.Name)
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		eventSource(e), strings.TrimSpace(e.Message), first, int64(count), e.Name}
}

// eventSource is kube's formatEventSource: component[, host], each taken
// from the reporting fields of the new API when the old ones are empty.
func eventSource(e *corev1.Event) string {
	component := firstNonEmpty(e.Source.Component, e.ReportingController)
	host := firstNonEmpty(e.Source.Host, e.ReportingInstance)
	if host == "" {
		return component
	}
	return component + ", " + host
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// coreEvent is the core Event an events.k8s.io Event converts to, as far as
// the printer reads it (kube's Convert_v1_Event_To_core_Event).
func coreEvent(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}
