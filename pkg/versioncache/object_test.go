package versioncache

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache/kinds"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestNewObjectFields(t *testing.T) {
	meta := func(ns, name string) fields.Set {
		return fields.Set{"metadata.name": name, "metadata.namespace": ns}
	}
	pod := func(ns, name string, extra fields.Set) fields.Set {
		fs := meta(ns, name)
		defaults := fields.Set{
			"spec.nodeName": "", "spec.restartPolicy": "", "spec.schedulerName": "",
			"spec.serviceAccountName": "", "spec.hostNetwork": "false", "status.phase": "",
			"status.podIP": "", "status.nominatedNodeName": "",
		}
		for k, v := range defaults {
			fs[k] = v
		}
		for k, v := range extra {
			fs[k] = v
		}
		return fs
	}
	tests := []struct {
		name       string
		raw        string
		wantNS     string
		wantName   string
		wantRV     uint64
		wantLabels labels.Set
		wantFields fields.Set
	}{
		{
			name: "full pod",
			raw: `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"42","labels":{"app":"web"}},
				"spec":{"nodeName":"n1","restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"sa","hostNetwork":true},
				"status":{"phase":"Running","podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.1"},{"ip":"fd00::1"}],"nominatedNodeName":"n2"}}`,
			wantNS: "ns", wantName: "p", wantRV: 42, wantLabels: labels.Set{"app": "web"},
			wantFields: pod("ns", "p", fields.Set{
				"spec.nodeName": "n1", "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
				"spec.serviceAccountName": "sa", "spec.hostNetwork": "true", "status.phase": "Running",
				"status.podIP": "10.0.0.1", "status.nominatedNodeName": "n2",
			}),
		},
		{
			name:   "minimal pod sets hostNetwork false and empty nodeName",
			raw:    `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"1"}}`,
			wantNS: "ns", wantName: "p", wantRV: 1,
			wantFields: pod("ns", "p", nil),
		},
		{
			name:   "pod IP from podIPs when podIP is empty",
			raw:    `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"1"},"status":{"podIPs":[{"ip":"fd00::2"}]}}`,
			wantNS: "ns", wantName: "p", wantRV: 1,
			wantFields: pod("ns", "p", fields.Set{"status.podIP": "fd00::2"}),
		},
		{
			name:   "podIP wins over a different podIPs[0]",
			raw:    `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"1"},"status":{"podIP":"10.0.0.9","podIPs":[{"ip":"10.0.0.8"}]}}`,
			wantNS: "ns", wantName: "p", wantRV: 1,
			wantFields: pod("ns", "p", fields.Set{"status.podIP": "10.0.0.9"}),
		},
		{
			name:   "deprecated serviceAccount fills serviceAccountName",
			raw:    `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","resourceVersion":"1"},"spec":{"serviceAccount":"old"}}`,
			wantNS: "ns", wantName: "p", wantRV: 1,
			wantFields: pod("ns", "p", fields.Set{"spec.serviceAccountName": "old"}),
		},
		{
			name:     "unschedulable node",
			raw:      `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","resourceVersion":"7"},"spec":{"unschedulable":true}}`,
			wantName: "n1", wantRV: 7,
			wantFields: fields.Set{"metadata.name": "n1", "metadata.namespace": "", "spec.unschedulable": "true"},
		},
		{
			name:     "schedulable node",
			raw:      `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","resourceVersion":"7","labels":{"zone":"a"}}}`,
			wantName: "n1", wantRV: 7, wantLabels: labels.Set{"zone": "a"},
			wantFields: fields.Set{"metadata.name": "n1", "metadata.namespace": "", "spec.unschedulable": "false"},
		},
		{
			name:   "service cluster IP and type",
			raw:    `{"apiVersion":"v1","kind":"Service","metadata":{"namespace":"ns","name":"s","resourceVersion":"4"},"spec":{"clusterIP":"None","type":"ClusterIP"}}`,
			wantNS: "ns", wantName: "s", wantRV: 4,
			wantFields: fields.Set{"metadata.name": "s", "metadata.namespace": "ns", "spec.clusterIP": "None", "spec.type": "ClusterIP"},
		},
		{
			name:   "secret type",
			raw:    `{"apiVersion":"v1","kind":"Secret","metadata":{"namespace":"ns","name":"t","resourceVersion":"5"},"type":"kubernetes.io/tls"}`,
			wantNS: "ns", wantName: "t", wantRV: 5,
			wantFields: fields.Set{"metadata.name": "t", "metadata.namespace": "ns", "type": "kubernetes.io/tls"},
		},
		{
			name:     "namespace phase and legacy name",
			raw:      `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns","resourceVersion":"6"},"status":{"phase":"Active"}}`,
			wantName: "ns", wantRV: 6,
			wantFields: fields.Set{"metadata.name": "ns", "metadata.namespace": "", "status.phase": "Active", "name": "ns"},
		},
		{
			name:   "custom kind with an object type field",
			raw:    `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"namespace":"ns","name":"w","resourceVersion":"8"},"type":{"a":1}}`,
			wantNS: "ns", wantName: "w", wantRV: 8,
			wantFields: meta("ns", "w"),
		},
		{
			name:   "configmap has metadata fields only",
			raw:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"kube-system","name":"cm","resourceVersion":"18446744073709551615"},"data":{"a":"b"}}`,
			wantNS: "kube-system", wantName: "cm", wantRV: 18446744073709551615,
			wantFields: meta("kube-system", "cm"),
		},
		{
			name:   "pod kind of another group is not a core pod",
			raw:    `{"apiVersion":"example.com/v1","kind":"Pod","metadata":{"namespace":"ns","name":"x","resourceVersion":"3"},"spec":{"nodeName":5}}`,
			wantNS: "ns", wantName: "x", wantRV: 3,
			wantFields: meta("ns", "x"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := MustNewObject(t, []byte(tt.raw))
			if o.Namespace != tt.wantNS || o.Name != tt.wantName {
				t.Errorf("got %s/%s, want %s/%s", o.Namespace, o.Name, tt.wantNS, tt.wantName)
			}
			if o.RV != tt.wantRV {
				t.Errorf("got RV %d, want %d", o.RV, tt.wantRV)
			}
			if got := labels.Set(maps.Collect(o.Labels.All())); !labels.Equals(got, tt.wantLabels) {
				t.Errorf("got labels %v, want %v", o.Labels, tt.wantLabels)
			}
			if got, want := o.Fields.String(), tt.wantFields.String(); got != want {
				t.Errorf("got fields %s, want %s", got, want)
			}
			if string(o.Raw) != tt.raw {
				t.Errorf("got Raw %s, want it unchanged", o.Raw)
			}
		})
	}
}

func TestNewObjectKeepsRaw(t *testing.T) {
	raw := podJSON("ns", "p", 5, "web", "n1")
	o := MustNewObject(t, raw)
	if &o.Raw[0] != &raw[0] || len(o.Raw) != len(raw) {
		t.Errorf("got a copy of Raw, want the given slice")
	}
}

func TestNewObjectErrors(t *testing.T) {
	tests := []struct {
		name, raw, wantErr string
	}{
		{"invalid json", `{"metadata":`, "decode object"},
		{"not an object", `[1,2]`, "decode object"},
		{"null", `null`, "missing metadata.name"},
		{"empty", ``, "decode object"},
		{"no metadata", `{"kind":"Pod"}`, "missing metadata.name"},
		{"metadata not an object", `{"metadata":"x"}`, "decode object"},
		{"missing name", `{"metadata":{"resourceVersion":"1"}}`, "missing metadata.name"},
		{"missing rv", `{"metadata":{"name":"a"}}`, "missing metadata.resourceVersion"},
		{"rv not a number", `{"metadata":{"name":"a","resourceVersion":"abc"}}`, `invalid metadata.resourceVersion "abc"`},
		{"rv zero", `{"metadata":{"name":"a","resourceVersion":"0"}}`, `invalid metadata.resourceVersion "0"`},
		{"rv negative", `{"metadata":{"name":"a","resourceVersion":"-1"}}`, `invalid metadata.resourceVersion "-1"`},
		{"rv overflows", `{"metadata":{"name":"a","resourceVersion":"18446744073709551616"}}`, "invalid metadata.resourceVersion"},
		{"rv as json number", `{"metadata":{"name":"a","resourceVersion":5}}`, "decode object"},
		{"keys are case-sensitive", `{"Metadata":{"Name":"a","ResourceVersion":"1"}}`, "missing metadata.name"},
		{"label value not a string", `{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":1}}}`, "decode object"},
		{"pod nodeName not a string", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"spec":{"nodeName":1}}`, "fields of Pod"},
		{"pod status not an object", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"1"},"status":[]}`, "fields of Pod"},
		{"node unschedulable not a bool", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","resourceVersion":"1"},"spec":{"unschedulable":"yes"}}`, "fields of Node"},
		{"trailing data", `{"metadata":{"name":"a","resourceVersion":"1"}} x`, "decode object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := NewObject([]byte(tt.raw))
			if err == nil {
				t.Fatalf("got object %+v, want error containing %q", o, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestWithRV(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{
			name: "compact",
			raw:  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"5","uid":"u"},"spec":{"x":1.5}}`,
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"99","uid":"u"},"spec":{"x":1.5}}`,
		},
		{
			name: "whitespace dropped, integers kept",
			raw:  "{\n  \"spec\": {\"n\": 1234567890123, \"resourceVersion\": \"5\"},\n  \"metadata\" : { \"resourceVersion\" :\t\"5\", \"name\": \"a\"}\n}\n",
			want: `{"metadata":{"name":"a","resourceVersion":"99"},"spec":{"n":1234567890123,"resourceVersion":"5"}}`,
		},
		{
			name: "nested resourceVersion keys elsewhere untouched",
			raw:  `{"metadata":{"name":"a","resourceVersion":"5","annotations":{"resourceVersion":"5"}},"metadata2":{"resourceVersion":"5"}}`,
			want: `{"metadata":{"annotations":{"resourceVersion":"5"},"name":"a","resourceVersion":"99"},"metadata2":{"resourceVersion":"5"}}`,
		},
		{
			name: "missing resourceVersion is added",
			raw:  `{"metadata":{"name":"a"},"z":1}`,
			want: `{"metadata":{"name":"a","resourceVersion":"99"},"z":1}`,
		},
		{
			name: "missing metadata is added",
			raw:  `{"kind":"X"}`,
			want: `{"kind":"X","metadata":{"resourceVersion":"99"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Object{Name: "a", RV: 5, Raw: []byte(tt.raw), Labels: MustPairs(t, map[string]string{"k": "v"})}
			got, err := o.WithRV(99)
			if err != nil {
				t.Fatalf("WithRV: %v", err)
			}
			if string(got.Raw) != tt.want {
				t.Errorf("got Raw %s, want %s", got.Raw, tt.want)
			}
			if got.RV != 99 || got.Name != "a" || got.Labels.Get("k") != "v" {
				t.Errorf("got %+v, want a copy with RV 99", got)
			}
			if o.RV != 5 || string(o.Raw) != tt.raw {
				t.Errorf("original changed: got RV %d Raw %s", o.RV, o.Raw)
			}
		})
	}
}

func TestWithRVErrors(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"not json", `{"metadata":`},
		{"array", `[]`},
		{"metadata not an object", `{"metadata":[1]}`},
		{"trailing data", `{"metadata":{"resourceVersion":"1"}}{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Object{Name: "a", RV: 1, Raw: []byte(tt.raw)}
			if got, err := o.WithRV(2); err == nil {
				t.Errorf("got %s, want error", got.Raw)
			}
		})
	}
	var nilObj *Object
	if _, err := nilObj.WithRV(1); err == nil {
		t.Errorf("got nil error for a nil object, want error")
	}
}

func TestWithRVRoundTrip(t *testing.T) {
	o := MustNewObject(t, podJSON("ns", "p", 7, "web", "n1"))
	c, err := o.WithRV(1234)
	if err != nil {
		t.Fatalf("WithRV: %v", err)
	}
	back := MustNewObject(t, c.Raw)
	if back.RV != 1234 || back.Name != "p" || back.Fields.Get("spec.nodeName") != "n1" {
		t.Errorf("got %+v, want p at RV 1234 on n1", back)
	}
	if back.Fields.String() != o.Fields.String() || back.Labels.String() != o.Labels.String() {
		t.Errorf("got fields %v labels %v, want %v %v", back.Fields, back.Labels, o.Fields, o.Labels)
	}
}

// Adding a kind is one table entry: an object of that kind then carries
// the entry's fields.
func TestNewObjectWithInjectedTable(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	table := kinds.Table{gk: {
		Labels: sets.New(kinds.FieldName, "spec.color"),
		Extract: func(raw []byte, fs fields.Set) error {
			fs["spec.color"] = "red"
			return nil
		},
		ExtraFields: 1,
	}}
	raw := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":"3"}}`
	o, err := newObject(table, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "w", "metadata.namespace": "", "spec.color": "red"}
	if o.Fields.String() != want.String() {
		t.Errorf("got fields %v, want %v", o.Fields, want)
	}
	o, err = NewObject([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if o.Fields.Has("spec.color") {
		t.Errorf("got spec.color from the builtin table, want only metadata fields")
	}
}

func TestNewListItem(t *testing.T) {
	tests := []struct {
		name, raw, apiVersion, kind string
		want                        string
		wantErr                     bool
	}{
		{
			name: "type meta inserted", raw: `{"metadata":{"name":"a","resourceVersion":"5"},"spec":{"nodeName":"n"}}`,
			apiVersion: "v1", kind: "Pod",
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"5"},"spec":{"nodeName":"n"}}`,
		},
		{
			name: "leading whitespace", raw: " \n{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}",
			apiVersion: "v1", kind: "Pod",
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}`,
		},
		{
			name: "own type meta kept, put first", raw: `{"kind":"Widget","apiVersion":"x.io/v1","metadata":{"name":"a","resourceVersion":"5"}}`,
			apiVersion: "v1", kind: "Pod",
			want: `{"apiVersion":"x.io/v1","kind":"Widget","metadata":{"name":"a","resourceVersion":"5"}}`,
		},
		{
			name: "watch order swapped", raw: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"}}`,
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}`,
		},
		{
			name: "other orders kept as is", raw: `{"metadata":{"name":"a","resourceVersion":"5"},"kind":"Pod","apiVersion":"v1"}`,
			want: `{"metadata":{"name":"a","resourceVersion":"5"},"kind":"Pod","apiVersion":"v1"}`,
		},
		{name: "no name", raw: `{"metadata":{"resourceVersion":"5"}}`, apiVersion: "v1", kind: "Pod", wantErr: true},
		{name: "not an object", raw: `[]`, apiVersion: "v1", kind: "Pod", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := NewListItem([]byte(tt.raw), tt.apiVersion, tt.kind)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if string(o.Raw) != tt.want {
				t.Errorf("got %s, want %s", o.Raw, tt.want)
			}
			if o.Name != "a" || o.RV != 5 {
				t.Errorf("got %s at %d, want a at 5", o.Name, o.RV)
			}
		})
	}
	// A Pod item's selectable fields are read although its kind came from
	// the list.
	o, err := NewListItem([]byte(tests[0].raw), "v1", "Pod")
	if err != nil || o.Fields.Get("spec.nodeName") != "n" {
		t.Errorf("got fields %v (%v), want spec.nodeName=n", o.Fields, err)
	}
}

// TestObjectHoldsNoTree checks that an Object keeps its bytes and flat
// string sets only: no decoded JSON tree (maps or slices of any, or
// interfaces) survives construction.
func TestObjectHoldsNoTree(t *testing.T) {
	typ := reflect.TypeFor[Object]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "enc" {
			continue // the lazily filled cache of other encodings
		}
		if k := holdsAny(f.Type); k != "" {
			t.Errorf("field %s holds %s, want bytes or strings only", f.Name, k)
		}
	}
}

// holdsAny names the first interface type reachable in t, "" if none.
func holdsAny(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Interface:
		return t.String()
	case reflect.Map:
		if s := holdsAny(t.Key()); s != "" {
			return s
		}
		return holdsAny(t.Elem())
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return holdsAny(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if s := holdsAny(t.Field(i).Type); s != "" {
				return s
			}
		}
	}
	return ""
}

func TestObjectUID(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"set", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"6f1c","resourceVersion":"1"}}`, "6f1c"},
		{"last of repeated", `{"metadata":{"uid":"a","name":"p","resourceVersion":"1","uid":"b"}}`, "b"},
		{"none", `{"metadata":{"name":"p","resourceVersion":"1"}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewObject([]byte(tc.raw))
			if err != nil {
				t.Fatalf("NewObject: %v", err)
			}
			if o.UID != tc.want {
				t.Errorf("got UID %q, want %q", o.UID, tc.want)
			}
			moved, err := o.WithRV(o.RV + 1)
			if err != nil {
				t.Fatalf("WithRV: %v", err)
			}
			if moved.UID != tc.want {
				t.Errorf("WithRV: got UID %q, want %q", moved.UID, tc.want)
			}
		})
	}
	if _, err := NewObject([]byte(`{"metadata":{"name":"p","resourceVersion":"1","uid":7}}`)); err == nil {
		t.Errorf("NewObject of a numeric uid: got no error, want kube's decoder's refusal")
	}
}
