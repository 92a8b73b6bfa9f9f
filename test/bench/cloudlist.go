//go:build e2e

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// cloudPageSize is the page size apiserver-lite's syncers list the cloud
// with (cloudsync's listPageSize).
const cloudPageSize = 500

// cloudList times what the initial sync asks of the cloud: a paged JSON
// LIST of the node's pods and one of every configmap, limit=500, each
// page read to the last byte, as apiserver-lite's syncers send them (one
// after the other here; the syncers run them side by side). It is the
// end-to-end bound of the sync: the cloud's own time to serve the data.
func cloudList(ctx context.Context, kube *server, node string) (time.Duration, error) {
	start := time.Now()
	if err := pagedList(ctx, kube, "/api/v1/pods", url.Values{"fieldSelector": {podSelector(node)}}); err != nil {
		return 0, err
	}
	err := pagedList(ctx, kube, "/api/v1/configmaps", url.Values{})
	return time.Since(start), err
}

// pagedList follows a LIST's continue tokens to the last page.
func pagedList(ctx context.Context, s *server, path string, q url.Values) error {
	q.Set("limit", strconv.Itoa(cloudPageSize))
	for {
		cont, err := listPage(ctx, s, path+"?"+q.Encode())
		if err != nil || cont == "" {
			return err
		}
		q.Set("continue", cont)
	}
}

// listPage GETs one JSON list page, reads its continue token from the
// metadata at the head of the body, without decoding the items, and reads
// the body to the last byte.
func listPage(ctx context.Context, s *server, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", mediaJSON)
	resp, err := s.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s GET %s: %w", s.name, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s GET %s: %s", s.name, path, resp.Status)
	}
	cont, rest, err := continueToken(resp.Body)
	if err != nil {
		return "", fmt.Errorf("%s GET %s: %w", s.name, path, err)
	}
	if _, err := io.Copy(io.Discard, rest); err != nil {
		return "", fmt.Errorf("%s GET %s: read body: %w", s.name, path, err)
	}
	return cont, nil
}

// continueToken reads a list's top-level keys up to its metadata, which
// the cloud writes before the items, and returns metadata.continue and
// the unread rest of the body.
func continueToken(body io.Reader) (string, io.Reader, error) {
	dec := json.NewDecoder(body)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", nil, fmt.Errorf("list body does not start with an object: %v", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", nil, err
		}
		if key != "metadata" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", nil, err
			}
			continue
		}
		var meta struct {
			Continue string `json:"continue"`
		}
		if err := dec.Decode(&meta); err != nil {
			return "", nil, err
		}
		return meta.Continue, io.MultiReader(dec.Buffered(), body), nil
	}
	return "", nil, fmt.Errorf("list body without metadata")
}
