package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
)

// socketUnits are the shipped socket units holding the doors' sockets.
var socketUnits = []string{"apiserver-lite.socket", "apiserver-lite-pods.socket"}

// The socket units verify next to the service they pass their sockets to.
func TestSocketUnitsVerify(t *testing.T) {
	main := mustAnalyzableUnit(t)
	dir := filepath.Dir(main)
	args := []string{"verify", main}
	for _, n := range socketUnits {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(unitPath), n))
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(dir, n))
	}
	out, err := exec.Command("systemd-analyze", args...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: got %v, output:\n%s\nwant success with no findings", err, out)
	}
}

// unitSettings reads a unit's Key=value lines (comments and sections
// aside); a key set twice keeps each value in order.
func unitSettings(t *testing.T, name string) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(filepath.Dir(unitPath), name))
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		out[k] = append(out[k], v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return out
}

// Each socket unit names its socket as the daemon takes it, for the door
// it holds, at the address the daemon's defaults and example config give
// that door, and passes it to the service, which asks for the default one.
func TestSocketUnitsMatchDoors(t *testing.T) {
	for _, tt := range []struct {
		unit           string
		listen, fdName string
		freeBind       bool
	}{
		{"apiserver-lite.socket", defaultListenAddress, door.SocketKubelet, false},
		{"apiserver-lite-pods.socket", "169.254.20.21:10551", door.SocketPods, true},
	} {
		t.Run(tt.unit, func(t *testing.T) {
			got := unitSettings(t, tt.unit)
			want := map[string][]string{"ListenStream": {tt.listen}, "FileDescriptorName": {tt.fdName},
				"Service": {"apiserver-lite.service"}, "Accept": {"no"}}
			if tt.freeBind {
				want["FreeBind"] = []string{"yes"}
			}
			for k, w := range want {
				if strings.Join(got[k], " ") != strings.Join(w, " ") {
					t.Errorf("%s %s=: got %q, want %q", tt.unit, k, got[k], w)
				}
			}
		})
	}
	if got := unitSettings(t, "apiserver-lite.service")["Sockets"]; strings.Join(got, " ") != "apiserver-lite.socket" {
		t.Errorf("apiserver-lite.service Sockets=: got %q, want [apiserver-lite.socket]", got)
	}
	example, err := os.ReadFile("../../configs/apiserver-lite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(example), "# secure-listen-address: 169.254.20.21:10551") {
		t.Errorf("configs/apiserver-lite.yaml: want the pods' door example at 169.254.20.21:10551, as apiserver-lite-pods.socket")
	}
}
