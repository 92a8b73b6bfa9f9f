package versioncache

import (
	"bytes"
	"strconv"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func FuzzNewObject(f *testing.F) {
	seeds := []string{
		string(podJSON("ns", "p", 5, "web", "n1")),
		`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"42"},"spec":{"hostNetwork":true},"status":{"podIPs":[{"ip":"fd00::1"}]}}`,
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","resourceVersion":"1"},"spec":{"unschedulable":true}}`,
		`{"metadata":{"name":"a","resourceVersion":"1","resourceVersion":"2"},"metadata":{"name":"b"}}`,
		"{\n \"metadata\" : {\"name\":\"a\",\"resourceVersion\":\"007\"}}\n",
		`{"metadata":{"name":"a","resourceVersion":"18446744073709551615"}}`,
		`{"metadata":{"name":"a","resourceVersion":"abc"}}`,
		`{"meta\u0064ata":{"name":"a","resource\u0056ersion":"3"}}`,
		`{"metadata":null,"metadata":{"name":"a","resourceVersion":"4","resourceVersion":null}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"spec":{"unschedulable":"x"}}`,
		`{"apiVersion":"example.com/v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"spec":"x"}`,
		`{"apiVersion":"v1","kind":"Event","metadata":{"namespace":"ns","name":"e","resourceVersion":"9"},"involvedObject":{"kind":"Pod","name":"p"},"source":{"component":"kubelet"}}`,
		`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","resourceVersion":"9"},"regarding":{"uid":7}}`,
		`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s","resourceVersion":"2"},"spec":{"nodeName":null,"driver":"d"}}`,
		`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","resourceVersion":"2"},"status":{"succeeded":3}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","resourceVersion":"2"},"type":5}`,
		`{"metadata":`,
		`null`,
		`[]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in := bytes.Clone(raw)
		o, err := NewObject(raw)
		if err != nil {
			return
		}
		if &o.Raw[0] != &raw[0] || !bytes.Equal(o.Raw, in) {
			t.Fatalf("got Raw %q, want the input unchanged", o.Raw)
		}
		var h struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := utiljson.Unmarshal(raw, &h); err != nil {
			t.Fatalf("NewObject accepted what Unmarshal rejects: %v", err)
		}
		if rv, err := strconv.ParseUint(h.Metadata.ResourceVersion, 10, 64); err != nil || rv != o.RV {
			t.Fatalf("got RV %d, want metadata.resourceVersion %q", o.RV, h.Metadata.ResourceVersion)
		}
		checkWithRV(t, o, o.RV/2+1)
	})
}

// checkWithRV checks that o.WithRV(rv) decodes back to o at rv.
func checkWithRV(t *testing.T, o *Object, rv uint64) {
	t.Helper()
	c, err := o.WithRV(rv)
	if err != nil {
		t.Fatalf("WithRV(%d) of a decoded object: %v", rv, err)
	}
	back, err := NewObject(c.Raw)
	if err != nil {
		t.Fatalf("NewObject(WithRV(%d)) = %q: %v", rv, c.Raw, err)
	}
	if back.RV != rv || c.RV != rv {
		t.Fatalf("got RV %d (copy %d), want %d", back.RV, c.RV, rv)
	}
	if back.Namespace != o.Namespace || back.Name != o.Name ||
		back.Labels.String() != o.Labels.String() || back.Fields.String() != o.Fields.String() {
		t.Fatalf("got %+v, want %+v apart from RV", back, o)
	}
}
