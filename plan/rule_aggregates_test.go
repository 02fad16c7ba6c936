package plan

import (
	"strings"
	"testing"
)

// SUM(x + k) over a narrow integer becomes SUM(x) and COUNT(x) under one
// projection, merged across every shift; a BIGINT x (whose SUM could
// overflow where the shifted one does not), a DOUBLE, a DISTINCT sum and
// a non-constant shift stay as written.
func TestFoldSumOfShifts(t *testing.T) {
	var sums []string
	for k := 0; k < 90; k++ {
		sums = append(sums, "SUM(i32 + "+string(rune('0'+k%10))+")")
	}
	n := planOf(t, "SELECT SUM(i32), "+strings.Join(sums, ", ")+", SUM(i32 - 3), SUM(2 + i32) FROM t")
	aggs := nodesOf[*Aggregate](n)
	if len(aggs) != 1 || len(aggs[0].Aggs) != 2 {
		t.Fatalf("want one aggregate of SUM and COUNT:\n%s", Format(n))
	}
	if f := aggs[0].Aggs; f[0].Func != "sum" || f[1].Func != "count" || f[0].Col != f[1].Col {
		t.Fatalf("aggregates %v, want sum and count of one column:\n%s", f, Format(n))
	}
	if got := n.Schema().NumFields(); got != 93 {
		t.Fatalf("%d output columns, want 93", got)
	}
	for _, q := range []string{
		"SELECT SUM(i64 + 1) FROM t",
		"SELECT SUM(f64 + 1) FROM t",
		"SELECT SUM(DISTINCT i32 + 1) FROM t",
		"SELECT SUM(i32 + i32) FROM t",
		"SELECT SUM(1 - i32) FROM t",
	} {
		n := planOf(t, q)
		for _, a := range nodesOf[*Aggregate](n) {
			for _, s := range a.Aggs {
				if s.Func == "count" {
					t.Errorf("%s: folded into a COUNT:\n%s", q, Format(n))
				}
			}
		}
	}
}

// At parallelism two AVG splits into SUM and COUNT, and a SUM equal to one
// the query has already (TPC-H Q1's SUM(l_quantity) beside its
// AVG(l_quantity)) is computed once, reading one copy of the column. AVG
// of BIGINT sums as DECIMAL(38, 0), which cannot overflow where AVG's own
// 128-bit sum does not.
func TestAvgSplitMergesEqualSums(t *testing.T) {
	n, err := bindTextWith(fuzzCatalog(t), "SELECT SUM(i64), AVG(i64), AVG(i32), SUM(i32), COUNT(i32) FROM t", RuleOptions{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	aggs := nodesOf[*Aggregate](n)
	if len(aggs) != 1 {
		t.Fatalf("want one aggregate:\n%s", Format(n))
	}
	// SUM(i64), SUM as DECIMAL and COUNT of i64; SUM and COUNT of i32.
	if got := len(aggs[0].Aggs); got != 5 {
		t.Fatalf("%d aggregates %v, want 5:\n%s", got, aggs[0].Aggs, Format(n))
	}
	cols := map[int]bool{}
	decimals := 0
	for _, s := range aggs[0].Aggs {
		cols[s.Col] = true
		if s.Func == "sum" && s.Type.String() == "decimal(38, 0)" {
			decimals++
		}
	}
	if len(cols) != 2 || decimals != 1 {
		t.Fatalf("aggregates %v read %d columns with %d DECIMAL(38, 0) sums, want 2 and 1:\n%s", aggs[0].Aggs, len(cols), decimals, Format(n))
	}
	if got := n.Schema().NumFields(); got != 5 {
		t.Fatalf("%d output columns, want 5", got)
	}
}
