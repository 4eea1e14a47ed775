package statuspage_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dashboardFile is the Grafana dashboard, relative to this package.
const dashboardFile = "../../docs/grafana/strata.json"

// dashboardExprs returns every query of the dashboard's panels.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	if len(out) < 20 {
		t.Fatalf("%s: %d queries", dashboardFile, len(out))
	}
	return out
}

// checkDashboard checks that every query of the dashboard is PromQL
// (promtool check rules parses each as a recording rule) and names only
// families the processes serve: those of scrapes.
func checkDashboard(t *testing.T, scrapes ...scrape) {
	t.Helper()
	exprs := dashboardExprs(t)
	served := map[string]bool{}
	for _, s := range scrapes {
		for name, f := range s {
			served[name] = true
			if f.GetType().String() == "HISTOGRAM" {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					served[name+suffix] = true
				}
			}
		}
	}
	var rules strings.Builder
	rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
	for i, e := range exprs {
		for _, name := range metricNames(e) {
			if !served[name] {
				t.Errorf("the dashboard's query %q names %s, which no process serves", e, name)
			}
		}
		q, _ := json.Marshal(strings.ReplaceAll(e, "$__rate_interval", "1m"))
		fmt.Fprintf(&rules, "  - record: dashboard:q%d\n    expr: %s\n", i, q)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool(t), "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("the dashboard's queries are not all PromQL: %v\n%s", err, out)
	}
}

var (
	// labelMatchers are a selector's {...}, strings, and durations [...].
	labelMatchers = regexp.MustCompile(`\{[^}]*\}|"[^"]*"|\[[^\]]*\]`)
	// grouping is by (...) and the like: label names.
	grouping   = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// keywords are PromQL's words that are not metrics.
	keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL query selects: its
// identifiers that are neither functions (followed by "("), aggregations,
// label names of a grouping, nor keywords.
func metricNames(expr string) []string {
	e := labelMatchers.ReplaceAllString(expr, " ")
	e = grouping.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range identifier.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		rest := strings.TrimLeft(e[loc[1]:], " ")
		if keywords[strings.ToLower(name)] || strings.HasPrefix(rest, "(") || isNumber(e, loc[0]) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// isNumber says whether the identifier at i is part of a number (1e3).
func isNumber(e string, i int) bool {
	return i > 0 && (e[i-1] >= '0' && e[i-1] <= '9' || e[i-1] == '.')
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string]string{
		`sum by (method) (rate(strata_rpc_server_handled_total{service="x"}[$__rate_interval]))`: "strata_rpc_server_handled_total",
		`histogram_quantile(0.99, sum by (le, op) (rate(a_bucket[5m])))`:                         "a_bucket",
		`sum(rate(a_total[1m])) / (sum(rate(a_total[1m])) + sum(rate(b_total[1m])))`:             "a_total a_total b_total",
		`max(strata_raft_term)`: "strata_raft_term",
		`go_goroutines`:         "go_goroutines",
	} {
		if got := strings.Join(metricNames(expr), " "); got != want {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}
