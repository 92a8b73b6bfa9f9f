package listwatch

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// kubectlAccept is what kubectl get sends.
const kubectlAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// tableNow is the server time of table tests: an hour after the fixture
// pods were created.
var tableNow = time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC)

func MustTable(t testing.TB, r reply) metav1.Table {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("got status %d body %s, want 200", r.code, r.body)
	}
	if got := r.header.Get("Content-Type"); got != response.MediaTypeJSON {
		t.Errorf("got Content-Type %q, want %q", got, response.MediaTypeJSON)
	}
	var tbl metav1.Table
	if err := json.Unmarshal([]byte(r.body), &tbl); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	return tbl
}

func columnNames(tbl metav1.Table) []string {
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

func tableServer(t *testing.T) (string, *fixture) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches(), Clock: testingclock.NewFakeClock(tableNow)})
	return srv.URL, f
}

func TestTableColumnsAndCells(t *testing.T) {
	url, _ := tableServer(t)
	tests := []struct {
		name, path string
		wantCols   []string
		wantCells  [][]any
		wantRV     string
	}{
		{"pods", "/api/v1/namespaces/default/pods",
			[]string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"},
			[][]any{{"web-1", "0/1", "Running", "0", "60m", "<none>", "node-a", "<none>", "<none>"},
				{"web-2", "0/1", "Running", "0", "60m", "<none>", "node-b", "<none>", "<none>"}}, "20"},
		{"one pod", "/api/v1/namespaces/kube-system/pods/dns-1",
			[]string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"},
			[][]any{{"dns-1", "0/1", "Pending", "0", "60m", "<none>", "node-a", "<none>", "<none>"}}, "13"},
		{"nodes", "/api/v1/nodes",
			[]string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"},
			[][]any{{"node-a", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
				{"node-b", "Unknown,SchedulingDisabled", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}}, "20"},
		{"configmaps", "/api/v1/configmaps?fieldSelector=metadata.namespace%3Ddefault",
			[]string{"Name", "Data", "Age"}, [][]any{{"settings", float64(1), "<unknown>"}}, "20"},
		{"namespaces", "/api/v1/namespaces",
			[]string{"Name", "Status", "Age"},
			[][]any{{"default", "Active", "<unknown>"}, {"kube-system", "Active", "<unknown>"}}, "20"},
		{"lease", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a",
			[]string{"Name", "Holder", "Age"}, [][]any{{"node-a", "node-a", "<unknown>"}}, "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := MustTable(t, MustDo(t, http.MethodGet, url+tt.path, http.Header{"Accept": {kubectlAccept}}, ""))
			if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" || tbl.ResourceVersion != tt.wantRV {
				t.Errorf("got %s %s at %q, want Table meta.k8s.io/v1 at %q", tbl.Kind, tbl.APIVersion, tbl.ResourceVersion, tt.wantRV)
			}
			if got := columnNames(tbl); !reflect.DeepEqual(got, tt.wantCols) {
				t.Errorf("got columns %v, want %v", got, tt.wantCols)
			}
			var cells [][]any
			for _, r := range tbl.Rows {
				cells = append(cells, r.Cells)
			}
			if !reflect.DeepEqual(cells, tt.wantCells) {
				t.Errorf("got cells %v, want %v", cells, tt.wantCells)
			}
		})
	}
}

// Rows embed PartialObjectMetadata by default, as includeObject asks
// otherwise, and a bad includeObject gets kube's 400.
func TestTableIncludeObject(t *testing.T) {
	url, _ := tableServer(t)
	path := url + "/api/v1/namespaces/default/configmaps"
	tests := []struct {
		query, accept, wantObject string
	}{
		{"", kubectlAccept, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"settings","namespace":"default","uid":"uid-settings","resourceVersion":"14"}}`},
		{"?includeObject=Metadata", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1beta1","metadata":{"name":"settings","namespace":"default","uid":"uid-settings","resourceVersion":"14"}}`},
		{"?includeObject=Object", kubectlAccept, configMapJSON("default", "settings", 14, map[string]string{"mode": "edge"})},
		{"?includeObject=None", kubectlAccept, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.query+" "+tt.accept, func(t *testing.T) {
			r := MustDo(t, http.MethodGet, path+tt.query, http.Header{"Accept": {tt.accept}}, "")
			var tbl struct {
				APIVersion string `json:"apiVersion"`
				Rows       []struct {
					Object json.RawMessage `json:"object"`
				} `json:"rows"`
			}
			if err := json.Unmarshal([]byte(r.body), &tbl); err != nil || len(tbl.Rows) != 1 {
				t.Fatalf("got %d %s, want a one-row Table", r.code, r.body)
			}
			if got := string(tbl.Rows[0].Object); got != tt.wantObject {
				t.Errorf("got object %s, want %s", got, tt.wantObject)
			}
		})
	}
	r := MustDo(t, http.MethodGet, path+"?includeObject=All", http.Header{"Accept": {kubectlAccept}}, "")
	st := MustStatus(t, r)
	wantMsg := `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`
	if r.code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest || st.Message != wantMsg {
		t.Errorf("got %d %s %q, want 400 BadRequest %q", r.code, st.Reason, st.Message, wantMsg)
	}
}

