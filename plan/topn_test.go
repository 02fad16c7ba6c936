package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clink-sql/clink/connectors"
)

// topNCatalog has b (bounded nexmark bids) and u (unbounded).
func topNCatalog(t *testing.T) *Catalog {
	cat := testCatalog(t)
	f, _ := connectors.Lookup("nexmark")
	tbl, err := f(map[string]string{"table": "bid"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(&Entry{Name: "u", Table: tbl, Connector: "nexmark"}, false); err != nil {
		t.Fatal(err)
	}
	return cat
}

func stageOps(p *Physical) string {
	var names []string
	for _, s := range p.Stages {
		names = append(names, s.Op)
	}
	return strings.Join(names, " ")
}

// ORDER BY ... LIMIT over an unbounded input is an updating top-n: one
// global instance, a changelog whose row kind comes first, no LIMIT stage
// after it; over a finite input (bounded, or cut short by a LIMIT) it stays
// the sort that answers at the end.
func TestUpdatingTopNPlan(t *testing.T) {
	cat := topNCatalog(t)
	for _, tc := range []struct {
		q, cols, detail string
	}{
		{"SELECT auction, price FROM u ORDER BY price DESC LIMIT 3", "op, auction, price", "price DESC LIMIT 3"},
		{"SELECT auction FROM u WHERE price > 10 ORDER BY price, auction LIMIT 3 OFFSET 2", "op, auction", "LIMIT 3 OFFSET 2"},
		{"SELECT price FROM (SELECT auction, price FROM u ORDER BY price DESC LIMIT 3) t LIMIT 10", "op, price", "price DESC LIMIT 3"},
		// Over an updating result: the top-n holds every current row.
		{"SELECT channel, COUNT(*) AS n FROM u GROUP BY channel ORDER BY n DESC LIMIT 3", "op, channel, n", "n DESC LIMIT 3; over an updating result: holds every current row"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			p := planQuery(t, cat, tc.q, BuildOptions{Parallelism: 2})
			top := stageByOp(p, "UpdatingTopN")
			if top == nil {
				t.Fatalf("no UpdatingTopN in %s", stageOps(p))
			}
			if top.Parallelism != 1 || top.Gate == nil || top.Gate.Columnar || top.Gate.Reason != ReasonChangelogOutput {
				t.Fatalf("top-n stage: parallelism %d gate %+v", top.Parallelism, top.Gate)
			}
			if !strings.Contains(top.Detail, tc.detail) {
				t.Errorf("detail %q, want %q in it", top.Detail, tc.detail)
			}
			if s := stageByOp(p, "TopN"); s != nil {
				t.Errorf("a bounded TopN too: %s", stageOps(p))
			}
			var cols []string
			for _, f := range p.Schema.Fields() {
				cols = append(cols, f.Name)
			}
			if got := strings.Join(cols, ", "); got != tc.cols {
				t.Errorf("result columns %q, want %q", got, tc.cols)
			}
			if limits := strings.Count(stageOps(p), "Limit"); limits != strings.Count(tc.q, "LIMIT")-1 {
				t.Errorf("%d Limit stages: %s", limits, stageOps(p))
			}
		})
	}
	for _, q := range []string{
		"SELECT auction, price FROM b ORDER BY price DESC LIMIT 3",
		"SELECT * FROM (SELECT auction, price FROM u LIMIT 100) t ORDER BY price LIMIT 3",
	} {
		p := planQuery(t, cat, q, BuildOptions{})
		if stageByOp(p, "UpdatingTopN") != nil || stageByOp(p, "TopN") == nil || p.Schema.Field(0).Name == "op" {
			t.Errorf("%s: finite input, want the bounded top-n: %s", q, stageOps(p))
		}
	}
}

// Sorting what never ends, or a changelog, is a clear error.
func TestUpdatingTopNErrors(t *testing.T) {
	cat := topNCatalog(t)
	for q, want := range map[string]string{
		"SELECT auction, price FROM u ORDER BY price DESC":                             "ORDER BY over an unbounded input needs a LIMIT",
		"SELECT channel, COUNT(*) AS n FROM u GROUP BY channel ORDER BY n DESC":        "needs a LIMIT",
		"SELECT COUNT(*) FROM (SELECT auction, price FROM u ORDER BY price LIMIT 3) t": "over an updating result",
	} {
		_, err := bindText(cat, q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", q, err, want)
		}
	}
}

// A top-n's rank order is given by the result's columns (op is column 0)
// when every ORDER BY column is shown, and not at all otherwise.
func TestResultOrder(t *testing.T) {
	cat := topNCatalog(t)
	for q, want := range map[string]string{
		"SELECT auction, price FROM u ORDER BY price DESC LIMIT 3":          "[{2 true true}]",
		"SELECT price, auction FROM u ORDER BY auction, price DESC LIMIT 3": "[{2 false false} {1 true true}]",
		"SELECT auction FROM u ORDER BY price DESC LIMIT 3":                 "[]",
		"SELECT auction, price FROM u":                                      "[]",
		// ORDER BY an expression that is a select item ranks by that item.
		"SELECT channel, COUNT(*) FROM u GROUP BY channel ORDER BY COUNT(*) DESC LIMIT 3": "[{2 true true}]",
		"SELECT u.auction, price FROM u ORDER BY u.price DESC LIMIT 3":                    "[{2 true true}]",
		// Over an updating result: by the result's n, then channel.
		"SELECT channel, COUNT(*) AS n FROM u GROUP BY channel ORDER BY n DESC, channel LIMIT 3": "[{2 true true} {1 false false}]",
	} {
		p := planQuery(t, cat, q, BuildOptions{})
		if got := fmt.Sprint(p.Order); got != want {
			t.Errorf("%s: order %s, want %s", q, got, want)
		}
	}
}
