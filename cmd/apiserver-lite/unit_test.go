package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const (
	// unitPath is the shipped systemd unit, relative to this package.
	unitPath = "../../systemd/apiserver-lite.service"
	// installedBinary is the ExecStart path the unit names.
	installedBinary = "/usr/local/bin/apiserver-lite"
	// maxExposure is the highest `systemd-analyze security` exposure the
	// unit may have (0 is fully locked down, 10 is unsafe).
	maxExposure = 3.0
)

// exposureRE finds the overall score in `systemd-analyze security` output.
var exposureRE = regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`)

// mustAnalyzableUnit copies the unit to a temporary directory with
// ExecStart pointing at an executable that exists here (this test binary),
// since verify checks that the command is executable.
func mustAnalyzableUnit(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed: unit checks skipped (install systemd to run them)")
	}
	raw, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatalf("read unit: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("executable: %v", err)
	}
	if !strings.Contains(string(raw), installedBinary) {
		t.Fatalf("unit does not start %s", installedBinary)
	}
	p := filepath.Join(t.TempDir(), "apiserver-lite.service")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(raw), installedBinary, self)), 0o600); err != nil {
		t.Fatalf("write unit: %v", err)
	}
	return p
}

func TestUnitVerifies(t *testing.T) {
	p := mustAnalyzableUnit(t)
	out, err := exec.Command("systemd-analyze", "verify", p).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: got %v, output:\n%s\nwant success with no findings", err, out)
	}
}

// Every other unit in systemd/ (those that restart the daemon when its
// credentials rotate, the first-boot key generator, ...) verifies next to
// it.
func TestCompanionUnitsVerify(t *testing.T) {
	main := mustAnalyzableUnit(t)
	dir := filepath.Dir(main)
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("executable: %v", err)
	}
	units, err := filepath.Glob(filepath.Join(filepath.Dir(unitPath), "apiserver-lite*"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"verify"}
	for _, u := range units {
		n := filepath.Base(u)
		if n == filepath.Base(unitPath) {
			continue
		}
		raw, err := os.ReadFile(u)
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte(strings.ReplaceAll(string(raw), installedBinary, self)), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(dir, n))
	}
	if len(args) < 4 {
		t.Fatalf("got %d companion units, want at least the credentials path and service and the key generator", len(args)-1)
	}
	out, err := exec.Command("systemd-analyze", args...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: got %v, output:\n%s\nwant success with no findings", err, out)
	}
}

func TestUnitSecurityExposure(t *testing.T) {
	p := mustAnalyzableUnit(t)
	out, err := exec.Command("systemd-analyze", "security", "--offline=yes", "--no-pager", p).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := exposureRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in:\n%s", out)
	}
	got, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("exposure %q: %v", m[1], err)
	}
	if got > maxExposure {
		t.Errorf("exposure: got %.1f, want <= %.1f\n%s", got, maxExposure, out)
	}
}