// Without a Table clause first, the answer is the plain list.
func TestTableNotAsked(t *testing.T) {
	url, _ := tableServer(t)
	for _, accept := range []string{"application/json", "application/json,application/json;as=Table;v=v1;g=meta.k8s.io",
		"application/json;as=Table;v=v2;g=meta.k8s.io,application/json"} {
		r := MustDo(t, http.MethodGet, url+"/api/v1/nodes", http.Header{"Accept": {accept}}, "")
		if !strings.HasPrefix(r.body, `{"kind":"NodeList"`) {
			t.Errorf("Accept %q: got %s, want a NodeList", accept, r.body)
		}
	}
}

// A watch asking for Tables gets one-row Tables; only the first carries
// the column definitions.
func TestTableWatch(t *testing.T) {
	url, f := tableServer(t)
	req, err := http.NewRequest(http.MethodGet, url+"/api/v1/namespaces/default/pods?watch=true&resourceVersion=20", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", kubectlAccept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	MustApply(t, f.pods, 21, watch.Added, podJSON("default", "new", 21, "node-a", "Pending", nil))
	MustApply(t, f.pods, 22, watch.Deleted, podJSON("default", "new", 22, "node-a", "Pending", nil))
	for i, want := range []struct {
		typ     string
		columns int
		rv      string
	}{{"ADDED", 9, "21"}, {"DELETED", 0, "22"}} {
		var ev struct {
			Type   string       `json:"type"`
			Object metav1.Table `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Type != want.typ || ev.Object.Kind != "Table" || len(ev.Object.ColumnDefinitions) != want.columns ||
			len(ev.Object.Rows) != 1 || ev.Object.ResourceVersion != want.rv {
			t.Errorf("event %d: got %s %s with %d columns, %d rows at %q; want %s Table with %d columns, 1 row at %q",
				i, ev.Type, ev.Object.Kind, len(ev.Object.ColumnDefinitions), len(ev.Object.Rows), ev.Object.ResourceVersion,
				want.typ, want.columns, want.rv)
		}
	}
}

// Resources without a kube printer get the default convertor's Name and
// Created At (RFC 3339, UTC) columns, and null rows when empty.
func TestTableDefaultConvertor(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	c := versioncache.New(gvr, 0)
	c.SetInfo(metav1.APIResource{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: metav1.Verbs{"get", "list", "watch"}})
	c.Replace([]*versioncache.Object{MustObject(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":`+
		`{"namespace":"a","name":"w1","resourceVersion":"5","creationTimestamp":"2026-01-02T03:04:05Z"}}`)}, 9)
	t.Cleanup(c.Close)
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{c}, Clock: testingclock.NewFakeClock(tableNow)})
	tbl := MustTable(t, MustDo(t, http.MethodGet, srv.URL+"/apis/example.com/v1/widgets", http.Header{"Accept": {kubectlAccept}}, ""))
	if got, want := columnNames(tbl), []string{"Name", "Created At"}; !reflect.DeepEqual(got, want) || tbl.ColumnDefinitions[1].Type != "date" {
		t.Errorf("got columns %v (%+v), want %v with Created At a date", got, tbl.ColumnDefinitions, want)
	}
	if len(tbl.Rows) != 1 || !reflect.DeepEqual(tbl.Rows[0].Cells, []any{"w1", "2026-01-02T03:04:05Z"}) {
		t.Errorf("got rows %+v, want w1 created 2026-01-02T03:04:05Z", tbl.Rows)
	}
	empty := MustDo(t, http.MethodGet, srv.URL+"/apis/example.com/v1/namespaces/b/widgets", http.Header{"Accept": {kubectlAccept}}, "")
	if !strings.Contains(empty.body, `"rows":null`) {
		t.Errorf("got %s, want rows null as kube's default convertor answers", empty.body)
	}
}
