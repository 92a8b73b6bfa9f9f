//go:build e2e

package framework

import (
	"fmt"
	"os"
	"strings"
)

// runStartFmt is the line Process.Start writes to the log before each run,
// after its "=== <time>" prefix; %s is the process name.
const runStartFmt = " start %s: "

// KubemarkLog returns the hollow kubelet's log since its last start, so
// checks after a restart do not match lines of an earlier run.
func (c *Cluster) KubemarkLog() string {
	c.t.Helper()
	if c.kubemark == nil {
		c.t.Fatalf("kubemark log: kubemark was never started")
	}
	log, err := currentRunLog(c.kubemark)
	if err != nil {
		c.t.Fatalf("kubemark log: %v", err)
	}
	return log
}

// KubemarkRootDir returns the root dir of the hollow kubelet's current run,
// which holds its pods' volumes. It changes on every start.
func (c *Cluster) KubemarkRootDir() string {
	c.t.Helper()
	m := kubemarkRootDir.FindStringSubmatch(c.KubemarkLog())
	if m == nil {
		c.t.Fatalf("kubemark root dir: not logged yet\n%s", c.kubemark.Tail(logTailLines))
	}
	return m[1]
}

// currentRunLog returns the part of p's log after the last start line.
func currentRunLog(p *Process) (string, error) {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return "", fmt.Errorf("read %s log: %w", p.Name, err)
	}
	log := string(data)
	marker := fmt.Sprintf(runStartFmt, p.Name)
	i := strings.LastIndex(log, marker)
	if i < 0 {
		return "", fmt.Errorf("%s log has no start line", p.Name)
	}
	start := strings.LastIndex(log[:i], "\n=== ") + 1 // 0 when it is the first line
	return log[start:], nil
}
