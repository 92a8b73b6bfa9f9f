//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// cliResult is what one run of the binary printed and its exit status.
type cliResult struct {
	stdout, stderr string
	code           int
}

func runBinary(t *testing.T, bin string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %v: %v", args, err)
	}
	return cliResult{stdout: out.String(), stderr: errOut.String(), code: cmd.ProcessState.ExitCode()}
}

// The built binary's exit statuses and version, as an operator meets them.
func TestCLIExitStatusAndVersion(t *testing.T) {
	b, err := framework.LocateBinaries()
	if err != nil {
		t.Fatal(err)
	}
	help := runBinary(t, b.APIServerLite, "--help")
	if help.code != 0 {
		t.Errorf("--help: got exit %d, stderr %q; want 0", help.code, help.stderr)
	}
	for _, sub := range []string{"status", "inspect", "snapshot", "config", "kubeconfig", "version"} {
		if !strings.Contains(help.stdout, "\n  "+sub+" ") {
			t.Errorf("--help: got\n%s\nwant it to list %s", help.stdout, sub)
		}
		if r := runBinary(t, b.APIServerLite, sub, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%s --help: got exit %d, stdout %q; want 0 and its usage", sub, r.code, r.stdout)
		}
	}
	data := t.TempDir() + "/data"
	unknown := runBinary(t, b.APIServerLite, "frobnicate", "--data-dir", data, "--node-name", "n1")
	if unknown.code == 0 || !strings.Contains(unknown.stderr, `unknown command "frobnicate"`) {
		t.Errorf("frobnicate: got exit %d, stderr %q; want non-zero and unknown command", unknown.code, unknown.stderr)
	}
	if os.Getenv(framework.EnvEdgeBin) == "" {
		t.Skipf("the framework's own build is not stamped; set %s to a make build binary to check its revision", framework.EnvEdgeBin)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout to compare the revision with: %v", err)
	}
	v := runBinary(t, b.APIServerLite, "version")
	if want := "(revision " + strings.TrimSpace(string(head)); v.code != 0 || !strings.Contains(v.stdout, want) {
		t.Errorf("version: got exit %d, %q; want it to contain %q (build with make build)", v.code, v.stdout, want)
	}
}
