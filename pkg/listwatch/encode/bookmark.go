package encode

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BookmarkObject is the JSON object of a BOOKMARK: kind and apiVersion,
// and metadata with only resourceVersion and, for the end of a WatchList's
// initial events, the k8s.io/initial-events-end annotation.
func BookmarkObject(kind, apiVersion string, rv uint64, initialEventsEnd bool) []byte {
	b := []byte(`{"kind":`)
	b = appendJSONString(b, kind)
	b = append(b, `,"apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	b = append(b, `,"metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rv, 10)
	b = append(b, '"')
	if initialEventsEnd {
		b = append(b, `,"annotations":{"`+metav1.InitialEventsAnnotationKey+`":"true"}`...)
	}
	return append(b, "}}"...)
}
