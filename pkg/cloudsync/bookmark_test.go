package cloudsync

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestBookmarkOf(t *testing.T) {
	end := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	end.SetResourceVersion("42")
	end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	for _, tt := range []struct {
		name    string
		raw     string
		want    Bookmark
		wantErr bool
	}{
		{"progress bookmark", `{"kind":"Secret","apiVersion":"v1","metadata":{"resourceVersion":"41"}}`, Bookmark{RV: 41}, false},
		{"end of the initial events", `{"kind":"Secret","apiVersion":"v1","metadata":{"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}`,
			Bookmark{RV: 42, InitialEventsEnd: true}, false},
		{"annotation not true", `{"metadata":{"resourceVersion":"43","annotations":{"k8s.io/initial-events-end":"false"}}}`, Bookmark{RV: 43}, false},
		{"no resourceVersion", `{"metadata":{}}`, Bookmark{}, true},
		{"annotations not a map", `{"metadata":{"resourceVersion":"1","annotations":[1]}}`, Bookmark{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BookmarkOf(&rawObject{Raw: []byte(tt.raw)})
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if got, err := BookmarkOf(end); err != nil || got != (Bookmark{RV: 42, InitialEventsEnd: true}) {
		t.Errorf("decoded bookmark: got %+v, %v; want RV 42 ending the initial events", got, err)
	}
}

// FuzzBookmarkOf reads cloud bookmarks, network input: it never panics,
// and reads what it accepts the same way every time.
func FuzzBookmarkOf(f *testing.F) {
	f.Add([]byte(`{"metadata":{"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}`))
	f.Add([]byte(`{"metadata":{"resourceVersion":"-1"}}`))
	f.Add([]byte(`{"metadata":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := BookmarkOf(&rawObject{Raw: raw})
		if err != nil {
			return
		}
		again, err := BookmarkOf(&rawObject{Raw: raw})
		if err != nil || again != b {
			t.Fatalf("%q read twice: %+v then %+v, %v", raw, b, again, err)
		}
	})
}
