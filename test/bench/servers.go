//go:build e2e

package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Client rate limits: far above what the harness sends, so that client-go's
// default of 5 requests/s never paces a measurement.
const (
	ClientQPS   = 5000
	ClientBurst = 10000
)

// Content types of the two wire formats.
const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// server is one side of the comparison: how to reach it and which
// processes its CPU and memory are charged to.
type server struct {
	name string
	base string
	http *http.Client
	cfg  *rest.Config
	// json and proto are typed clients; json sets no content type, so
	// client-go (1.36) asks for protobuf with a JSON fallback, as a
	// default-configured client does. jsonOnly asks for JSON alone.
	json, proto, jsonOnly kubernetes.Interface
	// proc is the serving process; its CPU is the server's CPU.
	proc *framework.Process
}

// newServer builds the clients of one side from a rest config.
func newServer(name string, cfg *rest.Config, proc *framework.Process) (*server, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = ClientQPS, ClientBurst
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s http client: %w", name, err)
	}
	s := &server{name: name, base: cfg.Host, http: hc, cfg: cfg, proc: proc}
	if s.json, err = kubernetes.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, fmt.Errorf("%s clientset: %w", name, err)
	}
	if s.jsonOnly, err = kubernetes.NewForConfigAndClient(jsonConfig(cfg), hc); err != nil {
		return nil, fmt.Errorf("%s JSON clientset: %w", name, err)
	}
	pcfg := protoConfig(cfg)
	if s.proto, err = kubernetes.NewForConfigAndClient(pcfg, hc); err != nil {
		return nil, fmt.Errorf("%s protobuf clientset: %w", name, err)
	}
	return s, nil
}

// jsonConfig returns cfg asking for JSON alone.
func jsonConfig(cfg *rest.Config) *rest.Config {
	j := rest.CopyConfig(cfg)
	j.ContentType = mediaJSON
	j.AcceptContentTypes = mediaJSON
	return j
}

// protoConfig returns cfg asking for protobuf, as kubelet does.
func protoConfig(cfg *rest.Config) *rest.Config {
	p := rest.CopyConfig(cfg)
	p.ContentType = mediaProtobuf
	p.AcceptContentTypes = mediaProtobuf + "," + mediaJSON
	return p
}

// cpu returns the CPU time the server process has used so far.
func (s *server) cpu() (time.Duration, error) {
	pid := s.proc.Pid()
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", s.name)
	}
	return ReadCPU(pid)
}

// podSelector selects the pods bound to the edge node: what kubelet lists,
// and all that apiserver-lite holds.
func podSelector(node string) string { return "spec.nodeName=" + node }

// countPods lists the node's pods through the typed JSON client.
func (s *server) countPods(ctx context.Context, node string) (int, error) {
	l, err := s.json.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: podSelector(node), ResourceVersion: "0"})
	if err != nil {
		return 0, fmt.Errorf("%s list pods: %w", s.name, err)
	}
	return len(l.Items), nil
}

// countConfigMaps lists every configmap through the typed JSON client.
func (s *server) countConfigMaps(ctx context.Context) (int, error) {
	l, err := s.json.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, fmt.Errorf("%s list configmaps: %w", s.name, err)
	}
	return len(l.Items), nil
}

// measure times f and charges the server's CPU used meanwhile to it.
func (s *server) measure(f func() error) (wall, cpu time.Duration, err error) {
	before, err := s.cpu()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := f(); err != nil {
		return 0, 0, err
	}
	wall = time.Since(start)
	after, err := s.cpu()
	if err != nil {
		return 0, 0, err
	}
	return wall, after - before, nil
}
