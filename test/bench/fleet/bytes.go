//go:build e2e

package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// cloudBytes are the bytes kube-apiserver sent, from its own metrics:
// responses to resource LISTs and GETs (apiserver_response_sizes) and
// watch events, bookmarks included (apiserver_watch_events_sizes), to
// every client, its own loopback informers included.
type cloudBytes struct {
	list, get, watch float64
}

func (b cloudBytes) total() float64 { return b.list + b.get + b.watch }

func (b cloudBytes) minus(o cloudBytes) cloudBytes {
	return cloudBytes{list: b.list - o.list, get: b.get - o.get, watch: b.watch - o.watch}
}

// readCloudBytes reads the byte counters from kube-apiserver's /metrics.
func readCloudBytes(ctx context.Context, c *framework.Cluster) (cloudBytes, error) {
	body, err := c.Admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return cloudBytes{}, fmt.Errorf("cloud metrics: %w", err)
	}
	return parseCloudBytes(body)
}

// parseCloudBytes sums the byte counters of a Prometheus text exposition.
func parseCloudBytes(body []byte) (cloudBytes, error) {
	var b cloudBytes
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var dst *float64
		switch {
		case strings.HasPrefix(line, "apiserver_watch_events_sizes_sum{"):
			dst = &b.watch
		case !strings.HasPrefix(line, "apiserver_response_sizes_sum{") || noResource(line):
			continue // not a resource request's response
		case strings.Contains(line, `verb="LIST"`):
			dst = &b.list
		case strings.Contains(line, `verb="GET"`):
			dst = &b.get
		default:
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return b, fmt.Errorf("cloud metrics line %q: %w", line, err)
		}
		*dst += v
	}
	return b, sc.Err()
}

// noResource reports whether a metrics line is labelled resource="", a
// non-resource request's (subresource="" does not count).
func noResource(line string) bool {
	return strings.Contains(line, `{resource=""`) || strings.Contains(line, `,resource=""`)
}
