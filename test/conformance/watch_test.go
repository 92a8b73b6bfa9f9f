//go:build e2e

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
)

// watchRowTimeout bounds one watch row: the stream, the changes and the
// reading of their events.
const watchRowTimeout = 20 * time.Second

// frame is a watch event reduced to what is compared.
type frame struct {
	Type string
	// ID is namespace/name uid@rv of an object, "code reason" of an ERROR
	// Status, and for a BOOKMARK its shape: kind, apiVersion, the metadata
	// keys and annotations (its RV is a progress marker, compared by rule).
	ID string
}

// watchAnswer is one side's watch response.
type watchAnswer struct {
	ans    answer  // status code; the Status when not 200
	frames []frame // every frame in order
	ended  bool    // the server ended the stream
	err    error
}

// runWatch opens the row's watch on both sides, makes its changes through
// the cloud and compares the frames.
func (s *suite) runWatch(t *testing.T, r row, _ int) {
	s.catchUp(t, r.resource)
	ctx, cancel := context.WithTimeout(t.Context(), watchRowTimeout)
	defer cancel()
	path, query := s.expand(r, r.path), s.expand(r, r.query)
	queries := map[string]string{"cloud": query, "edge": query}
	if r.fromList {
		for _, sd := range []side{s.cloud, s.edge} {
			a, err := do(ctx, sd, path, "", "")
			if err != nil || a.code != http.StatusOK {
				t.Fatalf("%s list %s: %d %v", sd.name, path, a.code, err)
			}
			queries[sd.name] = query + "&resourceVersion=" + a.listRV
		}
	}
	streams := map[string]*http.Response{}
	for _, sd := range []side{s.cloud, s.edge} {
		resp, err := openWatch(ctx, sd, path, queries[sd.name], r.accept)
		if err != nil {
			t.Fatalf("%s watch %s?%s: %v", sd.name, path, queries[sd.name], err)
		}
		defer resp.Body.Close()
		streams[sd.name] = resp
	}
	want := len(r.wantEvents)
	if r.untilEnd {
		want = -1
	}
	cloudCh, edgeCh := readAsync(ctx, streams["cloud"], want), readAsync(ctx, streams["edge"], want)
	s.applyChanges(t, ctx, s.expand(r, phWatchNS), r.changes)
	cloud, edge := <-cloudCh, <-edgeCh
	t.Logf("cloud %d frames %v; edge %d frames %v", cloud.ans.code, cloud.frames, edge.ans.code, edge.frames)
	s.checkWatch(t, r, cloud, edge)
}

// checkWatch checks each side and compares them.
func (s *suite) checkWatch(t *testing.T, r row, cloud, edge watchAnswer) {
	t.Helper()
	for who, w := range map[string]watchAnswer{"cloud": cloud, "edge": edge} {
		if w.err != nil {
			t.Errorf("%s: read stream: %v", who, w.err)
		}
		if who == "edge" && r.differsIn == aspectStatus {
			continue
		}
		if w.ans.code != r.wantCode {
			t.Errorf("%s: got code %d (%s %s), want %d", who, w.ans.code, w.ans.reason, w.ans.message, r.wantCode)
		}
		if got := eventTypes(w.frames); r.wantEvents != nil && !slices.Equal(got, r.wantEvents) {
			t.Errorf("%s: got events %v, want %v", who, got, r.wantEvents)
		}
		if r.untilEnd && !w.ended {
			t.Errorf("%s: stream did not end within %s", who, watchRowTimeout)
		}
		if r.wantBookmark && bookmark(w.frames) == "" {
			t.Errorf("%s: got no BOOKMARK in %v, want one", who, w.frames)
		}
	}
	d := diffs{}
	if cloud.ans.mediaType != edge.ans.mediaType {
		d.add(aspectMediaType, "cloud %s, edge %s", cloud.ans.mediaType, edge.ans.mediaType)
	}
	if cloud.ans.code != edge.ans.code || cloud.ans.reason != edge.ans.reason || cloud.ans.code != http.StatusOK {
		d = compareAnswers(cloud.ans, edge.ans)
	} else {
		compareFrames(d, cloud.frames, edge.frames)
	}
	verdict(t, r, d)
}

// compareFrames compares events in order and the first bookmark's shape.
func compareFrames(d diffs, cloud, edge []frame) {
	ce, ee := withoutBookmarks(cloud), withoutBookmarks(edge)
	if !slices.Equal(ce, ee) {
		d.add(aspectEvents, "cloud %v, edge %v", ce, ee)
	}
	if cb, eb := bookmark(cloud), bookmark(edge); cb != "" && eb != "" && cb != eb {
		d.add(aspectEvents, "bookmark shape: cloud %s, edge %s", cb, eb)
	}
}

