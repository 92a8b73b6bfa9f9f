//go:build e2e

package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// relistChangedPercent is the share of pods, in percent, changed while
	// apiserver-lite is down: issue 12's bound for a lean relist.
	relistChangedPercent = 5
	// relistGoalPercent is issue 12's goal for the relist's link bytes, in
	// percent of one full protobuf LIST of the same objects.
	relistGoalPercent = 10
	// relistPageSize is the LIST page size of the full lists compared
	// with, as apiserver-lite and client-go's reflector page.
	relistPageSize = 500
	// relistSettle is how long the link is still counted after
	// apiserver-lite relisted (or, without a relist, became ready): the
	// start-up's last requests and the watches' set-up end within it.
	relistSettle = 2 * time.Second
)

// relistResult is one relist after the cloud expired apiserver-lite's
// watermark.
type relistResult struct {
	pods, changed int
	// linkBytes is what the cloud link carried, both ways, from
	// apiserver-lite's restart until relistSettle after its pods and
	// configmaps were relisted: the relists of every resource, and the
	// start-up's discovery and watches.
	linkBytes int64
	// startBytes is the same for a restart without a relist, until
	// relistSettle after /readyz: the start-up alone.
	startBytes int64
	// protoBodies is the uncompressed size of the protobuf LIST bodies.
	protoBodies int64
	// fullProto and fullJSON are one full LIST of the same pods and
	// configmaps in each format, paged as apiserver-lite pages, both ways
	// on a counted link to the cloud.
	fullProto, fullJSON int64
	// leanPods and leanConfigMaps say whether their relists took the
	// lean path.
	leanPods, leanConfigMaps bool
}

// measureRelist stops apiserver-lite, changes relistChangedPercent of the
// pods, restarts kube-apiserver so that its watch cache no longer reaches
// back to apiserver-lite's watermark (a resuming watch gets 410, as after
// etcd compacted it), restarts apiserver-lite and counts the link bytes
// until it relisted.
func measureRelist(ctx context.Context, c *framework.Cluster, kube, lite *server, ds *dataset) (relistResult, error) {
	r := relistResult{pods: ds.pods, changed: max(1, ds.pods*relistChangedPercent/100)}
	var err error
	c.KillEdge()
	if r.startBytes, err = countedRestart(ctx, c, func() error { return ready(ctx, lite) }); err != nil {
		return r, fmt.Errorf("restart: %w", err)
	}
	c.KillEdge()
	for i := range r.changed {
		name := podName(i * ds.pods / r.changed)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"relist"}}}`, SeqAnnotation)
		if _, err := kube.json.CoreV1().Pods(benchNamespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return r, fmt.Errorf("relist: change pod %s: %w", name, err)
		}
	}
	c.StopCloud()
	c.StartCloud()
	logPath := c.EdgeProcess().LogPath
	offset, err := fileSize(logPath)
	if err != nil {
		return r, err
	}
	r.linkBytes, err = countedRestart(ctx, c, func() error {
		var err error
		r.leanPods, r.leanConfigMaps, err = relisted(logPath, offset)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("relist: %w", err)
	}
	if r.fullProto, r.fullJSON, err = fullListBytes(ctx, kube, c.NodeName); err != nil {
		return r, err
	}
	for _, path := range []string{podsPath(c.NodeName), "/api/v1/configmaps"} {
		_, n, err := rawGet(ctx, kube, path, mediaProtobuf)
		if err != nil {
			return r, err
		}
		r.protoBodies += n
	}
	return r, nil
}

// countedRestart starts apiserver-lite and returns what the cloud link
// carried, both ways, until relistSettle after done succeeded.
func countedRestart(ctx context.Context, c *framework.Cluster, done func() error) (int64, error) {
	s0, r0 := c.LinkBytes()
	if err := c.EdgeProcess().Start(); err != nil {
		return 0, err
	}
	if err := PollUntil(ctx, done); err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(relistSettle):
	}
	s1, r1 := c.LinkBytes()
	return s1 - s0 + r1 - r0, nil
}

// fileSize is the size of the file at path.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// relisted reads apiserver-lite's log from offset on: it fails until both
// the pods and the configmaps were relisted, then says which of them were
// relisted the lean way.
func relisted(path string, offset int64) (leanPods, leanCMs bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, false, err
	}
	var pods, cms bool
	for _, line := range strings.Split(string(data[min(offset, int64(len(data))):]), "\n") {
		if !strings.Contains(line, "msg=relisted") {
			continue
		}
		res, lean := strings.Trim(field(line, "resource"), `"`), field(line, "lean") == "true"
		switch {
		case strings.HasPrefix(res, "/v1/pods"):
			pods, leanPods = true, lean
		case strings.HasPrefix(res, "/v1/configmaps"):
			cms, leanCMs = true, lean
		}
	}
	if !pods || !cms {
		return false, false, errors.New("pods or configmaps not relisted yet")
	}
	return leanPods, leanCMs, nil
}

