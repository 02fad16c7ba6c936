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
