package kinds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
)

// refHeader is the header as kube's decoder reads it.
type refHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   *struct {
		Namespace       string            `json:"namespace"`
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		UID             string            `json:"uid"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
}

// listDefaults are the apiVersion and kind a list may lend its items.
var listDefaults = [][2]string{{"", ""}, {"v1", "Pod"}, {"v1", "Node"}, {"events.k8s.io/v1", "Event"}, {"v1", ""}}

var scanSeeds = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"42","labels":{"app":"web"}},` +
		`"spec":{"nodeName":"n1","restartPolicy":"Always","schedulerName":"s","serviceAccountName":"sa","hostNetwork":true,` +
		`"containers":[{"name":"c","image":"i","env":[{"name":"A","value":"\u00e9\n"}]}]},` +
		`"status":{"phase":"Running","podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.1"},{"ip":"fd00::1"}],"nominatedNodeName":"n2"}}`,
	`{"metadata":{"name":"a","resourceVersion":"5"},"spec":{"nodeName":"n"},"kind":"Pod","apiVersion":"v1"}`,
	`{"kind":"Pod","spec":{"nodeName":1},"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"status":{"podIPs":[{"ip":"a"}],"podIPs":[{}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"status":{"podIPs":[{"ip":"a"}],"podIPs":[],"podIPs":[{}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"status":{"podIPs":[null,5]}}`,
	`{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1"}},"metadata":{"labels":{"y":null}},"metadata":null,"metadata":{"name":"b"}}`,
	`{"meta\u0064ata":{"n\u0061me":"a","resourceVersion":"3","labels":{"\u00e9\ud800":"\xff"}}}`,
	`{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"a","resourceVersion":"1"},"status":{"replicas":2147483648}}`,
	`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","resourceVersion":"2"},"status":{"succeeded":-0}}`,
	`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","resourceVersion":"2"},"status":{"succeeded":1.0}}`,
	`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s","resourceVersion":"2"},"spec":{"nodeName":"x","nodeName":null}}`,
	`{"apiVersion":"v1","kind":"Event","metadata":{"namespace":"ns","name":"e","resourceVersion":"9"},"involvedObject":{"kind":"Pod","name":"p"},"source":{"component":"kubelet"},"type":null}`,
	`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","resourceVersion":"9"},"regarding":{"uid":7}}`,
	`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","resourceVersion":"1"},"status":{"phase":"Active"}}`,
	`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","resourceVersion":"1"},"spec":{"unschedulable":"yes"}}`,
	`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","resourceVersion":"2"},"type":5}`,
	` {"a":[1,-2.5e+3,true,false,null,{"b":"\"\\\/\b\f\n\r\t"}]} `,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"u1","resourceVersion":"1","uid":"u2"}}`,
	`{"metadata":{"name":"a","uid":7,"resourceVersion":"1"}}`, `{"metadata":{"name":"a","uid":null}}`,
	`{"metadata":`, `{"a":01}`, `{"a":"\x01"}`, `{"a":tru}`, `{"a":1,}`, `{,}`, `[1,2]`, `"x"`, `null`, ``, `{} {}`, `{"a":"\u12"}`,
}

// FuzzScanObject checks the one walk against kube's decoder: it accepts
// exactly what the decoder accepts, reads the same header, and reads the
// same selectable fields (or refuses the same wrongly typed ones).
func FuzzScanObject(f *testing.F) {
	for _, s := range scanSeeds {
		for d := range listDefaults {
			f.Add([]byte(s), uint8(d))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, d uint8) {
		def := listDefaults[int(d)%len(listDefaults)]
		in := bytes.Clone(raw)
		sc, err := Builtin.ScanObject(raw, def[0], def[1])
		if !bytes.Equal(raw, in) {
			t.Fatalf("ScanObject changed its input")
		}
		var h refHeader
		refErr := utiljson.Unmarshal(raw, &h)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("got error %v, kube's decoder %v", err, refErr)
		}
		if err != nil {
			return
		}
		checkHeader(t, &sc, &h)
		if !sc.Metadata || sc.Name == "" {
			return // refused as nameless before any field is read
		}
		checkFields(t, &sc, raw, &h, def)
	})
}

func checkHeader(t *testing.T, sc *jsonscan.Scan, h *refHeader) {
	t.Helper()
	if sc.APIVersion != h.APIVersion || sc.Kind != h.Kind || sc.Metadata != (h.Metadata != nil) {
		t.Fatalf("got %q %q metadata %v, want %q %q %v", sc.APIVersion, sc.Kind, sc.Metadata, h.APIVersion, h.Kind, h.Metadata != nil)
	}
	if h.Metadata == nil {
		return
	}
	m := h.Metadata
	if sc.Namespace != m.Namespace || sc.Name != m.Name || sc.ResourceVersion != m.ResourceVersion || sc.UID != m.UID {
		t.Fatalf("got %q/%q@%q uid %q, want %q/%q@%q uid %q", sc.Namespace, sc.Name, sc.ResourceVersion, sc.UID,
			m.Namespace, m.Name, m.ResourceVersion, m.UID)
	}
	if !reflect.DeepEqual(sc.Labels, m.Labels) {
		t.Fatalf("got labels %#v, want %#v", sc.Labels, m.Labels)
	}
}

func checkFields(t *testing.T, sc *jsonscan.Scan, raw []byte, h *refHeader, def [2]string) {
	t.Helper()
	av, k := h.APIVersion, h.Kind
	if av == "" {
		av = def[0]
	}
	if k == "" {
		k = def[1]
	}
	gk := jsonscan.GroupKind(av, k)
	if sc.GroupKindOf() != gk {
		t.Fatalf("got kind %v, want %v", sc.GroupKindOf(), gk)
	}
	got, err := Builtin.Fields(sc, raw)
	want := fields.Set{FieldName: sc.Name, FieldNamespace: sc.Namespace}
	var refErr error
	if ref := refExtract[gk]; ref != nil {
		refErr = ref(raw, want)
	}
	if (err == nil) != (refErr == nil) {
		t.Fatalf("got fields error %v, kube's decoder %v", err, refErr)
	}
	if err == nil && got.String() != want.String() {
		t.Fatalf("got fields %v, want %v", got, want)
	}
}

// FuzzReadList checks the list read against kube's decoder into raw
// items: it refuses what the decoder refuses, splits a body the decoder
// takes into the same items, and reads each as ScanObject does.
func FuzzReadList(f *testing.F) {
	f.Add([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"c"},"items":[` + scanSeeds[0] + `,` + scanSeeds[1] + `]}`))
	f.Add([]byte(`{"kind":"List","items":[{"metadata":{"name":"a","resourceVersion":"1"}},null,1,"x",[{"}":"]"}]],"items":[ {} ]}`))
	f.Add([]byte(`{"items":[{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"nodeName":1}}],"kind":"PodList","apiVersion":"v1"}`))
	f.Add([]byte(`{"items":{}}`))
	f.Add([]byte(`{"items":[{"a":"\"}"}],"metadata":null,"metadata":{"x":1}}`))
	f.Add([]byte(`{"items":[{"a":"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var ref struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		refErr := utiljson.Unmarshal(body, &ref)
		checkReadList(t, body, refErr)
		if refErr != nil {
			return
		}
		l, _ := Builtin.ReadList(body)
		if l.APIVersion != ref.APIVersion || l.Kind != ref.Kind || len(l.Items) != len(ref.Items) {
			t.Fatalf("got %q %q %d items, want %q %q %d", l.APIVersion, l.Kind, len(l.Items), ref.APIVersion, ref.Kind, len(ref.Items))
		}
		for i := range l.Items {
			if !bytes.Equal(l.Items[i], ref.Items[i]) {
				t.Fatalf("got item %q, want %q", l.Items[i], ref.Items[i])
			}
		}
	})
}

// checkReadList checks that ReadList refuses what kube's decoder refuses
// (refErr), and reads each item as ScanObject does on its own.
func checkReadList(t *testing.T, body []byte, refErr error) {
	t.Helper()
	l, err := Builtin.ReadList(body)
	if (err == nil) != (refErr == nil) {
		t.Fatalf("ReadList: got error %v, kube's decoder %v", err, refErr)
	}
	if err != nil {
		return
	}
	if len(l.Scans) != len(l.Items) {
		t.Fatalf("got %d scans of %d items", len(l.Scans), len(l.Items))
	}
	for i, it := range l.Items {
		want, wantErr := Builtin.ScanObject(it, l.APIVersion, jsonscan.ItemKind(l.Kind))
		got := l.Scans[i]
		if (got.Err() == nil) != (wantErr == nil) {
			t.Fatalf("item %q: got error %v, want %v", it, got.Err(), wantErr)
		}
		gf, gerr := Builtin.Fields(&got, it)
		wf, werr := Builtin.Fields(&want, it)
		if fmt.Sprint(got.APIVersion, got.Kind, got.Metadata, got.Namespace, got.Name, got.ResourceVersion, got.UID, got.Labels, gf, gerr) !=
			fmt.Sprint(want.APIVersion, want.Kind, want.Metadata, want.Namespace, want.Name, want.ResourceVersion, want.UID, want.Labels, wf, werr) {
			t.Fatalf("item %q: got %+v, want %+v", it, got, want)
		}
	}
}
