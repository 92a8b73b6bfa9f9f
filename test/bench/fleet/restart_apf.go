//go:build e2e

package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// flowLevel is one API Priority and Fairness priority level's counters in
// kube-apiserver's /metrics (apiserver_flowcontrol_*), summed over its
// flow schemas.
type flowLevel struct {
	// dispatched and rejected count the requests let through and refused
	// (429); waited those that reached a seat after a wait and waitSum
	// their wait, in seconds (request_wait_duration_seconds, execute=true).
	dispatched, rejected, waited, waitSum float64
}

func (l flowLevel) minus(o flowLevel) flowLevel {
	return flowLevel{dispatched: l.dispatched - o.dispatched, rejected: l.rejected - o.rejected,
		waited: l.waited - o.waited, waitSum: l.waitSum - o.waitSum}
}

// flowLevels are the priority levels' counters by name.
type flowLevels map[string]flowLevel

// minus is the counters since o, the levels that moved only.
func (f flowLevels) minus(o flowLevels) flowLevels {
	out := flowLevels{}
	for name, l := range f {
		if d := l.minus(o[name]); d != (flowLevel{}) {
			out[name] = d
		}
	}
	return out
}

var (
	priorityLevelLabel = regexp.MustCompile(`[{,]priority_level="([^"]*)"`)
	executeTrue        = regexp.MustCompile(`[{,]execute="true"`)
)

// flowMetrics are the metric families flowLevel reads, each with where it
// adds a line's value.
var flowMetrics = []struct {
	prefix  string
	execute bool // only the lines of requests that executed
	field   func(*flowLevel) *float64
}{
	{"apiserver_flowcontrol_dispatched_requests_total{", false, func(l *flowLevel) *float64 { return &l.dispatched }},
	{"apiserver_flowcontrol_rejected_requests_total{", false, func(l *flowLevel) *float64 { return &l.rejected }},
	{"apiserver_flowcontrol_request_wait_duration_seconds_count{", true, func(l *flowLevel) *float64 { return &l.waited }},
	{"apiserver_flowcontrol_request_wait_duration_seconds_sum{", true, func(l *flowLevel) *float64 { return &l.waitSum }},
}

// parseFlowLevels reads the priority levels' counters from a /metrics
// body.
func parseFlowLevels(body []byte) (flowLevels, error) {
	out := flowLevels{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range flowMetrics {
			if !strings.HasPrefix(line, m.prefix) || (m.execute && !executeTrue.MatchString(line)) {
				continue
			}
			g := priorityLevelLabel.FindStringSubmatch(line)
			i := strings.LastIndexByte(line, ' ')
			if g == nil || i < 0 {
				return nil, fmt.Errorf("cloud metrics line %q: no priority_level or value", line)
			}
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err != nil {
				return nil, fmt.Errorf("cloud metrics line %q: %w", line, err)
			}
			l := out[g[1]]
			*m.field(&l) += v
			out[g[1]] = l
		}
	}
	return out, sc.Err()
}

// readFlowLevels reads the priority levels' counters from kube-apiserver.
func readFlowLevels(ctx context.Context, c *framework.Cluster) (flowLevels, error) {
	body, err := c.Admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("cloud metrics: %w", err)
	}
	return parseFlowLevels(body)
}

// writeFlowLevels writes the levels that moved over the restart's window,
// the change's creates' level marked.
func writeFlowLevels(b *bytes.Buffer, moved flowLevels, createLevels []string) {
	b.WriteString("| API Priority and Fairness level, first SIGTERM → every node serving the change | dispatched | rejected (429) | waited for a seat | their mean wait |\n| --- | --- | --- | --- | --- |\n")
	for _, name := range slices.Sorted(maps.Keys(moved)) {
		l, label := moved[name], "`"+name+"`"
		if slices.Contains(createLevels, name) {
			label += " (the change's creates)"
		}
		mean := "–"
		if l.waited > 0 {
			mean = fmt.Sprintf("%.3f s", l.waitSum/l.waited)
		}
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %.0f | %s |\n", label, l.dispatched, l.rejected, l.waited, mean)
	}
	b.WriteString("\n")
}
