package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startDaemonOn runs the daemon offline on an existing data dir.
func startDaemonOn(t *testing.T, data string) (base string, stop func()) {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("resources:\n  - {version: v1, resource: configmaps}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := mustFreeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--config", cfgFile, "--kubeconfig", kc, "--data-dir", data, "--listen-address", "", "--insecure-listen-address", addr, "--sync-scope", "cluster",
			"--node-name", "n1", "--log-level", "error"})
	}()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(shutdownTimeout + 5*time.Second):
			t.Fatalf("run did not return")
		}
	}
	return "http://" + addr, stop
}

// Save from a running daemon, restore into a new data dir, and a daemon
// started there with no cloud serves the same objects at the same RVs.
func TestSnapshotRoundTrip(t *testing.T) {
	d := startOfflineDaemon(t)
	snap := filepath.Join(t.TempDir(), "node.snap")
	out, err := runCommand(t, "snapshot", "save", "--data-dir", d.data, snap)
	if err != nil || !strings.Contains(out, `node "n1", 1 resources, integrity ok`) {
		t.Fatalf("save: got %v %q", err, out)
	}
	if fi, err := os.Stat(snap); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v, want mode 0600", fi, err)
	}
	want := mustGetEventually(t, d.base+"/api/v1/namespaces/ns/configmaps/kept")
	wantList := mustGetEventually(t, d.base+"/api/v1/configmaps")
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}

	if _, err := runCommand(t, "snapshot", "restore", snap, "--data-dir", t.TempDir(), "--node-name", "other"); err == nil ||
		!strings.Contains(err.Error(), `taken on node "n1"`) {
		t.Errorf("restore for another node: got %v, want a refusal naming both", err)
	}
	if _, err := runCommand(t, "snapshot", "restore", snap, "--data-dir", d.data, "--node-name", "n1"); err == nil ||
		!strings.Contains(err.Error(), "--force") {
		t.Errorf("restore over a store: got %v, want a refusal without --force", err)
	}
	fresh := filepath.Join(t.TempDir(), "seeded")
	if out, err := runCommand(t, "snapshot", "restore", snap, "--data-dir", fresh, "--node-name", "n1"); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != dataDirMode {
		t.Errorf("seeded data dir: %v %v, want mode 0700", fi, err)
	}
	base, stop := startDaemonOn(t, fresh)
	defer stop()
	if got := mustGetEventually(t, base+"/api/v1/namespaces/ns/configmaps/kept"); got != want {
		t.Errorf("GET from the seeded node: got %s, want %s", got, want)
	}
	if got := mustGetEventually(t, base+"/api/v1/configmaps"); got != wantList {
		t.Errorf("LIST from the seeded node: got %s, want %s", got, wantList)
	}
}

func TestSnapshotRestoreRefusesDamage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(bad, []byte("not a database at all, just some bytes padded out"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "d")
	if _, err := runCommand(t, "snapshot", "restore", bad, "--data-dir", dir, "--node-name", "n1"); err == nil {
		t.Errorf("restore of garbage: got nil, want an error")
	}
	if _, err := os.Stat(filepath.Join(dir, dbFile)); err == nil {
		t.Errorf("restore of garbage left a store behind")
	}
}
