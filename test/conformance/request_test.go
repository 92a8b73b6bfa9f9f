//go:build e2e

package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// requestTimeout bounds one request row; a too large resourceVersion is
// answered after about 3 s.
const requestTimeout = 20 * time.Second

// maxBody bounds a response body the suite reads.
const maxBody = 16 << 20

// answer is what a client can rely on in one response.
type answer struct {
	code      int
	mediaType string // Content-Type without parameters
	// Status fields of an error answer.
	reason  string
	causes  []string // "type field", sorted
	details string   // details group/kind/name
	message string   // logged, not compared
	// Object and list fields of a success answer.
	kind    string
	body    map[string]any   // the object, or the list without items
	items   []map[string]any // list items in order
	listRV  string
	itemRVs []uint64
}

// runRequest runs a request row against both sides and compares.
func (s *suite) runRequest(t *testing.T, r row) {
	s.catchUp(t, r.resource)
	path, query := s.expand(r, r.path), s.expand(r, r.query)
	ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
	defer cancel()
	type result struct {
		a   answer
		err error
	}
	cloud, edge := both(func(sd side) result {
		a, err := do(ctx, sd, path, query, r.accept)
		return result{a, err}
	}, s.cloud, s.edge)
	if cloud.err != nil || edge.err != nil {
		t.Fatalf("GET %s?%s: cloud error %v, edge error %v", path, query, cloud.err, edge.err)
	}
	t.Logf("GET %s?%s: cloud %d %s %q, edge %d %s %q", path, query, cloud.a.code, cloud.a.reason, cloud.a.message,
		edge.a.code, edge.a.reason, edge.a.message)
	checkWant(t, "cloud", r, cloud.a)
	if r.differsIn != aspectStatus {
		checkWant(t, "edge", r, edge.a)
	}
	checkListRVs(t, cloud.a, edge.a)
	verdict(t, r, compareAnswers(cloud.a, edge.a))
	if r.knownDifference != "" {
		t.Logf("known difference: cloud %s %s %d items, edge %s %s %d items", cloud.a.mediaType, cloud.a.kind, len(cloud.a.items),
			edge.a.mediaType, edge.a.kind, len(edge.a.items))
	}
}

// checkWant checks one side's answer against the row's expectations.
func checkWant(t *testing.T, who string, r row, a answer) {
	t.Helper()
	if a.code != r.wantCode {
		t.Errorf("%s: got code %d, want %d", who, a.code, r.wantCode)
	}
	if r.wantReason != "" && a.reason != r.wantReason {
		t.Errorf("%s: got reason %q, want %q", who, a.reason, r.wantReason)
	}
	if r.wantCause != "" && !hasCause(a.causes, r.wantCause) {
		t.Errorf("%s: got causes %v, want one of type %s", who, a.causes, r.wantCause)
	}
	if a.code == http.StatusOK && a.kind != "Status" && a.body == nil {
		t.Errorf("%s: 200 without a decodable body", who)
	}
	for _, obj := range append([]map[string]any{a.body}, a.items...) {
		checkObjectMeta(t, who, obj)
	}
}

func hasCause(causes []string, typ string) bool {
	for _, c := range causes {
		if c == typ || len(c) > len(typ) && c[:len(typ)+1] == typ+" " {
			return true
		}
	}
	return false
}

// checkObjectMeta checks what both servers must show of an object's
// metadata: managedFields present, selfLink absent.
func checkObjectMeta(t *testing.T, who string, obj map[string]any) {
	t.Helper()
	meta, ok := obj["metadata"].(map[string]any)
	if !ok || meta["uid"] == nil {
		return // a list or a Status, not an object
	}
	if _, ok := meta["selfLink"]; ok {
		t.Errorf("%s: %v has metadata.selfLink, want none", who, meta["name"])
	}
	if _, ok := meta["managedFields"]; !ok {
		t.Errorf("%s: %v has no metadata.managedFields, want them", who, meta["name"])
	}
}

