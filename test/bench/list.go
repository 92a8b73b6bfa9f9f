//go:build e2e

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// listResult is one server's LIST figures of one round.
type listResult struct {
	rawJSON, rawProto     time.Duration // time to last byte, median of reps
	typedJSON, typedProto time.Duration // request plus typed decode
	// typedJSONFloor and typedProtoFloor are the typed LISTs of the same
	// bodies replayed from memory: the client's own part.
	typedJSONFloor, typedProtoFloor time.Duration
	cpuPerList                      time.Duration // server CPU per raw JSON LIST
	bytesJSON                       int64         // body bytes of one raw JSON LIST
	items                           int           // pods in the typed LIST
}

// podsPath is the LIST kubelet sends at start: its pods, from the cache.
func podsPath(node string) string {
	q := url.Values{"fieldSelector": {podSelector(node)}, "resourceVersion": {"0"}}
	return "/api/v1/pods?" + q.Encode()
}

// rawList GETs the node's pods in one media type and reads the body to
// the last byte.
func rawList(ctx context.Context, s *server, node, accept string) (time.Duration, int64, error) {
	return rawGet(ctx, s, podsPath(node), accept)
}

// rawGet GETs path in one media type, reads the body to the last byte and
// returns the time and the body size. The transport asks for gzip, as
// client-go's does, and counts the body uncompressed.
func rawGet(ctx context.Context, s *server, path, accept string) (time.Duration, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Accept", accept)
	start := time.Now()
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("%s GET %s %s: %w", s.name, path, accept, err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s GET %s %s: read body: %w", s.name, path, accept, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("%s GET %s %s: %s", s.name, path, accept, resp.Status)
	}
	return d, n, nil
}

// typedList lists the node's pods through a typed client and returns the
// time including the decode and the number of items.
func typedList(ctx context.Context, cs kubernetes.Interface, node string) (time.Duration, int, error) {
	start := time.Now()
	l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: podSelector(node), ResourceVersion: "0"})
	if err != nil {
		return 0, 0, err
	}
	return time.Since(start), len(l.Items), nil
}

// measureLists takes one round of LIST figures from s.
func measureLists(ctx context.Context, s *server, node string, reps int) (listResult, error) {
	var r listResult
	var jsonTimes, protoTimes []time.Duration
	_, cpu, err := s.measure(func() error {
		for range reps {
			d, n, err := rawList(ctx, s, node, mediaJSON)
			if err != nil {
				return err
			}
			jsonTimes, r.bytesJSON = append(jsonTimes, d), n
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	r.cpuPerList = cpu / time.Duration(reps)
	for range reps {
		d, _, err := rawList(ctx, s, node, mediaProtobuf)
		if err != nil {
			return r, err
		}
		protoTimes = append(protoTimes, d)
	}
	r.rawJSON, r.rawProto = medianDuration(jsonTimes), medianDuration(protoTimes)
	if r.typedJSON, r.items, err = typedList(ctx, s.jsonOnly, node); err != nil {
		return r, fmt.Errorf("%s typed json list: %w", s.name, err)
	}
	var protoItems int
	if r.typedProto, protoItems, err = typedList(ctx, s.proto, node); err != nil {
		return r, fmt.Errorf("%s typed protobuf list: %w", s.name, err)
	}
	if protoItems != r.items {
		return r, fmt.Errorf("%s: %d pods in protobuf, %d in JSON", s.name, protoItems, r.items)
	}
	return r, nil
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
