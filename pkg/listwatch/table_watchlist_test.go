package listwatch

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"
)

// tableOnlyAccept is what a client asking only for Tables sends.
const tableOnlyAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// nextTableEvent returns the next event of w, failing on a closed stream.
func nextTableEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	ev, ok := <-w.ResultChan()
	if !ok {
		t.Fatalf("watch ended, want an event")
	}
	return ev
}

// asTable decodes a Table event object as kube's e2e specs do.
func asTable(t *testing.T, obj runtime.Object) metav1.Table {
	t.Helper()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetKind() != "Table" || u.GetAPIVersion() != "meta.k8s.io/v1" {
		t.Fatalf("got %T %v, want a meta.k8s.io/v1 Table", obj, obj.GetObjectKind().GroupVersionKind())
	}
	var tbl metav1.Table
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &tbl); err != nil {
		t.Fatalf("decode Table: %v", err)
	}
	return tbl
}

// A WatchList in Table format sends every event, the initial-events-end
// BOOKMARK included, as a one-row Table; only the first carries columns.
// The bookmark row's object carries the k8s.io/initial-events-end
// annotation whatever includeObject asks, as kube's asTable does, while
// the Table itself does not: client-go's reflector, which looks for the
// annotation on the event object, never syncs on Tables.
func TestTableWatchList(t *testing.T) {
	for _, include := range []string{"", "Metadata", "None", "Object"} {
		t.Run("includeObject="+include, func(t *testing.T) {
			url, _ := tableServer(t)
			opts, ok, err := watchlist.PrepareWatchListOptionsFromListOptions(metav1.ListOptions{})
			if err != nil || !ok {
				t.Fatalf("prepare WatchList options: %v %v", ok, err)
			}
			w, err := watchWithInclude(context.Background(), url, include, opts)
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			for i, name := range []string{"web-1", "web-2"} {
				ev := nextTableEvent(t, w)
				tbl := asTable(t, ev.Object)
				if ev.Type != watch.Added || len(tbl.Rows) != 1 || (i == 0) != (len(tbl.ColumnDefinitions) > 0) {
					t.Errorf("event %d: got %s with %d rows, %d columns; want ADDED %s, one row, columns only first",
						i, ev.Type, len(tbl.Rows), len(tbl.ColumnDefinitions), name)
				}
			}
			ev := nextTableEvent(t, w)
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %s, want BOOKMARK", ev.Type)
			}
			if acc, err := meta.Accessor(ev.Object); err == nil && acc.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				t.Errorf("the bookmark Table itself carries the annotation; want it on the row object only")
			}
			tbl := asTable(t, ev.Object)
			if len(tbl.Rows) != 1 || len(tbl.ColumnDefinitions) != 0 || tbl.ResourceVersion != "20" {
				t.Fatalf("got bookmark Table with %d rows, %d columns at %q; want one row, no columns at 20",
					len(tbl.Rows), len(tbl.ColumnDefinitions), tbl.ResourceVersion)
			}
			row, err := runtime.Decode(unstructured.UnstructuredJSONScheme, tbl.Rows[0].Object.Raw)
			if err != nil {
				t.Fatalf("decode row object %s: %v", tbl.Rows[0].Object.Raw, err)
			}
			acc, err := meta.Accessor(row)
			if err != nil || acc.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || acc.GetResourceVersion() != "20" {
				t.Errorf("got row object %s, want the initial-events-end annotation at RV 20", tbl.Rows[0].Object.Raw)
			}
		})
	}
}

// watchWithInclude opens a Table WatchList of default's pods, with
// includeObject unless empty.
func watchWithInclude(ctx context.Context, host, include string, opts metav1.ListOptions) (watch.Interface, error) {
	cfg := dynamic.ConfigFor(&rest.Config{Host: host})
	cfg.AcceptContentTypes = tableOnlyAccept
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("rest client: %w", err)
	}
	opts.Watch = true
	req := rc.Get().AbsPath("/api/v1/namespaces/default/pods").VersionedParams(&opts, metav1.ParameterCodec)
	if include != "" {
		req = req.Param("includeObject", include)
	}
	return req.Watch(ctx)
}
