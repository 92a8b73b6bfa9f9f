//go:build e2e

package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Environment variables that locate the binaries under test.
const (
	// EnvToolsBin names the dir with etcd, kube-apiserver, kubectl,
	// kubemark, coredns and flanneld, as printed by test/tools/build.sh.
	EnvToolsBin = "APISERVER_LITE_TOOLS_BIN"
	// EnvEdgeBin names the apiserver-lite binary. When unset, the framework
	// builds ./cmd/apiserver-lite once per test binary.
	EnvEdgeBin = "APISERVER_LITE_BIN"
	// EnvArtifacts names a dir that keeps each test's state and logs.
	EnvArtifacts = "APISERVER_LITE_E2E_ARTIFACTS"
)

// Binaries are the absolute paths of every program a test cluster runs.
type Binaries struct {
	Etcd          string
	KubeAPIServer string
	Kubectl       string
	Kubemark      string
	// CoreDNS is checked only when a test starts it (StartCoreDNS), so
	// the other tests run on a tools dir built before it was added.
	CoreDNS string
	// Flanneld is checked only when a test starts it (StartFlanneld).
	Flanneld      string
	APIServerLite string
}

var (
	// builtEdge caches the apiserver-lite build shared by all tests of one
	// test binary; buildDir is removed by Main.
	builtEdgeOnce sync.Once
	builtEdge     string
	builtEdgeErr  error
	buildDir      string
)

// Main runs the tests and removes what the framework built for them. Use it
// from TestMain: os.Exit(framework.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	return code
}

// LocateBinaries finds the cloud tools in EnvToolsBin and apiserver-lite in
// EnvEdgeBin, building apiserver-lite from the repo when that is unset.
func LocateBinaries() (Binaries, error) {
	dir := os.Getenv(EnvToolsBin)
	if dir == "" {
		return Binaries{}, fmt.Errorf("%s is unset; run: export %s=\"$(test/tools/build.sh)\"", EnvToolsBin, EnvToolsBin)
	}
	b := Binaries{
		Etcd:          filepath.Join(dir, "etcd"),
		KubeAPIServer: filepath.Join(dir, "kube-apiserver"),
		Kubectl:       filepath.Join(dir, "kubectl"),
		Kubemark:      filepath.Join(dir, "kubemark"),
		CoreDNS:       filepath.Join(dir, "coredns"),
		Flanneld:      filepath.Join(dir, "flanneld"),
	}
	for _, path := range []string{b.Etcd, b.KubeAPIServer, b.Kubectl, b.Kubemark} {
		if err := checkExecutable(path); err != nil {
			return Binaries{}, fmt.Errorf("%w (rebuild with test/tools/build.sh)", err)
		}
	}
	edge, err := edgeBinary()
	if err != nil {
		return Binaries{}, err
	}
	b.APIServerLite = edge
	return b, nil
}

// edgeBinary returns EnvEdgeBin or a fresh build of ./cmd/apiserver-lite.
func edgeBinary() (string, error) {
	if path := os.Getenv(EnvEdgeBin); path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", EnvEdgeBin, err)
		}
		return abs, checkExecutable(abs)
	}
	builtEdgeOnce.Do(func() { builtEdge, builtEdgeErr = buildEdge() })
	return builtEdge, builtEdgeErr
}

// buildEdge builds ./cmd/apiserver-lite from the repo into buildDir.
func buildEdge() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	if buildDir, err = os.MkdirTemp("", "apiserver-lite-e2e-bin-"); err != nil {
		return "", fmt.Errorf("create build dir: %w", err)
	}
	out := filepath.Join(buildDir, "apiserver-lite")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/apiserver-lite")
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build apiserver-lite: %w\n%s", err, output)
	}
	return out, nil
}

func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("binary %s: %w", path, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("binary %s: not an executable file", path)
	}
	return nil
}

// RepoRoot walks up from the working directory, which go test sets to the
// test package dir, to the first dir holding a go.mod: the root module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("get working dir: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("find repo root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repo root: no go.mod above the working dir")
		}
		dir = parent
	}
}
