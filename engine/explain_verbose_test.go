package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clink-sql/clink/explain"
	"github.com/clink-sql/clink/plan"
)

// TestExplainVerboseListsRulesAndPasses: EXPLAIN VERBOSE shows the plan
// as bound, then after each rule that changed it, in the rule list's order,
// then every physical pass in order with its decisions; FORMAT JSON carries
// the same steps.
func TestExplainVerboseListsRulesAndPasses(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	q := "SELECT grp, count(*) FROM '../testdata/parquet/duckdb_scan.parquet' WHERE id > 3 GROUP BY 1"
	text := strings.Join(explainLines(t, s, "EXPLAIN VERBOSE "+q), "\n")

	// Rule headers appear in the list's order, "bound" first; this query's
	// filter is pushed into the scan and its columns pruned, so those two
	// rules changed the plan and must be listed.
	pos := strings.Index(text, "-- bound\n")
	if pos < 0 {
		t.Fatalf("no bound plan in:\n%s", text)
	}
	seen := map[string]bool{}
	last := pos
	for _, r := range plan.Rules {
		i := strings.Index(text, "-- "+r.Name+"\n")
		if i < 0 {
			continue
		}
		if i < last {
			t.Errorf("rule %s printed out of order", r.Name)
		}
		last, seen[r.Name] = i, true
	}
	for _, want := range []string{"push-down-filters", "prune-columns"} {
		if !seen[want] {
			t.Errorf("rule %s changed the plan but is not listed:\n%s", want, text)
		}
	}

	// Physical passes: each listed once, in order, after the rules.
	passAt := strings.Index(text, "Physical passes, in order:")
	if passAt < last {
		t.Fatalf("physical passes missing or before the rules:\n%s", text)
	}
	prev := passAt
	for _, p := range plan.PhysicalPasses {
		i := strings.Index(text, "-- "+p.Name+": ")
		if i < prev {
			t.Fatalf("pass %s missing or out of order:\n%s", p.Name, text)
		}
		prev = i
	}
	if !strings.Contains(text, "Scan: codes for grp") {
		t.Errorf("dictionary-codes does not name the scan's code column:\n%s", text)
	}
	if !strings.Contains(text, "HashAggregate: born-columnar") {
		t.Errorf("gate-columnar-output does not list the aggregate's decision:\n%s", text)
	}

	// Without VERBOSE neither list is printed.
	plain := strings.Join(explainLines(t, s, "EXPLAIN "+q), "\n")
	if strings.Contains(plain, "Physical passes") || strings.Contains(plain, "-- bound") {
		t.Errorf("plain EXPLAIN prints the verbose steps:\n%s", plain)
	}

	o, err := s.Execute(context.Background(), "EXPLAIN (FORMAT JSON, VERBOSE) "+q, nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc explain.Document
	if err := json.Unmarshal([]byte(o.Text), &doc); err != nil {
		t.Fatalf("%v\n%s", err, o.Text)
	}
	if len(doc.Rules) < 3 || doc.Rules[0].Rule != "bound" || len(doc.Passes) != len(plan.PhysicalPasses) {
		t.Errorf("JSON has %d rule steps (first %+v) and %d passes", len(doc.Rules), doc.Rules, len(doc.Passes))
	}
}
