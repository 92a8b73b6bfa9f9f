package cloudsync

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// cloudProto and cloudJSON encode objects as kube-apiserver does.
var (
	cloudProto = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	cloudJSON  = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{})
)

// encodeAs encodes obj, typed as gvk, with e.
func encodeAs(t testing.TB, e runtime.Encoder, obj runtime.Object, gvk schema.GroupVersionKind) []byte {
	t.Helper()
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	var b bytes.Buffer
	if err := e.Encode(obj, &b); err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b.Bytes()
}

// protoFixtures are objects with the encodings that differ most between
// JSON and protobuf: quantities, times, int-or-strings, byte data, maps.
func protoFixtures() []struct {
	name string
	obj  runtime.Object
	gvk  schema.GroupVersionKind
} {
	meta := metav1.ObjectMeta{
		Name: "a", Namespace: "ns", ResourceVersion: "42", UID: "0b6f1d2e-6a0c-4c2b-9e55-3c1f2a9d8e7f",
		Labels: map[string]string{"b": "2", "a": "1"}, Annotations: map[string]string{"x": "<&>"},
		CreationTimestamp: metav1.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC),
	}
	pod := &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
		Name: "c", Image: "registry.k8s.io/pause:3.10",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1.5Gi"),
		}},
		Ports: []corev1.ContainerPort{{ContainerPort: 80}},
	}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &meta.CreationTimestamp}}
	svc := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
		Port: 443, TargetPort: intstr.FromString("https"),
	}}}}
	ready := true
	slice := &discoveryv1.EndpointSlice{ObjectMeta: meta, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
	return []struct {
		name string
		obj  runtime.Object
		gvk  schema.GroupVersionKind
	}{
		{"pod", pod, corev1.SchemeGroupVersion.WithKind("Pod")},
		{"secret", &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"k": {0, 1, 0xff}}, Type: corev1.SecretTypeOpaque}, corev1.SchemeGroupVersion.WithKind("Secret")},
		{"configmap", &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"z": "1", "y": "\u2028"}}, corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		{"service", svc, corev1.SchemeGroupVersion.WithKind("Service")},
		{"endpointslice", slice, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")},
	}
}

// TestProtoStoresCloudJSON checks that an object the cloud sends in
// protobuf is stored byte for byte as the same object sent in JSON.
func TestProtoStoresCloudJSON(t *testing.T) {
	for _, tc := range protoFixtures() {
		t.Run(tc.name, func(t *testing.T) {
			// As an event or list item carries it: without the encoder's newline.
			want, _, err := versioncache.NewTypedObject(bytes.TrimSuffix(encodeAs(t, cloudJSON, tc.obj, tc.gvk), []byte("\n")))
			if err != nil {
				t.Fatalf("JSON fixture: %v", err)
			}
			p := &protoWatches{}
			got, _, err := protoSerializer{watches: p}.Decode(encodeAs(t, cloudProto, tc.obj, tc.gvk), nil, nil)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			o, err := ToObject(got)
			if err != nil {
				t.Fatalf("ToObject: %v", err)
			}
			if !bytes.Equal(o.Raw, want.Raw) {
				t.Errorf("got stored\n%s\nwant\n%s", o.Raw, want.Raw)
			}
			if o.RV != 42 || o.Name != "a" || p.accept() != protoAccept {
				t.Errorf("got %s at %d, Accept %q; want a at 42, protobuf still on", o.Name, o.RV, p.accept())
			}
		})
	}
}

// withUnknownField returns a protobuf object with a field its Go type
// lacks appended to its body, as a newer cloud's would have.
func withUnknownField(t *testing.T, data []byte) []byte {
	t.Helper()
	var unk runtime.Unknown
	if err := unk.Unmarshal(bytes.TrimPrefix(data, protoMagic)); err != nil {
		t.Fatal(err)
	}
	unk.Raw = protowire.AppendBytes(protowire.AppendTag(unk.Raw, 999, protowire.BytesType), []byte("new"))
	body, err := unk.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.Clone(protoMagic), body...)
}

