//go:build e2e

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// OpenWatches reads kube-apiserver's open watches from its /metrics.
func OpenWatches(ctx context.Context, c *framework.Cluster) (int, error) {
	body, err := c.Admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("cloud metrics: %w", err)
	}
	byResource, err := ParseWatchesByResource(body)
	total := 0
	for _, n := range byResource {
		total += n
	}
	return total, err
}

// OpenWatchesByResource reads kube-apiserver's open watches by resource
// from its /metrics.
func OpenWatchesByResource(ctx context.Context, c *framework.Cluster) (map[string]int, error) {
	body, err := c.Admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("cloud metrics: %w", err)
	}
	return ParseWatchesByResource(body)
}

var resourceLabel = regexp.MustCompile(`[{,]resource="([^"]*)"`)

// ParseWatchesByResource sums apiserver_longrunning_requests of WATCH by
// resource.
func ParseWatchesByResource(body []byte) (map[string]int, error) {
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") || !strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("cloud metrics line %q: %w", line, err)
		}
		r := ""
		if g := resourceLabel.FindStringSubmatch(line); g != nil {
			r = g[1]
		}
		out[r] += int(v)
	}
	return out, sc.Err()
}