// checkListRVs checks the list RV rules: each at least its newest item's
// RV, and the edge never ahead of the cloud.
func checkListRVs(t *testing.T, cloud, edge answer) {
	t.Helper()
	rvs := map[string]uint64{}
	for who, a := range map[string]answer{"cloud": cloud, "edge": edge} {
		if a.listRV == "" {
			continue
		}
		rv, err := strconv.ParseUint(a.listRV, 10, 64)
		if err != nil {
			t.Errorf("%s: list resourceVersion %q: %v", who, a.listRV, err)
			continue
		}
		rvs[who] = rv
		for _, item := range a.itemRVs {
			if item > rv {
				t.Errorf("%s: list resourceVersion %d older than an item's %d", who, rv, item)
			}
		}
	}
	if c, ok := rvs["cloud"]; ok {
		if e, ok := rvs["edge"]; ok && e > c {
			t.Errorf("list resourceVersion: edge %d ahead of cloud %d", e, c)
		}
	}
}

// do sends one GET and reduces the response to an answer.
func do(ctx context.Context, sd side, path, query, accept string) (answer, error) {
	url := sd.base + path
	if query != "" {
		url += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return answer{}, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := sd.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return answer{}, fmt.Errorf("read %s body: %w", sd.name, err)
	}
	a := answer{code: resp.StatusCode}
	a.mediaType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	obj, err := decodeBody(body, a.mediaType, accept == acceptProtobuf)
	if err != nil {
		return a, fmt.Errorf("%s answered %d %s: %w", sd.name, a.code, a.mediaType, err)
	}
	a.fill(obj)
	return a, nil
}

// decodeBody decodes JSON, YAML or protobuf into a map. typed decodes JSON into
// the Go type too, so it compares equal to the same object from protobuf.
func decodeBody(body []byte, mediaType string, typed bool) (map[string]any, error) {
	if mediaType == runtime.ContentTypeProtobuf || typed {
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		obj.GetObjectKind().SetGroupVersionKind(*gvk)
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	if mediaType == runtime.ContentTypeYAML {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, fmt.Errorf("decode YAML: %w", err)
		}
		body = j
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return m, nil
}

// fill sets the answer's fields from the decoded body.
func (a *answer) fill(obj map[string]any) {
	a.kind, _ = obj["kind"].(string)
	if a.kind == "Status" {
		a.fillStatus(obj)
		return
	}
	items, isList := obj["items"].([]any)
	if !isList {
		a.body = obj
		if meta, ok := obj["metadata"].(map[string]any); ok && a.kind == "Table" {
			// A Table of a list carries the list's RV, which follows the
			// list RV rules rather than matching by value.
			a.listRV, _ = meta["resourceVersion"].(string)
			delete(meta, "resourceVersion")
		}
		return
	}
	a.body = map[string]any{}
	for k, v := range obj {
		if k != "items" {
			a.body[k] = v
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		a.listRV, _ = meta["resourceVersion"].(string)
		delete(meta, "resourceVersion") // compared by its rules, not its value
		if tok, ok := meta["continue"].(string); ok {
			// A continue token carries the list RV, which differs
			// between the servers like the list RV does; compare the
			// key it continues from.
			meta["continue"] = continueStart(tok)
		}
	}
	for _, it := range items {
		m, _ := it.(map[string]any)
		a.items = append(a.items, m)
		if rv, err := strconv.ParseUint(str(m, "metadata", "resourceVersion"), 10, 64); err == nil {
			a.itemRVs = append(a.itemRVs, rv)
		}
	}
}

func (a *answer) fillStatus(obj map[string]any) {
	a.reason, _ = obj["reason"].(string)
	a.message, _ = obj["message"].(string)
	details, _ := obj["details"].(map[string]any)
	if details == nil {
		return
	}
	a.details = fmt.Sprintf("%v/%v/%v", details["group"], details["kind"], details["name"])
	causes, _ := details["causes"].([]any)
	for _, c := range causes {
		m, _ := c.(map[string]any)
		a.causes = append(a.causes, fmt.Sprintf("%v %v", m["reason"], m["field"]))
	}
	sort.Strings(a.causes)
}

// str returns the string at path in m, or "".
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

// continueStart returns the start key of a kube continue token (base64 of
// {"v":"meta.k8s.io/v1","rv":N,"start":K}), or the token itself when it
// does not decode.
func continueStart(tok string) string {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return tok
	}
	var c struct {
		Start string `json:"start"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return tok
	}
	return "start:" + c.Start
}
