//go:build e2e

package direct

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// stopGrace is how long a direct node's process gets to exit once its
// commands end before it is killed.
const stopGrace = 5 * time.Second

// errExited is a direct node's process gone before answering.
var errExited = errors.New("direct node's process exited")

// Proc is one node's kubelet read set made directly against the cloud in
// a process of its own, as a kubelet is: the cloud writes each node's
// watch events to a process that sleeps between them, as it does to each
// node's apiserver-lite, rather than to one shared busy process.
type Proc struct {
	node string
	cmd  *exec.Cmd
	in   io.WriteCloser
	// synced gets the read set's first sync, or its failure.
	synced chan error
	// exited is closed once the process's output has ended.
	exited chan struct{}
	failed *lease.Failures

	mu sync.Mutex
	// waiting are the AddPod calls waiting for their pod, by pod name.
	// Guarded by mu.
	waiting map[string]chan error
	// inMu serialises writes to in.
	inMu sync.Mutex
}

// Start starts n's read set against cfg's cloud as a process of its own
// running this binary, logging to logDir, and waits until it has synced.
// Its failed Lease renewals count in failed.
func Start(cfg *rest.Config, n Node, logDir string, failed *lease.Failures) (*Proc, error) {
	s, err := json.Marshal(spec{Host: cfg.Host, TLS: cfg.TLSClientConfig, Node: n})
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(logDir, "direct-"+n.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the process holds its own descriptor
	p := &Proc{node: n.Name, synced: make(chan error, 1), exited: make(chan struct{}), failed: failed, waiting: map[string]chan error{}}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), envChild+"=1")
	p.cmd.Stderr = logFile
	out, err := p.cmd.StdoutPipe()
	if err == nil {
		p.in, err = p.cmd.StdinPipe()
	}
	if err == nil {
		err = p.cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: start: %w", n.Name, err)
	}
	go p.read(out)
	if err := p.send(string(s)); err != nil {
		p.Stop()
		return nil, err
	}
	if err := <-p.synced; err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return p, nil
}

// read dispatches the process's lines until its output ends.
func (p *Proc) read(out io.Reader) {
	defer p.ended()
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		verb, rest, _ := strings.Cut(lines.Text(), " ")
		switch verb {
		case msgSynced:
			p.sync(nil)
		case msgFail:
			p.failed.FailCause(p.node, rest)
		case msgRetried:
			p.failed.Retried(p.node)
		case msgAdded:
			p.answer(rest, nil)
		case msgFailed:
			pod, msg, _ := strings.Cut(rest, " ")
			if pod == noPodField {
				p.sync(errors.New(msg))
				continue
			}
			p.answer(pod, errors.New(msg))
		}
	}
}

// ended answers everyone still waiting once the output has ended.
func (p *Proc) ended() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.exited)
	p.sync(errExited)
	for pod, ch := range p.waiting {
		ch <- errExited
		delete(p.waiting, pod)
	}
}

// sync hands the first sync's outcome to Start; later ones are dropped.
func (p *Proc) sync(err error) {
	select {
	case p.synced <- err:
	default:
	}
}

// answer hands pod's outcome to its AddPod call.
func (p *Proc) answer(pod string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.waiting[pod]; ok {
		ch <- err
		delete(p.waiting, pod)
	}
}

func (p *Proc) send(line string) error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	_, err := io.WriteString(p.in, line+"\n")
	return err
}

// Renew starts the node's Lease renewals.
func (p *Proc) Renew() error { return p.send(cmdRenew) }

// AddPod catches the node up with a new pod as Reads.AddPod does, in its
// process.
func (p *Proc) AddPod(ctx context.Context, pod string) error {
	ch := make(chan error, 1)
	p.mu.Lock()
	select {
	case <-p.exited:
		p.mu.Unlock()
		return errExited
	default:
	}
	p.waiting[pod] = ch
	p.mu.Unlock()
	if err := p.send(cmdAdd + " " + pod); err != nil {
		return err
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s: pod %s: %w", p.node, pod, ctx.Err())
	}
}

// Pid is the process's id, for its CPU time.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Stop ends the process: its commands end, then it is killed if it has
// not exited within stopGrace.
func (p *Proc) Stop() {
	p.inMu.Lock()
	_ = p.in.Close()
	p.inMu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
	}
	_ = p.cmd.Wait()
}
