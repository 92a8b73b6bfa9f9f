package operations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// StatusTimeout bounds `status`'s request to the daemon.
	StatusTimeout = 10 * time.Second
	// maxStatusBytes bounds the status document read from the daemon.
	maxStatusBytes = 4 << 20
	// httpsDoorAnswer is how Go's HTTPS server answers a plain-HTTP
	// request.
	httpsDoorAnswer = "Client sent an HTTP request to an HTTPS server"
)

// FetchStatus asks the daemon's authenticated door for its status
// document with the server, CA and credentials of a kubeconfig, as
// userAgent.
func FetchStatus(ctx context.Context, kubeconfig, userAgent string) (Status, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return Status{}, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.UserAgent = userAgent
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return Status{}, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	raw, err := client.Get().AbsPath(PathStatus).DoRaw(ctx)
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return Status{}, fmt.Errorf("ask the daemon at %s: %s (%d): %w", cfg.Host, s.Reason, s.Code, err)
	}
	if err != nil {
		return Status{}, fmt.Errorf("ask the daemon at %s: %w", cfg.Host, err)
	}
	return decodeStatus(bytes.NewReader(raw))
}

// FetchStatusPlain asks the daemon's plain-HTTP door at addr for its
// status document.
func FetchStatusPlain(ctx context.Context, addr string) (Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+PathStatus, nil)
	if err != nil {
		return Status{}, err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return Status{}, fmt.Errorf("ask the daemon at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxStatusBytes))
		if bytes.Contains(body, []byte(httpsDoorAnswer)) {
			return Status{}, fmt.Errorf("ask the daemon at %s: it serves HTTPS; pass --kubeconfig (apiserver-lite kubeconfig writes one)", addr)
		}
		return Status{}, fmt.Errorf("ask the daemon at %s: status %d", addr, resp.StatusCode)
	}
	return decodeStatus(resp.Body)
}

func decodeStatus(r io.Reader) (Status, error) {
	var doc Status
	if err := json.NewDecoder(io.LimitReader(r, maxStatusBytes)).Decode(&doc); err != nil {
		return Status{}, fmt.Errorf("decode status: %w", err)
	}
	return doc, nil
}
