//go:build e2e

package apf

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// Level is one priority level's counters in kube-apiserver's /metrics
// (apiserver_flowcontrol_*), summed over its flow schemas.
type Level struct {
	// Dispatched and Rejected count the requests let through and refused
	// (429); Waited those that reached a seat after a wait and WaitSum
	// their wait, in seconds (request_wait_duration_seconds,
	// execute=true).
	Dispatched, Rejected, Waited, WaitSum float64
}

func (l Level) minus(o Level) Level {
	return Level{Dispatched: l.Dispatched - o.Dispatched, Rejected: l.Rejected - o.Rejected,
		Waited: l.Waited - o.Waited, WaitSum: l.WaitSum - o.WaitSum}
}

// Levels are the priority levels' counters by name.
type Levels map[string]Level

// Minus is the counters since o, the levels that moved only.
func (f Levels) Minus(o Levels) Levels {
	out := Levels{}
	for name, l := range f {
		if d := l.minus(o[name]); d != (Level{}) {
			out[name] = d
		}
	}
	return out
}

var (
	priorityLevelLabel = regexp.MustCompile(`[{,]priority_level="([^"]*)"`)
	executeTrue        = regexp.MustCompile(`[{,]execute="true"`)
)

// metrics are the metric families Level reads, each with where it adds a
// line's value.
var metrics = []struct {
	prefix  string
	execute bool // only the lines of requests that executed
	field   func(*Level) *float64
}{
	{"apiserver_flowcontrol_dispatched_requests_total{", false, func(l *Level) *float64 { return &l.Dispatched }},
	{"apiserver_flowcontrol_rejected_requests_total{", false, func(l *Level) *float64 { return &l.Rejected }},
	{"apiserver_flowcontrol_request_wait_duration_seconds_count{", true, func(l *Level) *float64 { return &l.Waited }},
	{"apiserver_flowcontrol_request_wait_duration_seconds_sum{", true, func(l *Level) *float64 { return &l.WaitSum }},
}

// parse reads the priority levels' counters from a /metrics body.
func parse(body []byte) (Levels, error) {
	out := Levels{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range metrics {
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

// Read reads the priority levels' counters from kube-apiserver's
// /metrics through cs.
func Read(ctx context.Context, cs kubernetes.Interface) (Levels, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("cloud metrics: %w", err)
	}
	return parse(body)
}
