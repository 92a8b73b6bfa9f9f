package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
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

var headerSeeds = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns","name":"p","uid":"6f1c","resourceVersion":"42","labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"\u00e9\n"}]}]}}`,
	`{"metadata":{"name":"a","resourceVersion":"5","uid":"u1","uid":"u2"},"kind":"Pod","apiVersion":"v1"}`,
	`{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1"}},"metadata":{"labels":{"y":null}},"metadata":null,"metadata":{"uid":"b"}}`,
	`{"meta\u0064ata":{"n\u0061me":"a","\u0075id":"\ud800","labels":{"\u00e9\ud800":"\xff"}}}`,
	`{"metadata":{"uid":7}}`, `{"metadata":{"uid":null,"name":[]}}`, `{"metadata":5}`, `[]`,
	` {"a":[1,-2.5e+3,true,false,null,{"b":"\"\\\/\b\f\n\r\t"}]} `,
	`{"metadata":`, `{"a":01}`, `{"a":"\x01"}`, `{"a":tru}`, `{"a":1,}`, `{,}`, `"x"`, `null`, ``, `{} {}`, `{"a":"\u12"}`,
}

// FuzzScanObject checks the header walk against kube's decoder: it
// accepts exactly what the decoder accepts and reads the same header,
// metadata.uid included; UID agrees with it.
func FuzzScanObject(f *testing.F) {
	for _, s := range headerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in := bytes.Clone(raw)
		sc, err := ScanObject(raw, "", "", nil)
		if !bytes.Equal(raw, in) {
			t.Fatalf("ScanObject changed its input")
		}
		var h refHeader
		refErr := utiljson.Unmarshal(raw, &h)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("got error %v, kube's decoder %v", err, refErr)
		}
		if err != nil {
			if uid := UID(raw); uid != "" {
				t.Fatalf("UID of a refused object: got %q, want \"\"", uid)
			}
			return
		}
		checkHeader(t, &sc, &h)
		if uid := UID(raw); uid != sc.UID {
			t.Fatalf("UID: got %q, want %q", uid, sc.UID)
		}
	})
}

func checkHeader(t *testing.T, sc *Scan, h *refHeader) {
	t.Helper()
	if sc.APIVersion != h.APIVersion || sc.Kind != h.Kind || sc.Metadata != (h.Metadata != nil) {
		t.Fatalf("got %q %q metadata %v, want %q %q %v", sc.APIVersion, sc.Kind, sc.Metadata, h.APIVersion, h.Kind, h.Metadata != nil)
	}
	m := h.Metadata
	if m == nil {
		if sc.Namespace != "" || sc.Name != "" || sc.ResourceVersion != "" || sc.UID != "" || sc.Labels != nil {
			t.Fatalf("got metadata members %+v without metadata", sc)
		}
		return
	}
	if sc.Namespace != m.Namespace || sc.Name != m.Name || sc.ResourceVersion != m.ResourceVersion || sc.UID != m.UID {
		t.Fatalf("got %q/%q@%q uid %q, want %q/%q@%q uid %q", sc.Namespace, sc.Name, sc.ResourceVersion, sc.UID,
			m.Namespace, m.Name, m.ResourceVersion, m.UID)
	}
	if !reflect.DeepEqual(sc.Labels, m.Labels) {
		t.Fatalf("got labels %#v, want %#v", sc.Labels, m.Labels)
	}
}

// FuzzReadList checks the list split against kube's decoder into raw
// items, and that each item's header is what ScanObject reads of it.
func FuzzReadList(f *testing.F) {
	f.Add([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[` + headerSeeds[0] + `,` + headerSeeds[1] + `]}`))
	f.Add([]byte(`{"kind":"List","items":[{"metadata":{"name":"a","uid":"u"}},null,1,"x",[{"}":"]"}]],"items":[ {} ]}`))
	f.Add([]byte(`{"items":[{"metadata":{"uid":1}}],"kind":"PodList","apiVersion":"v1"}`))
	f.Add([]byte(`{"items":{}}`))
	f.Add([]byte(`{"items":[{"a":"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var ref struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		refErr := utiljson.Unmarshal(body, &ref)
		l, err := ReadList(body, nil)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("got error %v, kube's decoder %v", err, refErr)
		}
		if err != nil {
			return
		}
		if l.APIVersion != ref.APIVersion || l.Kind != ref.Kind || len(l.Items) != len(ref.Items) || len(l.Scans) != len(l.Items) {
			t.Fatalf("got %q %q %d items %d scans, want %q %q %d", l.APIVersion, l.Kind, len(l.Items), len(l.Scans),
				ref.APIVersion, ref.Kind, len(ref.Items))
		}
		for i, it := range l.Items {
			if !bytes.Equal(it, ref.Items[i]) {
				t.Fatalf("got item %q, want %q", it, ref.Items[i])
			}
			want, wantErr := ScanObject(it, l.APIVersion, ItemKind(l.Kind), nil)
			got := l.Scans[i]
			if (got.Err() == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("item %q: got %+v (%v), want %+v (%v)", it, got, got.Err(), want, wantErr)
			}
		}
	})
}

// FuzzFrameScanner checks that a frame found in pieces is the frame found
// at once, and that a valid object followed by anything is found whole.
func FuzzFrameScanner(f *testing.F) {
	f.Add([]byte(" {\"a\":\"}\\\"{\",\"b\":[{}]}\n{}"), uint16(5))
	f.Add([]byte(`{"type":"ADDED","object":{"k":"\\"}}`), uint16(30))
	f.Add([]byte(`[1]`), uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		var whole FrameScanner
		n, err := whole.Len(b)
		var pieces FrameScanner
		k := int(cut) % (len(b) + 1)
		pn, perr := pieces.Len(b[:k])
		if perr != nil && errors.Is(perr, ErrIncomplete) {
			pn, perr = pieces.Len(b)
		}
		if pn != n || (perr == nil) != (err == nil) {
			t.Fatalf("got %d, %v in pieces, want %d, %v", pn, perr, n, err)
		}
		var v json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(b))
		if dec.Decode(&v) == nil && len(v) > 0 && v[0] == '{' {
			if end := int(dec.InputOffset()); err != nil || n != end {
				t.Fatalf("got %d, %v, want the object's end %d", n, err, end)
			}
		}
	})
}

// FuzzSplitWatchEvent checks the envelope split against kube's decoder:
// the same type and object bytes for an event it decodes; for one it
// refuses, a refusal or an object that is not valid JSON.
func FuzzSplitWatchEvent(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}`))
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status"},"object":null,"type":"X"}`))
	f.Add([]byte(`{"object":{"a":}},"object":{}}`))
	f.Add([]byte(`{"type":1,"object":[1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, obj, err := SplitWatchEvent(b)
		var ref metav1.WatchEvent
		refErr := utiljson.Unmarshal(b, &ref)
		if refErr == nil {
			if err != nil || typ != ref.Type || !bytes.Equal(obj, ref.Object.Raw) {
				t.Fatalf("got %q %q %v, want %q %q", typ, obj, err, ref.Type, ref.Object.Raw)
			}
			return
		}
		if err == nil && (obj == nil || json.Valid(obj)) {
			t.Fatalf("split an event kube's decoder refuses (%v): %q %q", refErr, typ, obj)
		}
	})
}
