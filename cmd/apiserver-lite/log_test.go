package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

func TestLogFormats(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(&buf, "info", format)
			if err != nil {
				t.Fatal(err)
			}
			log.Info("hello", "k", "v")
			klog.InfoS("from klog", "x", 1)
			klog.Flush()
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != 2 {
				t.Fatalf("got %d lines %q, want the slog line and the klog line", len(lines), buf.String())
			}
			for _, l := range lines {
				var m map[string]any
				isJSON := json.Unmarshal([]byte(l), &m) == nil
				if isJSON != (format == "json") {
					t.Errorf("line %q: JSON %v, want %v", l, isJSON, format == "json")
				}
			}
			if !strings.Contains(lines[1], "from klog") {
				t.Errorf("klog line: got %q, want it routed into slog", lines[1])
			}
		})
	}
	if _, err := newLogger(&bytes.Buffer{}, "info", "xml"); err == nil {
		t.Errorf("log-format xml: got nil, want an error")
	}
}

// secretToken is a bearer token that must never reach a log line.
const secretToken = "s3cr3t-bearer-token-do-not-log"

// A daemon at debug level, failing to reach its cloud with a token and
// serving requests, never logs the token.
func TestNoSecretInLogs(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(strings.Replace(unreachableKubeconfig, "token: t", "token: "+secretToken, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "stderr")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = f
	t.Cleanup(func() { os.Stderr = saved })
	addr := mustFreeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig", kc, "--data-dir", filepath.Join(dir, "data"), "--listen-address", "", "--insecure-listen-address", addr,
			"--node-name", "n1", "--log-level", "debug", "--log-format", "json", "--sync-scope", "cluster"})
	}()
	mustGetEventually(t, "http://"+addr+"/livez")
	mustMetricEventually(t, "http://"+addr, `apiserver_lite_cloud_errors_total{code="transport",resource="configmaps"} `)
	get(t, "http://"+addr+"/api/v1/namespaces/ns/configmaps")
	cancel()
	select {
	case <-done:
	case <-time.After(shutdownTimeout + 5*time.Second):
		t.Fatal("run did not return")
	}
	os.Stderr = saved
	f.Close()
	logs, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) == 0 {
		t.Fatalf("no log output at debug level")
	}
	if bytes.Contains(logs, []byte(secretToken)) {
		t.Errorf("the bearer token appears in the logs:\n%s", logs)
	}
}
