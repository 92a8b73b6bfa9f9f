//go:build e2e

package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// docPath is the compatibility table generated from rows, relative to the
// repo root.
const docPath = "docs/compatibility/conformance.md"

// envUpdateDocs, when set, rewrites docPath instead of checking it.
const envUpdateDocs = "CONFORMANCE_UPDATE_DOCS"

// TestConformanceDoc checks that docPath is the table rows generate.
func TestConformanceDoc(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatalf("%v", err)
	}
	path := filepath.Join(root, docPath)
	want := renderDoc()
	if os.Getenv(envUpdateDocs) != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatalf("write %s: %v", docPath, err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", docPath, err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: regenerate it with %s=1 go test -tags e2e -run TestConformanceDoc ./test/conformance/", docPath, envUpdateDocs)
	}
}

// renderDoc renders the rows as a Markdown table.
func renderDoc() string {
	var b strings.Builder
	b.WriteString("## Differential conformance suite\n\n")
	b.WriteString("Generated from the rows of test/conformance (`go test -tags e2e ./test/conformance/...`); each row runs against\n")
	b.WriteString("kube-apiserver and apiserver-lite and compares status code, reason, cause types, media type, objects (identity,\n")
	b.WriteString("resourceVersion and content), list RV rules and watch event types, order, identities and RVs. Normalized on purpose:\n")
	b.WriteString("a list's own resourceVersion (kube-apiserver: etcd's global revision; apiserver-lite: the cloud RV it has caught up to;\n")
	b.WriteString("watch rows check a watch from each delivers the same changes), Status messages, and timing.\n")
	b.WriteString("A \"known difference\" row passes only while the stated aspect still differs.\n\n")
	b.WriteString("| behaviour | kube-apiserver | apiserver-lite | status |\n|---|---|---|---|\n")
	for _, r := range rows {
		edge, status := "same", "conforms"
		if r.knownDifference != "" {
			edge, status = "differs in "+string(r.differsIn)+": "+r.knownDifference, "known difference"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", escape(describe(r)), escape(cloudAnswer(r)), escape(edge), status)
	}
	return b.String()
}

// describe is the row's behaviour: its name and request.
func describe(r row) string {
	switch r.kind {
	case kubectlRow:
		return r.name
	case informerRow:
		return r.name + " (configmaps in one namespace)"
	}
	q := r.path
	if r.query != "" {
		q += "?" + r.query
	}
	if r.accept != "" {
		q += " Accept: " + r.accept
	}
	return r.name + ": `" + q + "`"
}

// cloudAnswer is what the row requires of kube-apiserver.
func cloudAnswer(r row) string {
	switch r.kind {
	case kubectlRow:
		return "kubectl output"
	case informerRow:
		return "informer syncs; consistency detector does not fire"
	}
	s := fmt.Sprint(r.wantCode)
	if r.wantReason != "" {
		s += " " + r.wantReason
	}
	if r.wantCause != "" {
		s += ", cause " + r.wantCause
	}
	if len(r.wantEvents) > 0 {
		s += ", events " + strings.Join(r.wantEvents, " ")
	}
	if r.untilEnd {
		s += ", stream ends"
	}
	return s
}

func escape(s string) string {
	return strings.ReplaceAll(s, "|", "\\|")
}
