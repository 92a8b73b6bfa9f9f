//go:build e2e

// Command demo shows apiserver-lite at work on one machine. It brings up a
// throwaway cloud control plane (etcd and kube-apiserver), apiserver-lite
// for node edge-1 and a hollow kubelet (kubemark) whose only API server is
// apiserver-lite, all on loopback with state in a temporary directory. It
// prints kubectl commands to try against the edge, then scripts a cloud
// outage, an edge reboot while offline and the recovery, showing what the
// edge serves at each step. It then keeps running until Ctrl-C (or exits at
// once with -once) and kills every process it started.
//
// Run it from the repository root:
//
//	go run -tags e2e ./test/demo [-once]
//
// It reuses the e2e harness (test/e2e/framework): the cloud binaries come
// from APISERVER_LITE_TOOLS_BIN, or from test/tools/build.sh when unset
// (the first build takes several minutes); apiserver-lite from
// APISERVER_LITE_BIN, or a fresh build of ./cmd/apiserver-lite.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// exitInterrupted is the exit status after SIGINT or SIGTERM, as a shell
// reports a process killed by SIGINT.
const exitInterrupted = 130

func main() {
	once := flag.Bool("once", false, "exit after the scripted outage and recovery instead of waiting for Ctrl-C")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// A second signal now ends the program at once; the processes it
		// started die with it (the framework sets their parent-death signal).
		stop()
	}()
	r := newRunner(ctx, os.Stderr)
	r.onExit = func(failed bool) int {
		if ctx.Err() != nil {
			fmt.Println("\nInterrupted: stopped every process the demo started.")
			return exitInterrupted
		}
		if failed {
			return 1
		}
		return 0
	}
	if err := locateBinaries(ctx, r); err != nil {
		r.Fatalf("%v", err)
	}
	d := &demo{r: r, ctx: ctx, out: os.Stdout}
	d.setUp()
	d.printCommands()
	d.script()
	if !*once {
		d.printCommands()
		fmt.Fprintln(d.out, "The demo keeps running; press Ctrl-C to stop it and remove its state.")
		<-ctx.Done()
	}
	r.exit()
}

// locateBinaries sets the framework's binary variables when unset: the
// cloud tools from test/tools/build.sh, apiserver-lite built into the run's
// temporary directory.
func locateBinaries(ctx context.Context, r *runner) error {
	root, err := framework.RepoRoot()
	if err != nil {
		return fmt.Errorf("%w (run the demo from the repository)", err)
	}
	if os.Getenv(framework.EnvToolsBin) == "" {
		fmt.Println("Locating etcd, kube-apiserver, kubectl and kubemark with test/tools/build.sh (the first build takes several minutes)...")
		cmd := exec.CommandContext(ctx, filepath.Join(root, "test", "tools", "build.sh"))
		cmd.Dir, cmd.Stderr = root, os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("test/tools/build.sh: %w", err)
		}
		lines := strings.Fields(string(out))
		if len(lines) == 0 {
			return errors.New("test/tools/build.sh printed no bin dir")
		}
		r.Setenv(framework.EnvToolsBin, lines[len(lines)-1])
	}
	if os.Getenv(framework.EnvEdgeBin) == "" {
		fmt.Println("Building apiserver-lite...")
		bin := filepath.Join(r.TempDir(), "bin", "apiserver-lite")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/apiserver-lite")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build apiserver-lite: %w\n%s", err, out)
		}
		r.Setenv(framework.EnvEdgeBin, bin)
	}
	return nil
}