func withoutBookmarks(fs []frame) []frame {
	var out []frame
	for _, f := range fs {
		if f.Type != "BOOKMARK" {
			out = append(out, f)
		}
	}
	return out
}

func bookmark(fs []frame) string {
	for _, f := range fs {
		if f.Type == "BOOKMARK" {
			return f.ID
		}
	}
	return ""
}

func eventTypes(fs []frame) []string {
	var out []string
	for _, f := range withoutBookmarks(fs) {
		out = append(out, f.Type)
	}
	return out
}

// openWatch starts a watch request, with the Accept header unless empty,
// and returns once the headers arrived.
func openWatch(ctx context.Context, sd side, path, query, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, sd.base+path+"?"+query, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return sd.client.Do(req)
}

// eventReader reads one watch event of a JSON or protobuf stream.
type eventReader func() (typ string, obj map[string]any, err error)

// newEventReader reads the stream in its media type: JSON objects, or
// length-prefixed protobuf WatchEvents whose objects are protobuf.
func newEventReader(body io.Reader, mediaType string) eventReader {
	if mediaType == runtime.ContentTypeProtobuf {
		info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		dec := streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(body)), info.StreamSerializer.Serializer)
		return func() (string, map[string]any, error) {
			var ev metav1.WatchEvent
			if _, _, err := dec.Decode(nil, &ev); err != nil {
				return "", nil, err
			}
			obj, err := decodeBody(ev.Object.Raw, runtime.ContentTypeProtobuf, true)
			return ev.Type, obj, err
		}
	}
	dec := json.NewDecoder(body)
	return func() (string, map[string]any, error) {
		var ev struct {
			Type   string         `json:"type"`
			Object map[string]any `json:"object"`
		}
		err := dec.Decode(&ev)
		return ev.Type, ev.Object, err
	}
}

// readAsync reads frames until want non-bookmark frames arrived (want < 0:
// until the stream ends) or ctx ends, and sends the result.
func readAsync(ctx context.Context, resp *http.Response, want int) <-chan watchAnswer {
	ch := make(chan watchAnswer, 1)
	go func() {
		w := watchAnswer{ans: answer{code: resp.StatusCode}}
		w.ans.mediaType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
			obj, err := decodeBody(body, w.ans.mediaType, false)
			if err == nil {
				w.ans.fill(obj)
			}
			ch <- w
			return
		}
		next := newEventReader(resp.Body, w.ans.mediaType)
		for want < 0 || len(withoutBookmarks(w.frames)) < want {
			typ, obj, err := next()
			if err != nil {
				w.ended = err == io.EOF
				if !w.ended && ctx.Err() == nil {
					w.err = err
				}
				break
			}
			w.frames = append(w.frames, toFrame(typ, obj))
		}
		ch <- w
	}()
	return ch
}

// toFrame reduces one event to what is compared.
func toFrame(typ string, obj map[string]any) frame {
	switch typ {
	case "ERROR":
		return frame{Type: typ, ID: fmt.Sprintf("%v %v", obj["code"], obj["reason"])}
	case "BOOKMARK":
		meta, _ := obj["metadata"].(map[string]any)
		keys := make([]string, 0, len(meta))
		for k := range meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return frame{Type: typ, ID: fmt.Sprintf("%v %v %v %v", obj["kind"], obj["apiVersion"], keys, meta["annotations"])}
	}
	return frame{Type: typ, ID: fmt.Sprintf("%s/%s %s@%s", str(obj, "metadata", "namespace"), str(obj, "metadata", "name"),
		str(obj, "metadata", "uid"), str(obj, "metadata", "resourceVersion"))}
}

// applyChanges makes a watch row's changes through the cloud admin.
func (s *suite) applyChanges(t *testing.T, ctx context.Context, ns string, changes []change) {
	t.Helper()
	cms := s.c.Admin.CoreV1().ConfigMaps(ns)
	for i, ch := range changes {
		var got *corev1.ConfigMap
		var err error
		switch ch.op {
		case "create":
			got, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ch.name, Labels: ch.labels}}, metav1.CreateOptions{})
		case "update", "relabel":
			got, err = cms.Get(ctx, ch.name, metav1.GetOptions{})
			if err == nil {
				got.Data = map[string]string{"step": fmt.Sprint(i)}
				if ch.labels != nil {
					got.Labels = ch.labels
				}
				got, err = cms.Update(ctx, got, metav1.UpdateOptions{})
			}
		case "delete":
			err = cms.Delete(ctx, ch.name, metav1.DeleteOptions{})
		default:
			err = fmt.Errorf("unknown change %q", ch.op)
		}
		if err != nil {
			t.Fatalf("%s configmap %s/%s: %v", ch.op, ns, ch.name, err)
		}
		if got != nil {
			s.recordWrite(t, "configmaps", got)
		}
	}
}
