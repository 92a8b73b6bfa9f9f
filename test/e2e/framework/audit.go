//go:build e2e

package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// auditPolicy records every request without bodies: when its response is
// complete, and a watch also when it starts.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// auditSARBodiesRule logs SubjectAccessReviews with their request body
// (the user, groups, UID and extra a reviewer asks about); it goes before
// auditPolicy's catch-all rule.
const auditSARBodiesRule = `- level: Request
  resources:
  - group: authorization.k8s.io
    resources: ["subjectaccessreviews"]
`

// auditLineMax is the longest audit log line read, in bytes.
const auditLineMax = 1 << 20

// AuditEvent is one request kube-apiserver audited.
type AuditEvent struct {
	// AuditID is the same in every stage's event of one request.
	AuditID    string        `json:"auditID"`
	Stage      auditv1.Stage `json:"stage"`
	Verb       string        `json:"verb"`
	RequestURI string        `json:"requestURI"`
	UserAgent  string        `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
		// Extra names a pod-bound token's pod (authentication.kubernetes.io/pod-name).
		Extra map[string][]string `json:"extra"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// RequestObject is the request's body, logged only with
	// Options.AuditSARBodies for SubjectAccessReviews.
	RequestObject   json.RawMessage `json:"requestObject,omitempty"`
	RequestReceived time.Time       `json:"requestReceivedTimestamp"`
	// StageTimestamp is when the stage was reached: for ResponseComplete,
	// when a watch ended.
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// PodName is the pod a pod-bound token's user is bound to, empty for none.
func (e AuditEvent) PodName() string {
	if v := e.User.Extra["authentication.kubernetes.io/pod-name"]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Resource is the audited request's resource, empty for a non-resource
// URL.
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Resource
}

// Subresource is the audited request's subresource, empty for none.
func (e AuditEvent) Subresource() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Subresource
}

// auditArgs writes the audit policy and returns the kube-apiserver flags
// that log every request to auditLogPath.
func (c *Cluster) auditArgs() []string {
	c.t.Helper()
	policy := filepath.Join(c.Dir, "audit-policy.yaml")
	text := auditPolicy
	if c.opts.AuditSARBodies {
		text = strings.Replace(text, "rules:\n", "rules:\n"+auditSARBodiesRule, 1)
	}
	if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
		c.t.Fatalf("write audit policy: %v", err)
	}
	return []string{"--audit-policy-file", policy, "--audit-log-path", c.auditLogPath(),
		"--audit-log-mode", "blocking"}
}

func (c *Cluster) auditLogPath() string { return filepath.Join(c.Dir, "audit.log") }

// auditBackupTime is the layout of the rotation time (UTC) in a rotated
// audit log's name, audit-<time>.log: kube-apiserver's log writer's
// (gopkg.in/natefinch/lumberjack.v2).
const auditBackupTime = "2006-01-02T15-04-05.000"

// auditLogFiles are the audit log's files that may hold a request received
// at since or later, oldest first: the backups kube-apiserver rotated it
// into (every 100 MB, its log writer's default size; a fleet's restart
// writes that in seconds) not rotated before since, then the current one.
// Every entry of a backup was written, so received, before its rotation.
func (c *Cluster) auditLogFiles(since time.Time) ([]string, error) {
	backups, err := filepath.Glob(filepath.Join(c.Dir, "audit-*.log"))
	if err != nil {
		return nil, err
	}
	slices.Sort(backups) // the names sort by their rotation time
	backups = slices.DeleteFunc(backups, func(name string) bool {
		stamp := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "audit-"), ".log")
		rotated, err := time.Parse(auditBackupTime, stamp)
		return err == nil && rotated.Before(since)
	})
	return append(backups, c.auditLogPath()), nil
}

// EdgeUser is the user name apiserver-lite authenticates as to the cloud.
func (c *Cluster) EdgeUser() string {
	if c.opts.NodeCredentials {
		return fmt.Sprintf(nodeUserFmt, c.NodeName)
	}
	return fmt.Sprintf(edgeUserFmt, c.NodeName)
}

// CloudRequests returns the requests of the users user accepts that
// kube-apiserver received in [since, until), from its audit log, each
// once: a watch when it started, any other request when it completed. It
// needs Options.AuditLog.
func (c *Cluster) CloudRequests(user func(string) bool, since, until time.Time) []AuditEvent {
	c.t.Helper()
	var out []AuditEvent
	c.eachAuditEvent(since, func(e AuditEvent) {
		once := auditv1.StageResponseComplete
		if e.Verb == "watch" {
			once = auditv1.StageResponseStarted
		}
		if e.Stage == once && user(e.User.Username) && !e.RequestReceived.Before(since) && e.RequestReceived.Before(until) {
			out = append(out, e)
		}
	})
	return out
}

// OpenWatches returns the watches of the users user accepts that
// kube-apiserver received in [since, at) and had not ended at at, each as
// it started. It needs Options.AuditLog.
func (c *Cluster) OpenWatches(user func(string) bool, since, at time.Time) []AuditEvent {
	c.t.Helper()
	var started []AuditEvent
	ended := map[string]bool{}
	c.eachAuditEvent(since, func(e AuditEvent) {
		switch {
		case e.Verb != "watch" || !user(e.User.Username):
		case e.Stage == auditv1.StageResponseStarted && !e.RequestReceived.Before(since) && e.RequestReceived.Before(at):
			started = append(started, e)
		case e.Stage == auditv1.StageResponseComplete && e.StageTimestamp.Before(at):
			ended[e.AuditID] = true
		}
	})
	return slices.DeleteFunc(started, func(e AuditEvent) bool { return ended[e.AuditID] })
}

// eachAuditEvent calls fn with each event of the audit log's files that
// may hold a request received at since or later (auditLogFiles), oldest
// first. It needs Options.AuditLog.
func (c *Cluster) eachAuditEvent(since time.Time, fn func(AuditEvent)) {
	c.t.Helper()
	if !c.opts.AuditLog {
		c.t.Fatalf("cloud requests: Options.AuditLog is not set")
	}
	files, err := c.auditLogFiles(since)
	if err != nil {
		c.t.Fatalf("audit log files: %v", err)
	}
	for _, name := range files {
		if err := eachEvent(name, fn); err != nil {
			c.t.Fatalf("audit log: %v", err)
		}
	}
}

// eachEvent calls fn with each event the audit log file name holds, in
// order.
func eachEvent(name string, fn func(AuditEvent)) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), auditLineMax)
	for sc.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("%s: line: %w", name, err)
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
