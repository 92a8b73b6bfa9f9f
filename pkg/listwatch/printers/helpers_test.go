package printers

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// created is a creation time five minutes before tableNow: age "5m".
var created = metav1.NewTime(tableNow.Add(-5 * time.Minute))

// rowCase is one object and the cells kube prints for it.
type rowCase struct {
	name string
	obj  any
	want []any
}

// requireRows prints each case's object with gr's printer and requires the
// cells, one per column.
func requireRows(t *testing.T, gr schema.GroupResource, cases []rowCase) {
	t.Helper()
	p := For(gr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			cells, _, err := p.Row(raw, tableNow)
			if err != nil {
				t.Fatalf("row of %s: %v", gr, err)
			}
			if !reflect.DeepEqual(cells, tc.want) {
				t.Errorf("got cells %#v, want %#v", cells, tc.want)
			}
			if len(cells) != len(p.Columns) {
				t.Errorf("got %d cells, want one per column (%d)", len(cells), len(p.Columns))
			}
		})
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
