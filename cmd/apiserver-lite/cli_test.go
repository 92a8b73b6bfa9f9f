package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// mustMatchGolden compares got with testdata/name, or rewrites it with
// -update.
func mustMatchGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with -update to create it)", name, err)
	}
	if got != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

// runCommand runs apiserver-lite with args and returns its standard
// output.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runCLI(t, args...)
	return out, err
}

// runCLI runs apiserver-lite with args and returns its standard output and
// standard error.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// normalize blanks the fields of a live status that change from run to run.
func normalize(doc operations.Status) operations.Status {
	for i := range doc.Resources {
		doc.Resources[i].StalenessSeconds = nil
		if e := doc.Resources[i].LastError; e != nil {
			doc.Resources[i].LastError = &metrics.ErrorRecord{Code: e.Code, Message: "(message)"}
		}
	}
	return doc
}

func TestStatusGolden(t *testing.T) {
	d := startOfflineDaemon(t)
	mustMetricEventually(t, d.base, `apiserver_lite_cloud_errors_total{code="transport",resource="configmaps"} `)
	addr := strings.TrimPrefix(d.base, "http://")
	raw, err := runCommand(t, "status", "--address", addr, "-o", "json")
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var doc operations.Status
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("status -o json: %v in %s", err, raw)
	}
	doc = normalize(doc)
	var table, js bytes.Buffer
	if err := printDoc(&table, doc, "table"); err != nil {
		t.Fatal(err)
	}
	if err := printDoc(&js, doc, "json"); err != nil {
		t.Fatal(err)
	}
	mustMatchGolden(t, "status.table.golden", table.String())
	mustMatchGolden(t, "status.json.golden", js.String())
	if tbl, err := runCommand(t, "status", "--address", addr); err != nil || !strings.Contains(tbl, "RESOURCE") {
		t.Errorf("status table: got %v %q, want a table", err, tbl)
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("node-name: n1\ninsecure-listen-address: "+addr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCommand(t, "status", "--config", cfg, "-o", "json"); err != nil || !strings.Contains(out, `"node": "n1"`) {
		t.Errorf("status --config: got %v %q, want the daemon's status", err, out)
	}
	if err := os.WriteFile(cfg, []byte("node-name: n1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runCommand(t, "status", "--config", cfg); err == nil || !strings.Contains(err.Error(), "pass --kubeconfig") {
		t.Errorf("status --config without an insecure door: got %v, want a pointer to --kubeconfig", err)
	}
	if _, err := runCommand(t, "status", "--address", mustFreeAddress(t)); err == nil {
		t.Errorf("status with no daemon: got nil, want an error")
	}
}

// A fixed document covers the columns a live offline daemon leaves empty.
func TestStatusTableGolden(t *testing.T) {
	s := 12.4
	doc := operations.Status{Source: "daemon", Node: "edge-1", Link: "up", LastCommitError: "persist batch: database or disk is full",
		Resources: []operations.ResourceStatus{
			{Resource: "pods", Key: "/v1/pods?fieldSelector=spec.nodeName%3Dedge-1", ResourceVersion: 1234, Ready: true,
				Objects: 7, Watchers: 3, TooSlowWatchers: 1, StalenessSeconds: &s},
			{Resource: "leases.coordination.k8s.io", Key: "coordination.k8s.io/v1/leases", ResourceVersion: 99, Ready: true,
				LastError: &metrics.ErrorRecord{Time: time.Unix(0, 0), Code: "403",
					Message: `leases.coordination.k8s.io is forbidden: User "system:node:edge-1" cannot list resource`}},
		}}
	var out bytes.Buffer
	if err := printDoc(&out, doc, "table"); err != nil {
		t.Fatal(err)
	}
	mustMatchGolden(t, "status-full.table.golden", out.String())
}

func TestInspectGolden(t *testing.T) {
	d := startOfflineDaemon(t)
	if err := d.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, format := range []string{"table", "json"} {
		out, err := runCommand(t, "inspect", "--data-dir", d.data, "-o", format)
		if err != nil {
			t.Fatalf("inspect: %v", err)
		}
		mustMatchGolden(t, "inspect."+format+".golden", out)
	}
	if _, err := runCommand(t, "inspect", "--data-dir", t.TempDir()); err == nil {
		t.Errorf("inspect of an empty dir: got nil, want an error")
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "node-name: n1\ndata-dir: /var/lib/x\nkubeconfig: "+kc+"\nlog-format: json\nmax-staleness: 2m\n")
	tests := []struct {
		name, file string
		want       []string // "" means valid
	}{
		{"valid", good, nil},
		{"unknown key", write("unknown.yaml", "node-name: n1\nkubeconfig: "+kc+"\nlog-colour: red\n"), []string{`invalid keys: log-colour`}},
		{"unknown resource key", write("unknown-res.yaml", "node-name: n1\nkubeconfig: "+kc+"\nresources: [{version: v1, resource: pods, selector: x}]\n"), []string{"selector"}},
		{"bad values", write("bad.yaml", "node-name: n1\nkubeconfig: "+kc+"\nlog-format: xml\nlog-level: loud\nlisten-address: nowhere\ndata-dir: rel/dir\nmax-staleness: 0s\n"),
			[]string{`log-format "xml": want text or json`, `log-level "loud"`, `listen-address "nowhere": want host:port`,
				`data-dir must be an absolute path, got "rel/dir"`, "max-staleness must be a positive duration"}},
		{"bad duration", write("dur.yaml", "node-name: n1\nkubeconfig: "+kc+"\nmax-staleness: soon\n"), []string{"max-staleness"}},
		{"missing kubeconfig", write("nokc.yaml", "node-name: n1\nkubeconfig: /does/not/exist\n"), []string{"kubeconfig: stat /does/not/exist: no such file or directory"}},
		{"missing config file", filepath.Join(dir, "absent.yaml"), []string{"read config"}},
		{"no config flag", "", []string{"--config is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"config", "check", "--config", tt.file}
			if tt.file == "" {
				args = []string{"config", "check", "--node-name", "n1"}
			}
			out, err := runCommand(t, args...)
			if tt.want == nil {
				if err != nil || out != "config "+tt.file+": ok\n" {
					t.Errorf("got %v %q, want ok", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("got ok, want errors %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// The shipped example config passes config check.
func TestExampleConfigChecks(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCommand(t, "config", "check", "--config", "../../configs/apiserver-lite.yaml", "--kubeconfig", kc, "--node-name", "edge-1")
	if err != nil || !strings.HasSuffix(out, ": ok\n") {
		t.Errorf("example config: got %v %q, want ok", err, out)
	}
}

// A cloud kubeconfig that skips TLS verification passes the check with a
// warning on standard error.
func TestConfigCheckWarnsInsecureSkipTLSVerify(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, kubeconfig, wantWarning, wantNames string
	}{
		{"verified", unreachableKubeconfig, "", ""},
		{"insecure", strings.Replace(unreachableKubeconfig, `server: "https://127.0.0.1:1"`,
			`server: "https://127.0.0.1:1", insecure-skip-tls-verify: true`, 1), "Warning: kubeconfig ", "insecure-skip-tls-verify"},
		{"client CA from the kubeconfig", strings.Replace(unreachableKubeconfig, `server: "https://127.0.0.1:1"`,
			`server: "https://127.0.0.1:1", certificate-authority-data: Zm9v`, 1), "Warning: client-ca-file is unset", "client-ca-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := filepath.Join(dir, tt.name+".kubeconfig")
			cfg := filepath.Join(dir, tt.name+".yaml")
			if err := os.WriteFile(kc, []byte(tt.kubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, []byte("node-name: n1\nkubeconfig: "+kc+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := runCLI(t, "config", "check", "--config", cfg)
			if err != nil || out != "config "+cfg+": ok\n" {
				t.Fatalf("got %v %q, want ok", err, out)
			}
			if tt.wantWarning == "" && errOut != "" {
				t.Errorf("got warnings %q, want none", errOut)
			}
			if tt.wantWarning != "" && (!strings.HasPrefix(errOut, tt.wantWarning) || !strings.Contains(errOut, tt.wantNames)) {
				t.Errorf("got warnings %q, want one naming %s", errOut, tt.wantNames)
			}
		})
	}
}