// TestProtoRefusesWhatItCannotStore checks the objects that turn
// protobuf off: one with a field this build lacks, one of a kind it does
// not know, and bytes that are not protobuf.
func TestProtoRefusesWhatItCannotStore(t *testing.T) {
	secret := encodeAs(t, cloudProto, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"}}, corev1.SchemeGroupVersion.WithKind("Secret"))
	unknownKind := encodeAs(t, cloudProto, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"}}, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	for _, tc := range []struct {
		name      string
		data      []byte
		wantLossy bool
	}{
		{"unknown field", withUnknownField(t, secret), true},
		{"unknown kind", unknownKind, true},
		{"not protobuf", []byte(`{"kind":"Secret"}`), false},
		{"cut short", secret[:len(secret)-3], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &protoWatches{}
			obj, _, err := protoSerializer{watches: p}.Decode(tc.data, nil, nil)
			if err == nil {
				t.Fatalf("got %T, want an error", obj)
			}
			if errors.Is(err, errProtoLossy) != tc.wantLossy {
				t.Errorf("got %v, want lossy %v", err, tc.wantLossy)
			}
			if got := p.accept(); got != runtime.ContentTypeJSON {
				t.Errorf("got Accept %q after the error, want JSON alone", got)
			}
		})
	}
}

// TestProtoBookmarkAndStatus checks the two objects that are not stored.
func TestProtoBookmarkAndStatus(t *testing.T) {
	s := protoSerializer{watches: &protoWatches{}}
	mark := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "77", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	obj, _, err := s.Decode(encodeAs(t, cloudProto, mark, corev1.SchemeGroupVersion.WithKind("Secret")), nil, nil)
	if err != nil {
		t.Fatalf("decode bookmark: %v", err)
	}
	b, err := BookmarkOf(obj)
	if err != nil || b.RV != 77 || !b.InitialEventsEnd {
		t.Errorf("got bookmark %+v (%v), want 77 ending the initial events", b, err)
	}
	// A pod's bookmark is kept as what it tells, not as an empty pod.
	podMark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "78"}}
	obj, _, err = s.Decode(encodeAs(t, cloudProto, podMark, corev1.SchemeGroupVersion.WithKind("Pod")), nil, nil)
	if err != nil {
		t.Fatalf("decode pod bookmark: %v", err)
	}
	if b, err := BookmarkOf(obj); err != nil || b.RV != 78 || b.InitialEventsEnd {
		t.Errorf("got pod bookmark %+v (%v), want 78 not ending the initial events", b, err)
	}
	if r, ok := obj.(*rawObject); ok {
		t.Errorf("got pod bookmark encoded as JSON %s, want it kept as decoded", r.Raw)
	}
	if _, err := ToObject(obj); err == nil {
		t.Error("got a pod bookmark stored as an object, want it refused")
	}
	gone := &metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonExpired, Code: http.StatusGone, Message: "too old"}
	obj, _, err = s.Decode(encodeAs(t, cloudProto, gone, metav1.SchemeGroupVersion.WithKind("Status")), nil, nil)
	if st, ok := obj.(*metav1.Status); err != nil || !ok || st.Code != http.StatusGone {
		t.Errorf("got %#v (%v), want the 410 Status", obj, err)
	}
}

// protoCloud serves a configmap watch in protobuf when the request asks
// for it first, as kube-apiserver does, else in JSON; it records each
// watch's Accept header.
type protoCloud struct {
	t      *testing.T
	events []*metav1.WatchEvent // each event's object encoded in protobuf

	mu      sync.Mutex
	accepts []string // guarded by mu
}

func (c *protoCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.accepts = append(c.accepts, r.Header.Get("Accept"))
	c.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
		w.Header().Set("Content-Type", runtime.ContentTypeJSON)
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"}}}` + "\n"))
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
	fw := protobuf.LengthDelimitedFramer.NewFrameWriter(w)
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	for _, ev := range c.events {
		if err := raw.Encode(ev, fw); err != nil {
			c.t.Errorf("encode event: %v", err)
		}
	}
}

