package encode

import (
	"encoding/json"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// ListMeta is a list's metadata.
type ListMeta struct {
	RV        uint64
	Continue  string // metadata.continue; "" for the last page
	Remaining *int64 // metadata.remainingItemCount; nil when unknown
}

// JSONList returns the parts of {"kind":"<Kind>List","apiVersion":...,
// "metadata":{"resourceVersion":"<rv>"[,"continue":...]
// [,"remainingItemCount":n]},"items":[...]} with the items' raw JSON.
func JSONList(res Resource, objs []*versioncache.Object, meta ListMeta) [][]byte {
	parts := [][]byte{listHead(res.Kind+"List", res.APIVersion(), meta)}
	parts = append(parts, listItems(res, objs)...)
	return append(parts, listTail)
}

var (
	comma    = []byte{','}
	listTail = []byte("]}\n")
)

// listHead is a list body up to and including the opening of items.
func listHead(kind, apiVersion string, meta ListMeta) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	b = append(b, `,"metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, meta.RV, 10)
	b = append(b, '"')
	if meta.Continue != "" {
		b = append(b, `,"continue":`...)
		b = appendJSONString(b, meta.Continue)
	}
	if meta.Remaining != nil {
		b = append(b, `,"remainingItemCount":`...)
		b = strconv.AppendInt(b, *meta.Remaining, 10)
	}
	return append(b, `},"items":[`...)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
