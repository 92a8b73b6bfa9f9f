package listwatch

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/pager"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// rawToken builds a continue token by hand, the way kube-apiserver's
// storage.EncodeContinue lays it out.
func rawToken(v string, rv int64, start string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"v":%q,"rv":%d,"start":%s}`, v, rv, mustJSON(start))))
}

func TestListPaging(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	base := srv.URL + "/api/v1/pods?limit=1"
	type page struct {
		items     []string
		remaining int64 // -1: none
		last      bool
	}
	want := []page{{[]string{"default/web-1"}, 2, false}, {[]string{"default/web-2"}, 1, false}, {[]string{"kube-system/dns-1"}, -1, true}}
	next := ""
	for i, w := range want {
		if i == 1 {
			// Changes after the first page must not show in later ones.
			MustApply(t, f.pods, 21, watch.Deleted, podJSON("default", "web-2", 21, "node-b", "Running", nil))
			MustApply(t, f.pods, 22, watch.Added, podJSON("default", "web-3", 22, "node-b", "Running", nil))
			MustApply(t, f.pods, 23, watch.Modified, podJSON("kube-system", "dns-1", 23, "node-a", "Running", nil))
		}
		u := base
		if next != "" {
			u += "&continue=" + url.QueryEscape(next)
		}
		r := MustGet(t, u)
		l := MustList(t, r)
		if got := l.names(); !reflect.DeepEqual(got, w.items) || l.Metadata.ResourceVersion != "20" {
			t.Fatalf("page %d: got %v at %q, want %v at \"20\"", i, got, l.Metadata.ResourceVersion, w.items)
		}
		gotRemaining := int64(-1)
		if l.Metadata.RemainingItemCount != nil {
			gotRemaining = *l.Metadata.RemainingItemCount
		}
		if gotRemaining != w.remaining || (l.Metadata.Continue == "") != w.last {
			t.Errorf("page %d: got remaining %d continue %q, want %d last=%v", i, gotRemaining, l.Metadata.Continue, w.remaining, w.last)
		}
		next = l.Metadata.Continue
		if w.last && !strings.Contains(r.body, `"resourceVersion":"13"`) {
			t.Errorf("last page %s, want dns-1 as of rv 13", r.body)
		}
	}
}

func TestListPagingShapes(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	MustApply(t, f.pods, 21, watch.Deleted, podJSON("default", "web-1", 21, "node-a", "Running", nil))
	tests := []struct {
		name, path    string
		want          []string
		wantRV        string
		wantContinue  string
		wantRemaining bool
	}{
		{"namespaced key", "/api/v1/namespaces/default/pods?limit=1", []string{"default/web-2"}, "21", "", false},
		{"cluster-scoped key", "/api/v1/nodes?limit=1", []string{"node-a"}, "20", encode.EncodeContinue("node-a\x00", 20), true},
		{"selector has no count", "/api/v1/pods?limit=1&labelSelector=app", []string{"default/web-2"}, "21", encode.EncodeContinue("default/web-2\x00", 21), false},
		{"field selector has no count", "/api/v1/nodes?limit=1&fieldSelector=metadata.name%21%3Dx", []string{"node-a"}, "20", encode.EncodeContinue("node-a\x00", 20), false},
		{"exact past state", "/api/v1/pods?resourceVersion=20&resourceVersionMatch=Exact", []string{"default/web-1", "default/web-2", "kube-system/dns-1"}, "20", "", false},
		{"legacy exact with limit", "/api/v1/pods?resourceVersion=20&limit=2", []string{"default/web-1", "default/web-2"}, "20", encode.EncodeContinue("default/web-2\x00", 20), true},
		{"not older than serves the latest", "/api/v1/pods?resourceVersion=20&resourceVersionMatch=NotOlderThan&limit=1", []string{"default/web-2"}, "21", encode.EncodeContinue("default/web-2\x00", 21), true},
		{"continue at a past rv", "/api/v1/pods?continue=" + encode.EncodeContinue("default/web-1\x00", 20), []string{"default/web-2", "kube-system/dns-1"}, "20", "", false},
		{"continue with resourceVersion 0", "/api/v1/pods?resourceVersion=0&limit=1&continue=" + encode.EncodeContinue("default/web-1\x00", 20), []string{"default/web-2", "kube-system/dns-1"}, "20", "", false},
		{"continue at the latest", "/api/v1/pods?limit=5&continue=" + encode.EncodeContinue("default/web-1\x00", encode.ContinueLatestRV), []string{"default/web-2", "kube-system/dns-1"}, "21", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := MustList(t, MustGet(t, srv.URL+tt.path))
			if got := l.names(); !reflect.DeepEqual(got, tt.want) || l.Metadata.ResourceVersion != tt.wantRV {
				t.Errorf("got %v at %q, want %v at %q", got, l.Metadata.ResourceVersion, tt.want, tt.wantRV)
			}
			if l.Metadata.Continue != tt.wantContinue || (l.Metadata.RemainingItemCount != nil) != tt.wantRemaining {
				t.Errorf("got continue %q remaining %v, want %q remaining=%v", l.Metadata.Continue, l.Metadata.RemainingItemCount, tt.wantContinue, tt.wantRemaining)
			}
		})
	}
}

func TestListContinueErrors(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	good := url.QueryEscape(encode.EncodeContinue("default/web-1\x00", 20))
	tests := []struct {
		name, query string
		wantCode    int
		wantMessage string
	}{
		{"garbage", "continue=abc", 400, "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value"},
		{"zero rv", "continue=" + rawToken("meta.k8s.io/v1", 0, "/a"), 400, "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{"with a resourceVersion", "resourceVersion=20&continue=" + good, 400, "specifying resource version is not allowed when using continue"},
		{"bad token before resourceVersion", "resourceVersion=20&continue=abc", 400, "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value"},
		{"field selector before token", "fieldSelector=spec.foo%3Dx&continue=abc", 400, "field label not supported: spec.foo"},
		{"match with continue", "resourceVersion=20&resourceVersionMatch=NotOlderThan&continue=" + good, 422, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"},
		{"expired", "limit=1&continue=" + url.QueryEscape(encode.EncodeContinue("default/web-1\x00", 10)), 410, response.ToStatus(response.ContinueExpired("")).Message},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := MustGet(t, srv.URL+"/api/v1/pods?"+tt.query)
			st := MustStatus(t, r)
			if r.code != tt.wantCode || st.Message != tt.wantMessage {
				t.Errorf("got %d %q, want %d %q", r.code, st.Message, tt.wantCode, tt.wantMessage)
			}
		})
	}
}

// An expired token gets kube's 410 with a token that continues from the
// same key at the latest state.
func TestListContinueExpired(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	MustApply(t, f.pods, 21, watch.Added, podJSON("default", "web-3", 21, "node-b", "Running", nil))
	r := MustGet(t, srv.URL+"/api/v1/pods?limit=1&continue="+url.QueryEscape(encode.EncodeContinue("default/web-1\x00", 10)))
	st := MustStatus(t, r)
	if r.code != 410 || st.Reason != metav1.StatusReasonExpired || st.Message != response.ToStatus(response.ContinueExpired("")).Message {
		t.Fatalf("got %d %s %q, want 410 Expired with the inconsistent-continue message", r.code, st.Reason, st.Message)
	}
	start, rv, err := encode.DecodeContinue(st.Continue)
	if err != nil || start != "default/web-1\x00" || rv != encode.ContinueLatestRV {
		t.Fatalf("got token %q (%q %d %v), want start default/web-1\\x00 at -1", st.Continue, start, rv, err)
	}
	l := MustList(t, MustGet(t, srv.URL+"/api/v1/pods?limit=1&continue="+url.QueryEscape(st.Continue)))
	if got := l.names(); !reflect.DeepEqual(got, []string{"default/web-2"}) || l.Metadata.ResourceVersion != "21" {
		t.Errorf("got %v at %q, want [default/web-2] at \"21\"", got, l.Metadata.ResourceVersion)
	}
	if want := encode.EncodeContinue("default/web-2\x00", 21); l.Metadata.Continue != want {
		t.Errorf("got continue %q, want %q", l.Metadata.Continue, want)
	}
}

// A client-go pager lists 1200 config maps in pages of 500 while the
// cache changes between pages and gets exactly the first page's snapshot,
// in kube's storage key order ("ns-a/..." before "ns/...").
func TestClientGoPagerSnapshot(t *testing.T) {
	const total, pageSize = 1200, 500
	var raws []string
	want := map[string]string{} // namespace/name -> resourceVersion
	for i := 0; i < total; i++ {
		ns := []string{"ns", "ns-a"}[i%2]
		name := fmt.Sprintf("cm-%04d", i)
		rv := uint64(100 + i)
		raws = append(raws, configMapJSON(ns, name, rv, map[string]string{"i": name}))
		want[ns+"/"+name] = fmt.Sprint(rv)
	}
	cms := MustCache(t, configMapsGVR, 2000, raws...)
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{cms}})
	cs := MustClientset(t, srv.URL)
	rv := uint64(2000)
	var pageRVs []string
	var remaining []int64
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		list, err := cs.CoreV1().ConfigMaps("").List(ctx, opts)
		if err != nil {
			return nil, err
		}
		pageRVs = append(pageRVs, list.ResourceVersion)
		if list.RemainingItemCount != nil {
			remaining = append(remaining, *list.RemainingItemCount)
		}
		// Change objects on every later page, and add and delete some.
		for i := len(pageRVs) * 3; i < total; i += 97 {
			rv++
			ns := []string{"ns", "ns-a"}[i%2]
			MustApply(t, cms, rv, watch.Modified, configMapJSON(ns, fmt.Sprintf("cm-%04d", i), rv, nil))
			rv++
			MustApply(t, cms, rv, watch.Added, configMapJSON(ns, fmt.Sprintf("cm-%04d-new", i), rv, nil))
			rv++
			MustApply(t, cms, rv, watch.Deleted, configMapJSON([]string{"ns", "ns-a"}[(i+1)%2], fmt.Sprintf("cm-%04d", i+1), rv, nil))
		}
		return list, nil
	})
	p.PageSize = pageSize
	p.FullListIfExpired = false // a fallback full list would hide an expired page
	obj, paged, err := p.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("pager list: %v", err)
	}
	if !paged || !slices.Equal(pageRVs, []string{"2000", "2000", "2000"}) || !slices.Equal(remaining, []int64{700, 200}) {
		t.Errorf("got paged=%v page RVs %v remaining %v, want true [2000 2000 2000] [700 200]", paged, pageRVs, remaining)
	}
	var got []string
	gotRV := map[string]string{}
	if err := apiMetaEach(obj, func(cm *corev1.ConfigMap) {
		got = append(got, cm.Namespace+"/"+cm.Name)
		gotRV[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}); err != nil {
		t.Fatal(err)
	}
	wantKeys := make([]string, 0, total)
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	slices.Sort(wantKeys) // byte-wise: kube's storage key order
	if !slices.Equal(got, wantKeys) {
		t.Fatalf("got %d items (first %v), want %d in key order (first %v)", len(got), got[:min(3, len(got))], len(wantKeys), wantKeys[:3])
	}
	if !reflect.DeepEqual(gotRV, want) {
		t.Errorf("got item RVs differing from the first page's snapshot")
	}
	if rv <= 2000 {
		t.Errorf("got no changes between pages, want some")
	}
}

// apiMetaEach calls fn for each config map of a pager's result.
func apiMetaEach(obj runtime.Object, fn func(*corev1.ConfigMap)) error {
	return meta.EachListItem(obj, func(o runtime.Object) error {
		cm, ok := o.(*corev1.ConfigMap)
		if !ok {
			return fmt.Errorf("got item %T, want *v1.ConfigMap", o)
		}
		fn(cm)
		return nil
	})
}

// Field selectors a kind does not support get kube-apiserver's 400, worded
// by the kind's conversion function or the default one.
func TestFieldSelectorRefusals(t *testing.T) {
	tests := []struct {
		kind        schema.GroupKind
		sel         string
		wantMessage string
	}{
		{schema.GroupKind{Kind: "ConfigMap"}, "spec.foo=x", `"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, "spec.holderIdentity=x", `"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{schema.GroupKind{Group: "example.com", Kind: "Pod"}, "spec.nodeName=x", `"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{schema.GroupKind{Kind: "Pod"}, "spec.foo=x", "field label not supported: spec.foo"},
		{schema.GroupKind{Kind: "Node"}, "metadata.namespace=x", "field label not supported: metadata.namespace"},
		{schema.GroupKind{Kind: "Namespace"}, "name=x", "field label not supported: name"},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, "spec.foo=x", `field label "spec.foo" not supported for Job`},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String()+" "+tt.sel, func(t *testing.T) {
			_, err := convertFieldSelector(mustFieldSelector(t, tt.sel), tt.kind)
			if err == nil || err.Error() != tt.wantMessage {
				t.Errorf("got %v, want %q", err, tt.wantMessage)
			}
		})
	}
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	for _, path := range []string{
		"/apis/coordination.k8s.io/v1/leases?fieldSelector=spec.foo%3Dx",
		"/apis/coordination.k8s.io/v1/leases?watch=true&fieldSelector=spec.foo%3Dx",
	} {
		r := MustGet(t, srv.URL+path)
		st := MustStatus(t, r)
		if want := `"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`; r.code != 400 || st.Reason != metav1.StatusReasonBadRequest || st.Message != want {
			t.Errorf("%s: got %d %s %q, want 400 BadRequest %q", path, r.code, st.Reason, st.Message, want)
		}
	}
}

