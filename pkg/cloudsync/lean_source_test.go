package cloudsync

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/relist"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// metaCloud answers, as kube-apiserver does, a metadata list in JSON and
// an exact LIST by name in the full list's encoding; requests are recorded.
type metaCloud struct {
	mu   sync.Mutex
	reqs []string // "accept path?query", guarded by mu
}

func (c *metaCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r.Header.Get("Accept")+" "+r.URL.Path+"?"+r.URL.RawQuery)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("resourceVersionMatch") == "" {
		fmt.Fprint(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":[`+
			`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b","namespace":"ns","uid":"u-b","resourceVersion":"7"}}]}`)
		return
	}
	fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[`+cmItemB+`]}`)
}

func TestLeanSourceRequests(t *testing.T) {
	cloud := &metaCloud{}
	srv := httptest.NewServer(cloud)
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	raw, err := NewRawClient(cfg)
	if err != nil {
		t.Fatalf("NewRawClient: %v", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("metadata client: %v", err)
	}
	src := NewLeanSource(raw, mc, Resource{GVR: cmGVR, LabelSelector: "app=x", FieldSelector: "type=t"})
	l, err := src.ListMeta(context.Background(), metav1.ListOptions{Limit: listPageSize})
	if err != nil || l.ResourceVersion != "9" || len(l.Items) != 1 || l.Items[0].UID != "u-b" || l.Items[0].ResourceVersion != "7" {
		t.Fatalf("ListMeta: got %+v (%v), want b at 7 with uid u-b, listed at 9", l, err)
	}
	o, err := src.GetAt(context.Background(), "ns", "b", 9)
	if err != nil || o == nil {
		t.Fatalf("GetAt: got %v (%v), want b", o, err)
	}
	page, err := decodeList([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[` + cmItemB + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	full, err := appendItems(nil, page)
	if err != nil {
		t.Fatal(err)
	}
	if string(o.Raw) != string(full[0].Raw) || o.RV != 7 {
		t.Errorf("GetAt stored bytes: got %s at %d, a full list stores %s at 7", o.Raw, o.RV, full[0].Raw)
	}
	objs, err := src.(relist.NamespaceLister).ListAt(context.Background(), "ns", 9)
	if err != nil || len(objs) != 1 || string(objs[0].Raw) != string(full[0].Raw) {
		t.Errorf("ListAt: got %v (%v), want b as a full list stores it", objs, err)
	}
	want := []string{
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json " +
			"/api/v1/configmaps?fieldSelector=type%3Dt&labelSelector=app%3Dx&limit=500",
		"application/json /api/v1/namespaces/ns/configmaps?fieldSelector=type%3Dt%2Cmetadata.name%3Db&labelSelector=app%3Dx&resourceVersion=9&resourceVersionMatch=Exact",
		"application/json /api/v1/namespaces/ns/configmaps?fieldSelector=type%3Dt&labelSelector=app%3Dx&resourceVersion=9&resourceVersionMatch=Exact",
	}
	cloud.mu.Lock()
	defer cloud.mu.Unlock()
	if fmt.Sprint(cloud.reqs) != fmt.Sprint(want) {
		t.Errorf("requests:\ngot  %q\nwant %q", cloud.reqs, want)
	}
}
