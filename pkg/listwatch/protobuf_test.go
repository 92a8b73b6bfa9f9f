package listwatch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// contentTypeRecorder records the Content-Type of every response.
type contentTypeRecorder struct {
	mu    sync.Mutex
	types []string
}

func (cr *contentTypeRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil {
			cr.mu.Lock()
			cr.types = append(cr.types, resp.Header.Get("Content-Type"))
			cr.mu.Unlock()
		}
		return resp, err
	})
}

func (cr *contentTypeRecorder) take() []string {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	t := cr.types
	cr.types = nil
	return t
}

// clientsets returns a protobuf clientset, with a recorder of its answers'
// content types, and a JSON one.
func clientsets(t *testing.T, host string) (pb *kubernetes.Clientset, rec *contentTypeRecorder, js *kubernetes.Clientset) {
	t.Helper()
	rec = &contentTypeRecorder{}
	pb, err := kubernetes.NewForConfig(&rest.Config{Host: host, WrapTransport: rec.wrap,
		ContentConfig: rest.ContentConfig{ContentType: response.MediaTypeProtobuf}})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	js, err = kubernetes.NewForConfig(&rest.Config{Host: host,
		ContentConfig: rest.ContentConfig{ContentType: response.MediaTypeJSON, AcceptContentTypes: response.MediaTypeJSON}})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return pb, rec, js
}

func wantTypes(t *testing.T, rec *contentTypeRecorder, want string) {
	t.Helper()
	got := rec.take()
	if len(got) == 0 {
		t.Fatalf("got no responses, want %q", want)
	}
	for _, g := range got {
		if g != want {
			t.Errorf("got Content-Type %q, want %q", g, want)
		}
	}
}

// A protobuf clientset gets, lists (with selectors) and watches protobuf
// answers whose objects equal the JSON ones.
func TestProtobufClientGo(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	pb, rec, js := clientsets(t, srv.URL)
	ctx := context.Background()

	gotPod, err := pb.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	wantTypes(t, rec, response.MediaTypeProtobuf)
	wantPod, err := js.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod as JSON: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(gotPod, wantPod) {
		t.Errorf("got pod %+v, want %+v", gotPod, wantPod)
	}

	_, err = pb.CoreV1().Pods("default").Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("got error %v, want NotFound", err)
	}
	wantTypes(t, rec, response.MediaTypeProtobuf) // the Status is protobuf, as kube's ErrorNegotiated

	for _, opts := range []metav1.ListOptions{
		{},
		{FieldSelector: "spec.nodeName=node-a"},
		{LabelSelector: "app=web"},
		{Limit: 1},
	} {
		got, err := pb.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			t.Fatalf("list pods %+v: %v", opts, err)
		}
		wantTypes(t, rec, response.MediaTypeProtobuf)
		want, err := js.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			t.Fatalf("list pods %+v as JSON: %v", opts, err)
		}
		if !apiequality.Semantic.DeepEqual(got, want) {
			t.Errorf("list %+v: got %+v, want %+v", opts, got, want)
		}
	}
	leases, err := pb.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	if err != nil || len(leases.Items) != 1 || leases.Items[0].Name != "node-a" {
		t.Errorf("got leases %+v, %v, want node-a", leases, err)
	}
	wantTypes(t, rec, response.MediaTypeProtobuf)

	w, err := pb.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: "20", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	wantTypes(t, rec, response.MediaTypeProtobufWatch)
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-b", "Running", nil))
	ev := nextEvent(t, w)
	wantPod, err = js.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod as JSON: %v", err)
	}
	if ev.Type != watch.Modified || !apiequality.Semantic.DeepEqual(ev.Object, wantPod) {
		t.Errorf("got event %s %+v, want MODIFIED %+v", ev.Type, ev.Object, wantPod)
	}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed")
		}
		return ev
	case <-time.After(waitTimeout):
		t.Fatalf("no event within %s", waitTimeout)
	}
	return watch.Event{}
}