// TestRawWatchProtobuf watches through a RawClient: in protobuf, until an
// object it cannot store whole ends that watch and the next asks for JSON.
func TestRawWatchProtobuf(t *testing.T) {
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}}
	}
	cloud := &protoCloud{t: t, events: []*metav1.WatchEvent{
		{Type: string(watch.Added), Object: runtime.RawExtension{Raw: encodeAs(t, cloudProto, cm("a", "11"), cmGVK)}},
		{Type: string(watch.Bookmark), Object: runtime.RawExtension{Raw: encodeAs(t, cloudProto, cm("", "12"), cmGVK)}},
		{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: withUnknownField(t, encodeAs(t, cloudProto, cm("a", "13"), cmGVK))}},
	}}
	srv := httptest.NewServer(cloud)
	t.Cleanup(srv.Close)
	c, err := NewRawClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	lw := c.WithoutRetries().ListerWatcher(Resource{GVR: cmGVR, Namespace: "ns"})
	got := watchAll(t, lw.WatchWithContext)
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
	if o, err := ToObject(got[0].Object); err != nil || got[0].Type != watch.Added || o.Name != "a" || o.RV != 11 {
		t.Errorf("got %s %+v (%v), want ADDED a at 11", got[0].Type, o, err)
	}
	if rv, err := ResourceVersionOf(got[1].Object); got[1].Type != watch.Bookmark || rv != 12 || err != nil {
		t.Errorf("got %s at %d (%v), want BOOKMARK at 12", got[1].Type, rv, err)
	}
	if got[2].Type != watch.Error || !strings.Contains(Classify("watch event", statusError(got[2].Object)).Error(), errProtoLossy.Error()) {
		t.Errorf("got %s %v, want an ERROR saying the object cannot be stored whole", got[2].Type, got[2].Object)
	}
	again := watchAll(t, lw.WatchWithContext)
	if o, err := ToObject(again[0].Object); len(again) != 1 || err != nil || o.RV != 11 {
		t.Errorf("got %d events after the fallback, first %v (%v); want the JSON one at 11", len(again), again[0].Object, err)
	}
	cloud.mu.Lock()
	defer cloud.mu.Unlock()
	if want := []string{protoAccept, runtime.ContentTypeJSON}; strings.Join(cloud.accepts, "|") != strings.Join(want, "|") {
		t.Errorf("got Accept headers %q, want %q", cloud.accepts, want)
	}
}

// watchAll opens a watch with open and returns its events until it ends.
func watchAll(t *testing.T, open func(context.Context, metav1.ListOptions) (watch.Interface, error)) []watch.Event {
	t.Helper()
	w, err := open(context.Background(), metav1.ListOptions{ResourceVersion: "10"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	var got []watch.Event
	for ev := range w.ResultChan() {
		got = append(got, ev)
	}
	return got
}

// statusError is the error an ERROR event's Status carries.
func statusError(obj runtime.Object) error {
	if st, ok := obj.(*metav1.Status); ok {
		return errors.New(st.Message)
	}
	return errors.New("not a Status")
}

// FuzzProtoDecode feeds watch objects to protoSerializer: it may fail,
// never panic, and every object it stores has a name and came back whole.
func FuzzProtoDecode(f *testing.F) {
	for _, tc := range protoFixtures() {
		f.Add(encodeAs(f, cloudProto, tc.obj, tc.gvk))
	}
	f.Add(append(bytes.Clone(protoMagic), 0x0a, 0x00))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, _, err := protoSerializer{watches: &protoWatches{}}.Decode(data, nil, nil)
		if err != nil {
			return
		}
		if r, ok := obj.(*rawObject); ok && r.obj != nil && r.obj.Name == "" {
			t.Fatalf("stored object without a name from %x", data)
		}
	})
}

// TestJSONWatchesAskForJSON checks that a JSONWatches client's watches
// ask for JSON alone, and leave its parent's protobuf on.
func TestJSONWatchesAskForJSON(t *testing.T) {
	cloud := &protoCloud{t: t}
	srv := httptest.NewServer(cloud)
	t.Cleanup(srv.Close)
	c, err := NewRawClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := Resource{GVR: cmGVR, Namespace: "ns"}
	got := watchAll(t, c.JSONWatches().ListerWatcher(r).WatchWithContext)
	if o, err := ToObject(got[0].Object); len(got) != 1 || err != nil || o.RV != 11 {
		t.Errorf("got %d events (%v), want the JSON one at 11", len(got), err)
	}
	watchAll(t, c.ListerWatcher(r).WatchWithContext)
	cloud.mu.Lock()
	defer cloud.mu.Unlock()
	if want := []string{runtime.ContentTypeJSON, protoAccept}; strings.Join(cloud.accepts, "|") != strings.Join(want, "|") {
		t.Errorf("got Accept headers %q, want %q", cloud.accepts, want)
	}
}
