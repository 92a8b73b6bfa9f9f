package release

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
)

// The monitoring files and the runbooks, relative to this module.
const (
	rulesPath     = "../../../monitoring/alerts.yaml"
	dashboardPath = "../../../monitoring/dashboard.json"
	operationsDoc = "../../../docs/operations.md"
	// runbookBase is where every alert's runbook_url points, before the
	// anchor of its section in docs/operations.md.
	runbookBase = "https://github.com/apiserver-lite/apiserver-lite/blob/main/docs/operations.md#"
)

// seriesSuffixes are what a histogram or summary adds to its name in the
// series it exposes.
var seriesSuffixes = []string{"_bucket", "_sum", "_count"}

// registeredNames is every metric name the daemon registers, read from
// Describe: a label vector never observed has no sample in /metrics, but
// is described. The holdings' collectors are registered as the daemon
// registers them when it holds resources for pods.
func registeredNames(t *testing.T) map[string]bool {
	t.Helper()
	v := operations.New(operations.Config{})
	v.ObserveHoldings(forpods.New(forpods.Config{}))
	v.ObserveNamespaced(forpods.NewNamespaced(forpods.NamespacedConfig{}))
	ch := make(chan *prometheus.Desc)
	go func() { v.Metrics().Describe(ch); close(ch) }()
	names := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names[m[1]] = true
	}
	if len(names) < 20 {
		t.Fatalf("got %d registered names, want the daemon's (at least 20)", len(names))
	}
	return names
}

// unregistered returns the names of used that no registered metric
// exposes.
func unregistered(used map[string][]string, names map[string]bool) []string {
	var out []string
	for n, where := range used {
		if names[n] {
			continue
		}
		base := n
		for _, s := range seriesSuffixes {
			base = strings.TrimSuffix(base, s)
		}
		if base != n && names[base] {
			continue
		}
		out = append(out, n+" (in "+strings.Join(where, ", ")+")")
	}
	sort.Strings(out)
	return out
}

// metricNames adds the metric name of every selector in expr to used,
// noting where; an expression that does not parse, or a selector without
// a literal name, is an error.
func metricNames(p parser.Parser, expr, where string, used map[string][]string) error {
	e, err := p.ParseExpr(expr)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", where, err, expr)
	}
	sels := parser.ExtractSelectors(e)
	if len(sels) == 0 {
		return fmt.Errorf("%s: no metric in %q", where, expr)
	}
	for _, ms := range sels {
		name := ""
		for _, m := range ms {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			return fmt.Errorf("%s: a selector without a metric name in %q", where, expr)
		}
		used[name] = append(used[name], where)
	}
	return nil
}

func TestAlertRules(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.ParseFile(rulesPath, false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Errorf("rules: %v", err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	doc, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(doc))
	used := map[string][]string{}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a recording rule %q; this file holds alerts only", g.Name, r.Record)
				continue
			}
			alerts = append(alerts, r.Alert)
			if err := metricNames(p, r.Expr, r.Alert, used); err != nil {
				t.Error(err)
			}
			checkAlert(t, r, anchors)
		}
	}
	want := []string{"ApiserverLiteCloudLinkDown", "ApiserverLiteResourceStale", "ApiserverLiteStoreDiskNearFull",
		"ApiserverLiteRelistStorm", "ApiserverLiteAuthenticationFailures", "ApiserverLiteEncryptionKeyMissing"}
	for _, a := range want {
		if !slices.Contains(alerts, a) {
			t.Errorf("alerts: got %v, want %s among them", alerts, a)
		}
	}
	if missing := unregistered(used, registeredNames(t)); len(missing) > 0 {
		t.Errorf("the rules use metrics the daemon does not register:\n%s", strings.Join(missing, "\n"))
	}
}

// checkAlert wants a severity, a summary and a runbook_url pointing at
// the alert's own section of docs/operations.md.
func checkAlert(t *testing.T, r rulefmt.Rule, anchors map[string]bool) {
	t.Helper()
	if s := r.Labels["severity"]; s != "warning" && s != "critical" {
		t.Errorf("%s: got severity %q, want warning or critical", r.Alert, s)
	}
	if r.Annotations["summary"] == "" {
		t.Errorf("%s: no summary", r.Alert)
	}
	anchor := strings.ToLower(r.Alert)
	if got, want := r.Annotations["runbook_url"], runbookBase+anchor; got != want {
		t.Errorf("%s: got runbook_url %q, want %q", r.Alert, got, want)
	}
	if !anchors[anchor] {
		t.Errorf("%s: docs/operations.md has no section %q (its runbook)", r.Alert, r.Alert)
	}
}

// headingAnchors are the GitHub anchors of doc's headings: lowercase,
// punctuation dropped, spaces as hyphens.
func headingAnchors(doc string) map[string]bool {
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		a := drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), "")
		out[strings.ReplaceAll(a, " ", "-")] = true
	}
	return out
}