// A protobuf informer syncs, with and without WatchList, and sees a later
// change.
func TestProtobufInformer(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(map[bool]string{false: "list and watch", true: "WatchList"}[watchList], func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			f := newFixture(t)
			srv := MustServer(t, Config{Caches: f.caches()})
			pb, rec, _ := clientsets(t, srv.URL)
			inf := runPodInformer(t, pb)
			if got, want := inf.GetStore().ListKeys(), []string{"default/web-1", "kube-system/dns-1"}; !sameKeys(got, want) {
				t.Errorf("got keys %v after sync, want %v", got, want)
			}
			MustApply(t, f.pods, 21, watch.Added, podJSON("default", "new", 21, "node-a", "Pending", nil))
			waitForKeys(t, inf, []string{"default/new", "default/web-1", "kube-system/dns-1"})
			for _, ct := range rec.take() {
				if ct != response.MediaTypeProtobuf && ct != response.MediaTypeProtobufWatch {
					t.Errorf("got Content-Type %q, want protobuf", ct)
				}
			}
		})
	}
}

// Kinds client-go's scheme does not know (custom resources) are served in
// JSON (and YAML), not protobuf; the 406 lists the media types as
// kube-apiserver's custom resource handler does.
func TestProtobufUnknownKindJSON(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	c := MustCache(t, gvr, 5, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","resourceVersion":"5"}}`)
	c.SetInfo(metav1.APIResource{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: []string{"get", "list", "watch"}})
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{c}})
	for _, path := range []string{"/apis/example.com/v1/widgets", "/apis/example.com/v1/namespaces/default/widgets/w"} {
		r := MustDo(t, http.MethodGet, srv.URL+path, http.Header{"Accept": {"application/vnd.kubernetes.protobuf,application/json"}}, "")
		if ct := r.header.Get("Content-Type"); r.code != 200 || ct != response.MediaTypeJSON {
			t.Errorf("%s: got %d %q, want 200 %q", path, r.code, ct, response.MediaTypeJSON)
		}
		r = MustDo(t, http.MethodGet, srv.URL+path, http.Header{"Accept": {response.MediaTypeProtobuf}}, "")
		if r.code != http.StatusNotAcceptable {
			t.Errorf("%s protobuf only: got %d, want 406", path, r.code)
		}
		if st := MustStatus(t, r); st.Reason != metav1.StatusReasonNotAcceptable ||
			st.Message != "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf" {
			t.Errorf("%s protobuf only: got %q %q", path, st.Reason, st.Message)
		}
	}
}

// The protobuf list is byte for byte what apimachinery's serializer makes
// of the typed list.
func TestProtobufListBytes(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	for _, tc := range []struct{ path, query string }{
		{"/api/v1/pods", ""},
		{"/api/v1/pods", "limit=1"},
		{"/api/v1/namespaces/default/configmaps", ""},
		{"/apis/coordination.k8s.io/v1/leases", ""},
		{"/api/v1/pods", "labelSelector=app%3Dnone"},
	} {
		url := srv.URL + tc.path + "?" + tc.query
		pbResp := MustDo(t, http.MethodGet, url, http.Header{"Accept": {response.MediaTypeProtobuf}}, "")
		jsResp := MustDo(t, http.MethodGet, url, http.Header{"Accept": {response.MediaTypeJSON}}, "")
		if pbResp.code != 200 || jsResp.code != 200 {
			t.Fatalf("%s: got %d and %d, want 200", url, pbResp.code, jsResp.code)
		}
		list, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(jsResp.body), nil, nil)
		if err != nil {
			t.Fatalf("decode JSON list: %v", err)
		}
		gv := list.GetObjectKind().GroupVersionKind().GroupVersion()
		var want bytes.Buffer
		if err := scheme.Codecs.EncoderForVersion(response.ProtobufInfo.Serializer, gv).Encode(list, &want); err != nil {
			t.Fatalf("encode list: %v", err)
		}
		if pbResp.body != want.String() {
			t.Errorf("%s: got protobuf %q, want %q", url, pbResp.body, want.String())
		}
	}
}

