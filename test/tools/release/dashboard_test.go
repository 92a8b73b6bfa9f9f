package release

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// grafanaVar matches a dashboard variable in a query: $name, ${name} or
// ${name:format}.
var grafanaVar = regexp.MustCompile(`\$\{?(\w+)(?::\w+)?\}?`)

// promQL turns a dashboard query into PromQL: interval variables become a
// duration, the others a regular expression that matches anything.
func promQL(q string) string {
	return grafanaVar.ReplaceAllStringFunc(q, func(v string) string {
		name := grafanaVar.FindStringSubmatch(v)[1]
		if strings.HasPrefix(name, "__") {
			return "5m"
		}
		return ".+"
	})
}

// labelValues matches a query variable's label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// wantPanels are the views the dashboard has, by row: the node's and the
// fleet's, as docs/operations.md describes them.
var wantPanels = map[string][]string{
	"Fleet": {"Nodes disconnected", "Stale resources", "Relist storms", "Failed authentications", "Store file system left"},
	"Node": {"Cloud link", "Cloud link history", "Freshness per resource", "Local watchers", "Local requests by door and code",
		"Held for pods", "Cache", "Store and its file system", "Memory", "Relists and their bytes", "State key"},
}

func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard: got uid %q title %q, want both", d.UID, d.Title)
	}
	p := parser.NewParser(parser.Options{})
	used := map[string][]string{}
	byRow := dashboardPanels(t, d.Panels, p, used)
	for row, titles := range wantPanels {
		for _, title := range titles {
			if !hasPanel(byRow[row], title) {
				t.Errorf("dashboard: row %q has no panel titled %q...", row, title)
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("variable %s: %v", v.Name, err)
			continue
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: got %q, want label_values(selector, label)", v.Name, q.Query)
			continue
		}
		if err := metricNames(p, promQL(m[1]), "variable "+v.Name, used); err != nil {
			t.Error(err)
		}
	}
	if missing := unregistered(used, registeredNames(t)); len(missing) > 0 {
		t.Errorf("the dashboard uses metrics the daemon does not register:\n%s", strings.Join(missing, "\n"))
	}
}

// hasPanel says whether a title of titles starts with prefix.
func hasPanel(titles map[string]bool, prefix string) bool {
	for t := range titles {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

// dashboardPanels checks every panel (unique id, a query that parses) and
// returns the panel titles by the row they sit under.
func dashboardPanels(t *testing.T, panels []panel, p parser.Parser, used map[string][]string) map[string]map[string]bool {
	t.Helper()
	byRow := map[string]map[string]bool{}
	ids := map[int]bool{}
	row := ""
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, pn := range ps {
			if ids[pn.ID] {
				t.Errorf("panel %q: id %d used twice", pn.Title, pn.ID)
			}
			ids[pn.ID] = true
			if pn.Type == "row" {
				row = pn.Title
				byRow[row] = map[string]bool{}
				walk(pn.Panels)
				continue
			}
			if row == "" {
				t.Errorf("panel %q: above every row", pn.Title)
				continue
			}
			byRow[row][pn.Title] = true
			if len(pn.Targets) == 0 {
				t.Errorf("panel %q: no query", pn.Title)
			}
			for i, tg := range pn.Targets {
				if err := metricNames(p, promQL(tg.Expr), "panel "+strconv.Quote(pn.Title)+" query "+strconv.Itoa(i), used); err != nil {
					t.Error(err)
				}
			}
		}
	}
	walk(panels)
	return byRow
}

// The checks can fail: a misspelt name, a selector without a name and a
// query that is not PromQL are caught; a histogram's series are not
// taken for unknown names.
func TestMetricCheckCatches(t *testing.T) {
	names := map[string]bool{"apiserver_request_duration_seconds": true, "apiserver_lite_cloud_link_up": true}
	used := map[string][]string{
		"apiserver_lite_cloud_link_upp":             {"typo"},
		"apiserver_request_duration_seconds_bucket": {"histogram"},
		"apiserver_lite_cloud_link_up":              {"fine"},
	}
	got := unregistered(used, names)
	if len(got) != 1 || !strings.HasPrefix(got[0], "apiserver_lite_cloud_link_upp ") {
		t.Errorf("unregistered: got %q, want only the misspelt name", got)
	}
	p := parser.NewParser(parser.Options{})
	for _, expr := range []string{`{job="x"}`, `sum(rate(x[5m]`, `vector(1)`} {
		if err := metricNames(p, expr, "check", map[string][]string{}); err == nil {
			t.Errorf("metricNames(%q): got no error, want one", expr)
		}
	}
	if got := promQL(`rate(x{instance=~"$instance",job=~"${job:regex}"}[$__rate_interval])`); got != `rate(x{instance=~".+",job=~".+"}[5m])` {
		t.Errorf("promQL: got %s", got)
	}
}