// Through the HTTP layer, an object whose labels stop matching a watch's
// selector arrives as DELETED with its last matching state and the
// change's RV, and one that starts matching as ADDED; replayed history
// from a resourceVersion follows the same rule.
func TestWatchLabelSelectorTransitions(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	live := MustWatch(t, srv.URL+"/api/v1/pods?watch=true&resourceVersion=20&labelSelector=app%3Dweb")
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-a", "Running", map[string]string{"app": "other"}))
	MustApply(t, f.pods, 22, watch.Modified, podJSON("kube-system", "dns-1", 22, "node-a", "Running", map[string]string{"app": "web"}))
	MustApply(t, f.pods, 23, watch.Modified, podJSON("default", "web-2", 23, "node-b", "Failed", map[string]string{"app": "web"}))
	MustApply(t, f.pods, 24, watch.Modified, podJSON("default", "web-1", 24, "node-a", "Running", map[string]string{"app": "still-other"}))
	want := []string{"DELETED default/web-1 21", "ADDED kube-system/dns-1 22", "MODIFIED default/web-2 23"}
	first := live.MustFrame(t)
	if !strings.Contains(first, `"tier":"front"`) {
		t.Errorf("got DELETED frame %s, want the last matching state (labels app=web, tier=front)", first)
	}
	m := MustDecodeFrame(t, first)
	got := append([]string{m.Type + " " + m.Object.Metadata.Namespace + "/" + m.Object.Metadata.Name + " " + m.Object.Metadata.ResourceVersion}, live.MustFrames(t, 2)...)
	checkFrames(t, got, want)
	replay := MustWatch(t, srv.URL+"/api/v1/pods?watch=true&resourceVersion=20&labelSelector=app%3Dweb")
	checkFrames(t, replay.MustFrames(t, 3), want)
}
