package jsonscan

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestGroupKind(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		want             schema.GroupKind
	}{
		{"v1", "Pod", schema.GroupKind{Kind: "Pod"}},
		{"events.k8s.io/v1", "Event", schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}},
		{"a/b/c", "Pod", schema.GroupKind{Group: "a/b/c", Kind: "Pod"}},
	}
	for _, tt := range tests {
		if got := GroupKind(tt.apiVersion, tt.kind); got != tt.want {
			t.Errorf("GroupKind(%q, %q): got %v, want %v", tt.apiVersion, tt.kind, got, tt.want)
		}
	}
}

func TestUID(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"set", `{"metadata":{"name":"a","uid":"u1"}}`, "u1"},
		{"last of repeated", `{"metadata":{"uid":"u1"},"metadata":{"uid":"u2"}}`, "u2"},
		{"escaped key", `{"metadata":{"u\u0069d":"u3"}}`, "u3"},
		{"metadata null after", `{"metadata":{"uid":"u1"},"metadata":null}`, ""},
		{"absent", `{"metadata":{"name":"a"}}`, ""},
		{"not a string", `{"metadata":{"uid":7}}`, ""},
		{"other case", `{"metadata":{"UID":"u1"}}`, ""},
		{"nested elsewhere", `{"spec":{"metadata":{"uid":"x"}}}`, ""},
		{"not JSON", `{"metadata":{"uid":"u1"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UID([]byte(tc.raw)); got != tc.want {
				t.Errorf("UID(%s) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}

// podPaths reads a pod's spec.nodeName into slot 0 and status.podIPs[0].ip
// into slot 2 (slot 1 is "1" while podIPs is non-empty).
var podPaths = Paths{Obj("spec", Str("nodeName", 0)), Obj("status", First("podIPs", 1, Str("ip", 2)))}

type podKinds struct{}

func (podKinds) Paths(gk schema.GroupKind) Paths {
	if gk == (schema.GroupKind{Kind: "Pod"}) {
		return podPaths
	}
	return nil
}

func TestScanObjectPaths(t *testing.T) {
	tests := []struct {
		name, raw      string
		node, ips, ip0 string
	}{
		{"read as its kind", `{"kind":"Pod","apiVersion":"v1","spec":{"nodeName":"n"},"status":{"podIPs":[{"ip":"a"},{"ip":"b"}]}}`, "n", "1", "a"},
		{"kind after the fields", `{"spec":{"nodeName":"n"},"kind":"Pod","apiVersion":"v1"}`, "n", "", ""},
		{"another kind reads none", `{"kind":"Node","apiVersion":"v1","spec":{"nodeName":"n"}}`, "", "", ""},
		{"empty podIPs", `{"kind":"Pod","apiVersion":"v1","status":{"podIPs":[]}}`, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := ScanObject([]byte(tc.raw), "", "", podKinds{})
			if err != nil {
				t.Fatalf("ScanObject: %v", err)
			}
			v := sc.Values()
			if v[0] != tc.node || v[1] != tc.ips || v[2] != tc.ip0 {
				t.Errorf("got %q %q %q, want %q %q %q", v[0], v[1], v[2], tc.node, tc.ips, tc.ip0)
			}
		})
	}
}

func TestScanAsFieldErr(t *testing.T) {
	sc, err := ScanAs([]byte(`{"kind":"Node","spec":{"nodeName":1}}`), schema.GroupKind{Kind: "Pod"}, podPaths)
	if err != nil {
		t.Fatalf("got error %v, want none: a wrongly typed field is FieldErr", err)
	}
	if sc.FieldErr() == nil {
		t.Errorf("got no FieldErr, want one for spec.nodeName 1")
	}
	if got := sc.GroupKindOf(); got.Kind != "Pod" {
		t.Errorf("got kind %v, want Pod", got)
	}
}