// field returns the value of key=value in a log line, "" if absent.
func field(line, key string) string {
	_, v, ok := strings.Cut(line, " "+key+"=")
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

// fullListBytes lists the node's pods and every configmap once in each
// format through a counted link to kube-apiserver and returns the bytes
// each list moved, both ways, TLS included.
func fullListBytes(ctx context.Context, kube *server, node string) (proto, json int64, err error) {
	link, err := newCountedLink(kube.cfg.Host)
	if err != nil {
		return 0, 0, err
	}
	defer link.close()
	cfg := rest.CopyConfig(kube.cfg)
	cfg.Host = "https://" + link.addr()
	s, err := newServer("kube-apiserver, counted", cfg, kube.proc)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range []struct {
		cs  kubernetes.Interface
		out *int64
	}{{s.proto, &proto}, {s.json, &json}} {
		before := link.bytes()
		if err := pagedLists(ctx, f.cs, node); err != nil {
			return 0, 0, err
		}
		*f.out = link.bytes() - before
	}
	return proto, json, nil
}

// pagedLists lists the node's pods and every configmap in pages.
func pagedLists(ctx context.Context, cs kubernetes.Interface, node string) error {
	for _, list := range []func(metav1.ListOptions) (string, error){
		func(o metav1.ListOptions) (string, error) {
			o.FieldSelector = podSelector(node)
			l, err := cs.CoreV1().Pods("").List(ctx, o)
			if err != nil {
				return "", err
			}
			return l.Continue, nil
		},
		func(o metav1.ListOptions) (string, error) {
			l, err := cs.CoreV1().ConfigMaps("").List(ctx, o)
			if err != nil {
				return "", err
			}
			return l.Continue, nil
		},
	} {
		o := metav1.ListOptions{Limit: relistPageSize}
		for {
			next, err := list(o)
			if err != nil {
				return fmt.Errorf("full list: %w", err)
			}
			if next == "" {
				break
			}
			o.Continue = next
		}
	}
	return nil
}

// countedLink is a TCP relay to the cloud that counts what it carries
// both ways; TLS passes through it untouched.
type countedLink struct {
	ln     net.Listener
	target string
	n      atomic.Int64
	wg     sync.WaitGroup
}

func newCountedLink(cloudURL string) (*countedLink, error) {
	target := strings.TrimPrefix(cloudURL, "https://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("counted link: %w", err)
	}
	l := &countedLink{ln: ln, target: target}
	l.wg.Go(l.accept)
	return l, nil
}

func (l *countedLink) addr() string { return l.ln.Addr().String() }

func (l *countedLink) bytes() int64 { return l.n.Load() }

func (l *countedLink) accept() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", l.target)
		if err != nil {
			in.Close()
			continue
		}
		l.wg.Go(func() { l.relay(out, in) })
		l.wg.Go(func() { l.relay(in, out) })
	}
}

// relay copies src to dst, counting as it goes, then closes both.
func (l *countedLink) relay(dst, src net.Conn) {
	_, _ = io.Copy(CountingWriter{dst, &l.n}, src)
	dst.Close()
	src.Close()
}

// CountingWriter writes to W and adds what it wrote to N.
type CountingWriter struct {
	// W is where the bytes go.
	W io.Writer
	// N counts the bytes written, shared by every writer of one count.
	N *atomic.Int64
}

// Write writes p to W and adds the bytes written to N.
func (c CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N.Add(int64(n))
	return n, err
}

// close stops the link; open connections end with the clients' idle
// timeouts, so it does not wait for them.
func (l *countedLink) close() { l.ln.Close() }

// relistBytes is the relist's share of linkBytes: what the restart
// with the relist carried beyond a restart without one.
func (r relistResult) relistBytes() int64 { return r.linkBytes - r.startBytes }

// check returns what is missing in the relist figures.
func (r relistResult) check() []error {
	if r.linkBytes <= 0 || r.startBytes <= 0 || r.fullProto <= 0 || r.fullJSON <= 0 || r.protoBodies <= 0 || !r.leanPods || !r.leanConfigMaps {
		return []error{fmt.Errorf("relist: %+v", r)}
	}
	return nil
}

// writeRelist renders the relist figures.
func (res *results) writeRelist(b *bytes.Buffer) {
	r := res.relist
	fmt.Fprintf(b, "\nRelist after the cloud expired apiserver-lite's watermark: %d of %d pods changed while it was down, then kube-apiserver restarted, so its watch cache no longer reached the watermark and every resuming watch got 410 (lean relist: pods %s, configmaps %s). Cloud link bytes both ways, TLS included; the cloud gzips LIST answers over 128 KiB, not single objects:\n\n",
		r.changed, r.pods, yesNo(r.leanPods), yesNo(r.leanConfigMaps))
	fmt.Fprintf(b, "| figure | bytes | ÷ full protobuf LIST, on the link | ÷ full protobuf LIST, bodies uncompressed | goal | met |\n|---|---|---|---|---|---|\n")
	row := func(name string, n int64, goal string) {
		fmt.Fprintf(b, "| %s | %d | %.1f%% | %.1f%% | %s |", name, n, pct(n, r.fullProto), pct(n, r.protoBodies), goal)
	}
	row("restart with the relist, start-up included", r.linkBytes, "")
	fmt.Fprintf(b, " |\n")
	row("restart without a relist: the start-up alone", r.startBytes, "")
	fmt.Fprintf(b, " |\n")
	row("the relist: the difference", r.relistBytes(), fmt.Sprintf("≤ %d%%", relistGoalPercent))
	fmt.Fprintf(b, " %s |\n", yesNo(pct(r.relistBytes(), r.fullProto) <= relistGoalPercent))
	row(fmt.Sprintf("one full LIST of the same pods and configmaps, protobuf, pages of %d", relistPageSize), r.fullProto, "")
	fmt.Fprintf(b, " |\n")
	row("the same in JSON, as apiserver-lite's full relist", r.fullJSON, "")
	fmt.Fprintf(b, " |\n")
}
