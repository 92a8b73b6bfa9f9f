//go:build e2e

package direct

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// envChild makes the benchmark's binary run one node's kubelet read set
// directly against the cloud, as a process of its own, instead of its
// tests (see Proc).
const envChild = "BENCH_FLEET_DIRECT_CHILD"

// The lines between a direct node's process and the benchmark. The
// benchmark writes the spec, then commands; the process answers.
const (
	cmdRenew   = "renew"  // start the Lease renewals
	cmdAdd     = "add"    // add <pod>: catch up with a new pod
	msgSynced  = "synced" // the read set has synced
	msgFail    = "fail"   // fail <cause>: a Lease renewal failed
	msgRetried = "retry"  // retry: an attempt at a renewal failed and was made again
	msgAdded   = "added"  // added <pod>: the pod's reads have synced
	msgFailed  = "error"  // error <pod or -> <message>
	noPodField = "-"
)

// spec is what a direct node's process is given on its first line.
type spec struct {
	Host string
	TLS  rest.TLSClientConfig
	Node Node
}

// RunChildIfAsked runs a direct node's process and reports true when the
// binary was started as one (BENCH_FLEET_DIRECT_CHILD); TestMain then
// exits. When the process fails it exits with status 1 itself.
func RunChildIfAsked() bool {
	if os.Getenv(envChild) == "" {
		return false
	}
	if err := runChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return true
}

// runChild opens the read set in the spec read from in, then serves the
// benchmark's commands until in ends.
func runChild(in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := bufio.NewScanner(in)
	if !lines.Scan() {
		return fmt.Errorf("no spec: %v", lines.Err())
	}
	var s spec
	if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	w := &lineWriter{w: out}
	k, err := Open(ctx, &rest.Config{Host: s.Host, TLSClientConfig: s.TLS}, s.Node)
	if err != nil {
		w.line(msgFailed, noPodField, err.Error())
		return err
	}
	w.line(msgSynced)
	for lines.Scan() {
		verb, arg, _ := strings.Cut(lines.Text(), " ")
		switch verb {
		case cmdRenew:
			go lease.Renew(ctx, k.cs, s.Node.Name, w)
		case cmdAdd:
			go func() {
				if err := k.AddPod(ctx, arg); err != nil {
					w.line(msgFailed, arg, err.Error())
					return
				}
				w.line(msgAdded, arg)
			}()
		}
	}
	return nil
}

// lineWriter writes whole lines from many goroutines; it is the direct
// node's lease.Failer.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer // guarded by mu
}

func (l *lineWriter) line(words ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// One line per message: a message's own newlines would split it.
	fmt.Fprintln(l.w, strings.ReplaceAll(strings.Join(words, " "), "\n", " "))
}

// Fail hands the failed renewal's cause to the benchmark.
func (l *lineWriter) Fail(_ string, err error) { l.line(msgFail, lease.Cause(err)) }

// Retried tells the benchmark an attempt at a renewal was made again.
func (l *lineWriter) Retried(string) { l.line(msgRetried) }
