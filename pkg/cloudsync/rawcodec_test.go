package cloudsync

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzDecodeList feeds cloud LIST bodies to decodeList and ToObject: they
// may fail, never panic, and every object they return has a name.
func FuzzDecodeList(f *testing.F) {
	f.Add([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[` + cmItemA + `]}`))
	f.Add([]byte(`{"kind":"List","items":[{"metadata":{"name":"a","resourceVersion":"1"}},null,1]}`))
	f.Add([]byte(`{"items":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := decodeList(body)
		if err != nil {
			return
		}
		for _, it := range l.Items {
			o, err := ToObject(it)
			if err == nil && o.Name == "" {
				t.Fatalf("object without a name from %q", body)
			}
		}
	})
}

// podListPage is a JSON LIST page of n pods of about 9 KB each, as the
// benchmark data set has them: two containers, 54 environment variables.
func podListPage(b *testing.B, n int) []byte {
	b.Helper()
	l := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	l.ResourceVersion = "100"
	for i := range n {
		var env []corev1.EnvVar
		for j := range 54 {
			env = append(env, corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", j), Value: fmt.Sprintf("%064x", i*100+j)})
		}
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("pod-%d", i), Namespace: "bench", ResourceVersion: fmt.Sprint(i + 1),
			Labels: map[string]string{"app": "bench"}, UID: "0b6f1d2e-6a0c-4c2b-9e55-3c1f2a9d8e7f",
		}}
		p.Spec.NodeName = "node"
		for c := range 2 {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", c), Image: "registry.k8s.io/pause:3.10", Env: env})
		}
		l.Items = append(l.Items, p)
	}
	raw, err := json.Marshal(l)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkListPage compares turning one LIST page of pods into stored
// objects through the dynamic client's unstructured decode (then encoding
// and decoding each object again) with the raw path, which splits the page
// and decodes each object once.
func BenchmarkListPage(b *testing.B) {
	body := podListPage(b, listPageSize)
	b.Run("unstructured", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var l unstructured.UnstructuredList
			if err := l.UnmarshalJSON(body); err != nil {
				b.Fatal(err)
			}
			convertPage(b, &l)
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			l, err := decodeList(body)
			if err != nil {
				b.Fatal(err)
			}
			convertPage(b, l)
		}
	})
}

func convertPage(b *testing.B, page runtime.Object) {
	objs, err := appendItems(nil, page)
	if err != nil || len(objs) != listPageSize {
		b.Fatalf("got %d objects (%v), want %d", len(objs), err, listPageSize)
	}
	if _, err := meta.ListAccessor(page); err != nil {
		b.Fatal(err)
	}
}

// TestStoredBytesOwnTheirMemory checks that a stored object's bytes are
// its own, not a slice of the page or decoder buffer they came from:
// scribbling over the buffer afterwards leaves them intact.
func TestStoredBytesOwnTheirMemory(t *testing.T) {
	const item = `"metadata":{"name":"a","namespace":"ns","resourceVersion":"7"},"data":{"k":"v"}}`
	typed := `{"apiVersion":"v1","kind":"ConfigMap",` + item
	tests := []struct {
		name   string
		buf    string
		decode func(buf []byte) (runtime.Object, error)
		want   string
	}{
		{"list item with type", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[` + typed + `]}`, listItem, typed},
		{"list item without type", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[{` + item + `]}`, listItem, typed},
		{"watched, apiVersion first", typed, watched, typed},
		{"watched, kind first", `{"kind":"ConfigMap","apiVersion":"v1",` + item, watched, typed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte(tt.buf)
			obj, err := tt.decode(buf)
			if err != nil {
				t.Fatal(err)
			}
			o, err := ToObject(obj)
			if err != nil {
				t.Fatal(err)
			}
			for i := range buf {
				buf[i] = 'x'
			}
			if string(o.Raw) != tt.want {
				t.Errorf("got Raw %s, want %s", o.Raw, tt.want)
			}
		})
	}
}

// listItem decodes buf as a LIST page and returns its only item.
func listItem(buf []byte) (runtime.Object, error) {
	l, err := decodeList(buf)
	if err != nil {
		return nil, err
	}
	if len(l.Items) != 1 {
		return nil, fmt.Errorf("got %d items, want 1", len(l.Items))
	}
	return l.Items[0], nil
}

// watched decodes buf as the object of a watch event.
func watched(buf []byte) (runtime.Object, error) {
	obj, _, err := rawSerializer{}.Decode(buf, nil, nil)
	return obj, err
}
