package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustWriteFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatalf("write config: %v", err)
	}
	return p
}

func TestConfigPrecedence(t *testing.T) {
	file := mustWriteFile(t, "data-dir: /from/file\nlisten-address: 127.0.0.1:1\nnode-name: file-node\nwatch-cache-size: 7\n")
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		check  func(c config) string
		expect string
	}{
		{"defaults", nil, nil, func(c config) string { return c.ListenAddress }, defaultListenAddress},
		{"file over default", nil, []string{"--config", file}, func(c config) string { return c.DataDir }, "/from/file"},
		{"env over file", map[string]string{"APISERVER_LITE_DATA_DIR": "/from/env"}, []string{"--config", file},
			func(c config) string { return c.DataDir }, "/from/env"},
		{"flag over env", map[string]string{"APISERVER_LITE_DATA_DIR": "/from/env"}, []string{"--config", file, "--data-dir", "/from/flag"},
			func(c config) string { return c.DataDir }, "/from/flag"},
		{"file int", nil, []string{"--config", file}, func(c config) string { return strings.Repeat("x", c.WatchCacheSize) }, "xxxxxxx"},
		{"env node name", map[string]string{"APISERVER_LITE_NODE_NAME": "env-node"}, nil, func(c config) string { return c.NodeName }, "env-node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := append([]string{"--node-name=n"}, tt.args...)
			if tt.env["APISERVER_LITE_NODE_NAME"] != "" {
				args = tt.args
			}
			c, err := loadConfig(args)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got := tt.check(c); got != tt.expect {
				t.Errorf("got %q, want %q", got, tt.expect)
			}
		})
	}
}

func TestConfigResources(t *testing.T) {
	file := mustWriteFile(t, `resources:
  - {version: v1, resource: pods, fieldSelector: "spec.nodeName=${NODE_NAME}"}
  - {group: coordination.k8s.io, version: v1, resource: leases, namespace: kube-node-lease, labelSelector: "a=b"}
`)
	c, err := loadConfig([]string{"--config", file, "--node-name", "edge-1"})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := syncResources(c)
	if err != nil {
		t.Fatalf("resources: %v", err)
	}
	if len(res) != 2 {
		t.Fatalf("got %d resources, want 2", len(res))
	}
	if got, want := res[0].FieldSelector, "spec.nodeName=edge-1"; got != want {
		t.Errorf("pods selector: got %q, want %q", got, want)
	}
	if got, want := res[1].GVR.Group+"|"+res[1].Namespace+"|"+res[1].LabelSelector, "coordination.k8s.io|kube-node-lease|a=b"; got != want {
		t.Errorf("leases: got %q, want %q", got, want)
	}
}

func TestDefaultResourcesAreTheKubeletSet(t *testing.T) {
	c, err := loadConfig([]string{"--node-name", "n1"})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := syncResources(c)
	if err != nil {
		t.Fatalf("resources: %v", err)
	}
	if got, want := len(res), 14; got != want {
		t.Errorf("got %d default resources, want %d", got, want)
	}
	if got, want := res[0].FieldSelector, "spec.nodeName=n1"; got != want {
		t.Errorf("pods: got %q, want %q", got, want)
	}
	if got, want := res[1].FieldSelector, "metadata.name=n1"; got != want {
		t.Errorf("nodes: got %q, want %q", got, want)
	}
}

func TestConfigRejectsBadInput(t *testing.T) {
	dup := mustWriteFile(t, "resources:\n  - {version: v1, resource: pods}\n  - {version: v1, resource: pods}\n")
	bad := mustWriteFile(t, "resources: [\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero cache", []string{"--node-name=n", "--watch-cache-size=0"}, "watch-cache-size"},
		{"unknown flag", []string{"--nope"}, "unknown flag"},
		{"bad yaml", []string{"--node-name=n", "--config", bad}, "read config"},
		{"missing file", []string{"--node-name=n", "--config", "/does/not/exist.yaml"}, "read config"},
		{"owner without a namespace", []string{"--node-name=n", "--pod-identity-owners=kube-proxy"}, "pod-identity-owners"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := loadConfig([]string{"--node-name=n", "--config", dup}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("got %v, want a duplicate resource error", err)
	}
}