// The protobuf encoding of an object is made once and its bytes reused by
// GET, LIST and watch.
func TestProtobufBytesReused(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	accept := http.Header{"Accept": {response.MediaTypeProtobuf}}
	get1 := MustDo(t, http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods/web-1", accept, "")
	obj, _, err := f.pods.Get("default", "web-1")
	if err != nil || obj == nil {
		t.Fatalf("cache get: %v", err)
	}
	calls := 0
	cached, err := obj.Encoded(encode.ProtobufKey, func([]byte) ([]byte, error) { calls++; return nil, nil })
	if err != nil || calls != 0 || string(cached) != get1.body {
		t.Fatalf("got cached %q (%d encodes, %v), want the GET body without encoding", cached, calls, err)
	}
	pc := encode.ProtobufFor(encode.Resource{GVR: podsGVR, Kind: "Pod"})
	again, err := pc.Object(obj)
	if err != nil || &again[0] != &cached[0] {
		t.Errorf("got a new encoding (%v), want the cached bytes", err)
	}
	// Two watchers of one event share one frame, whose object is the
	// object's cached encoding.
	var frames [][]byte
	var watchers []*versioncache.Watcher
	for range 2 {
		w, err := f.pods.Watch(20, false, versioncache.Predicate{})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		watchers = append(watchers, w)
	}
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-b", "Running", nil))
	for _, w := range watchers {
		select {
		case ev := <-w.Events():
			b, err := pc.EventFrame(&ev, ev.Type)
			if err != nil {
				t.Fatalf("frame: %v", err)
			}
			frames = append(frames, b)
		case <-time.After(waitTimeout):
			t.Fatalf("no event")
		}
	}
	if &frames[0][0] != &frames[1][0] {
		t.Errorf("got two encodings of one event, want one shared frame")
	}
	obj21, _, _ := f.pods.Get("default", "web-1")
	b21, _ := pc.Object(obj21)
	if !bytes.Contains(frames[0], b21) {
		t.Errorf("frame %q does not hold the object's encoding %q", frames[0], b21)
	}
}

// A protobuf watch stream: length-prefixed WatchEvents, a WatchList's
// initial events and its annotated bookmark, and ERROR events, all in
// protobuf.
func TestProtobufWatchStream(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	accept := http.Header{"Accept": {response.MediaTypeProtobuf + ";stream=watch"}}
	tests := []struct {
		name, query string
		want        []string // type and name, or type and RV for bookmarks and errors
	}{
		{"WatchList", "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&fieldSelector=spec.nodeName%3Dnode-a",
			[]string{"ADDED web-1", "ADDED dns-1", "BOOKMARK 20 end"}},
		{"too old", "resourceVersion=1", []string{"ERROR 410"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/pods?watch=1&"+tt.query, nil)
			req.Header = accept
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != response.MediaTypeProtobufWatch {
				t.Errorf("got Content-Type %q, want %q", ct, response.MediaTypeProtobufWatch)
			}
			dec := streaming.NewDecoder(response.ProtobufInfo.StreamSerializer.Framer.NewFrameReader(resp.Body), response.ProtobufInfo.StreamSerializer.Serializer)
			var got []string
			for len(got) < len(tt.want) {
				var ev metav1.WatchEvent
				if _, _, err := dec.Decode(nil, &ev); err != nil {
					if err == io.EOF {
						break
					}
					t.Fatalf("decode frame: %v", err)
				}
				obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), ev.Object.Raw)
				if err != nil {
					t.Fatalf("decode %s object: %v", ev.Type, err)
				}
				got = append(got, describe(ev.Type, obj))
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func describe(typ string, obj runtime.Object) string {
	switch o := obj.(type) {
	case *metav1.Status:
		return typ + " " + strconv.Itoa(int(o.Code))
	case *corev1.Pod:
		if typ == string(watch.Bookmark) {
			s := typ + " " + o.ResourceVersion
			if o.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				s += " end"
			}
			if o.Name != "" || o.Spec.NodeName != "" {
				s += " not empty"
			}
			return s
		}
		return typ + " " + o.Name
	}
	return typ + " unexpected " + obj.GetObjectKind().GroupVersionKind().String()
}

// Periodic bookmarks on a protobuf stream are protobuf Pods carrying only
// the resourceVersion.
func TestProtobufWatchBookmark(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/pods?watch=true&resourceVersion=20&allowWatchBookmarks=true&timeoutSeconds=200", nil)
	req.Header.Set("Accept", acceptProtobufFirst)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer resp.Body.Close()
	dec := streaming.NewDecoder(response.ProtobufInfo.StreamSerializer.Framer.NewFrameReader(resp.Body), response.ProtobufInfo.StreamSerializer.Serializer)
	next := func() string {
		var ev metav1.WatchEvent
		if _, _, err := dec.Decode(nil, &ev); err != nil {
			t.Fatalf("decode frame: %v", err)
		}
		obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), ev.Object.Raw)
		if err != nil {
			t.Fatalf("decode %s object: %v", ev.Type, err)
		}
		return describe(ev.Type, obj)
	}
	waitForWaiters(t, fc, 2)
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-a", "Running", nil))
	if got, want := next(), "MODIFIED web-1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	fc.Step(bookmarkInterval)
	if got, want := next(), "BOOKMARK 21"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

const acceptProtobufFirst = "application/vnd.kubernetes.protobuf,application/json"
