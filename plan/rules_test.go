package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
)

// planOf binds and optimises q over the fuzz catalog.
func planOf(t *testing.T, q string) Node {
	t.Helper()
	n, err := bindText(fuzzCatalog(t), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// nodesOf lists the nodes of type T in the plan (each shared node once).
func nodesOf[T Node](n Node) []T {
	var out []T
	visitPlan(n, func(x Node) {
		if v, ok := x.(T); ok {
			out = append(out, v)
		}
	})
	return out
}

func TestCTEReferencedTwiceIsPlannedOnce(t *testing.T) {
	n := planOf(t, "WITH c AS (SELECT i64, s FROM t WHERE i32 > 0) SELECT a.s, b.s FROM c a JOIN c b ON a.i64 = b.i64")
	scans := nodesOf[*Scan](n)
	if len(scans) != 1 {
		t.Fatalf("%d scans of t, want the CTE's one shared by both sides:\n%s", len(scans), Format(n))
	}
	j := nodesOf[*Join](n)
	if len(j) != 1 || len(j[0].LeftKeys) != 1 {
		t.Fatalf("want one keyed join:\n%s", Format(n))
	}
	// The physical plan has one scan stage feeding both join inputs.
	p := physicalOf(t, n)
	var scanStages int
	for _, s := range p.Stages {
		if s.Op == "Scan" {
			scanStages++
		}
	}
	if scanStages != 1 {
		t.Fatalf("%d scan stages, want 1", scanStages)
	}
}

func TestDecorrelation(t *testing.T) {
	cases := []struct {
		q     string
		kinds []JoinKind // the joins the subquery becomes
		check func(t *testing.T, n Node)
	}{
		{q: "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM v WHERE v.k = t.id)", kinds: []JoinKind{JoinSemi}},
		{q: "SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM v WHERE v.k = t.id)", kinds: []JoinKind{JoinAnti}},
		{q: "SELECT id FROM t WHERE id IN (SELECT k FROM v)", kinds: []JoinKind{JoinSemi}},
		{q: "SELECT id FROM t WHERE id NOT IN (SELECT k FROM v)", kinds: []JoinKind{JoinAnti}, check: func(t *testing.T, n Node) {
			if j := nodesOf[*Join](n); !j[0].NullAware {
				t.Errorf("NOT IN must be null-aware:\n%s", Format(n))
			}
		}},
		{q: "SELECT id, id IN (SELECT k FROM v) FROM t", kinds: []JoinKind{JoinMark}},
		{q: "SELECT id, (SELECT max(d) FROM v) FROM t", kinds: []JoinKind{JoinSingle}},
		// Correlated by equality under an aggregate: the aggregate groups by
		// the correlated column, no domain.
		{q: "SELECT id, (SELECT count(*) FROM v WHERE v.k = t.id) FROM t", kinds: []JoinKind{JoinSingle}, check: func(t *testing.T, n Node) {
			aggs := nodesOf[*Aggregate](n)
			if len(aggs) != 1 || len(aggs[0].GroupCols) != 1 {
				t.Errorf("want the count grouped by v.k:\n%s", Format(n))
			}
			if !strings.Contains(Format(n), "__matched") {
				t.Errorf("COUNT over no rows is 0: want the empty-group flag:\n%s", Format(n))
			}
		}},
		// Correlated by an inequality: evaluated per distinct outer value
		// (the domain, joined back null-safely).
		{q: "SELECT id, (SELECT count(*) FROM v WHERE v.k < t.id) FROM t", kinds: []JoinKind{JoinInner, JoinSingle}, check: func(t *testing.T, n Node) {
			var nullSafe bool
			for _, j := range nodesOf[*Join](n) {
				for _, s := range j.NullSafe {
					nullSafe = nullSafe || s
				}
			}
			if !nullSafe {
				t.Errorf("want the domain joined back with IS NOT DISTINCT FROM:\n%s", Format(n))
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			n := planOf(t, c.q)
			var kinds []JoinKind
			for _, j := range nodesOf[*Join](n) {
				kinds = append(kinds, j.Kind)
			}
			if len(kinds) != len(c.kinds) {
				t.Fatalf("joins %v, want %v:\n%s", kinds, c.kinds, Format(n))
			}
			for _, k := range c.kinds {
				found := false
				for _, g := range kinds {
					found = found || g == k
				}
				if !found {
					t.Fatalf("joins %v, want %v:\n%s", kinds, c.kinds, Format(n))
				}
			}
			if c.check != nil {
				c.check(t, n)
			}
		})
	}
}

func TestPushdownAndJoinKeys(t *testing.T) {
	// A comma list's WHERE equality becomes the join's key, one-side
	// conjuncts go below the join, and the scans read only what is used.
	n := planOf(t, "SELECT a.s FROM t a, t b WHERE a.i64 = b.i32 + 1 AND a.i8 > 3 AND b.s = 'x'")
	joins := nodesOf[*Join](n)
	if len(joins) != 1 || len(joins[0].LeftKeys) != 1 || joins[0].Residual != nil {
		t.Fatalf("want one join on one computed key, no residual:\n%s", Format(n))
	}
	for _, f := range nodesOf[*Filter](n) {
		if _, ok := f.Input.(*Scan); !ok {
			t.Errorf("filter %s is not on a scan:\n%s", f.Pred, Format(n))
		}
	}
	for _, s := range nodesOf[*Scan](n) {
		if len(s.Columns) > 3 { // a: i8, i64, s; b: i32, s
			t.Errorf("scan reads %d columns, want at most 3:\n%s", len(s.Columns), Format(n))
		}
	}
}

func TestOrderJoinsAvoidsCrossProducts(t *testing.T) {
	// a and c only meet through b: written a, c, b, they must not be
	// joined first.
	n := planOf(t, "SELECT a.s FROM t a, t c, b WHERE a.i64 = b.auction AND c.i64 = b.bidder")
	for _, j := range nodesOf[*Join](n) {
		if len(j.LeftKeys) == 0 {
			t.Fatalf("a cross product:\n%s", Format(n))
		}
	}
}

func TestFoldAndFactor(t *testing.T) {
	n := planOf(t, "SELECT id FROM t WHERE i32 > 1 + 2 AND ((id = 1 AND s = 'a') OR (id = 1 AND s = 'b'))")
	text := Format(n)
	if !strings.Contains(text, "(i32 > 3)") {
		t.Errorf("1 + 2 not folded:\n%s", text)
	}
	f := nodesOf[*Filter](n)
	if len(f) != 1 || strings.Count(f[0].Pred.String(), "id = 1") != 1 {
		t.Errorf("the common id = 1 not factored out of the OR:\n%s", text)
	}
}

func physicalOf(t *testing.T, n Node) *Physical {
	t.Helper()
	sink := ops.NewCollect(func(context.Context, *exec.Batch) error { return nil })
	p, err := Build(n, sink, BuildOptions{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSemiJoinsMoveBelowInnerJoins(t *testing.T) {
	// Each IN / NOT IN / EXISTS reads one input of the comma join only, so
	// each ends up on that input, under the inner join, with its condition
	// remapped to that input's columns (check-invariants verifies the
	// schemas; the .slt suites and TPC-H verify the answers).
	n := planOf(t, `SELECT a.s, b.price FROM t a, b
		WHERE a.i64 = b.auction
		  AND b.bidder IN (SELECT i64 FROM t WHERE i8 > 3)
		  AND a.i32 NOT IN (SELECT i32 FROM t)
		  AND EXISTS (SELECT 1 FROM t x WHERE x.i16 = a.i16)`)
	var semis int
	for _, j := range nodesOf[*Join](n) {
		if j.Kind != JoinSemi && j.Kind != JoinAnti {
			continue
		}
		semis++
		if in, ok := j.Left.(*Join); ok && in.Kind == JoinInner {
			t.Errorf("%s join on %s is still above an inner join:\n%s", map[JoinKind]string{JoinSemi: "SEMI", JoinAnti: "ANTI"}[j.Kind], j.Cond, Format(n))
		}
	}
	if semis != 3 {
		t.Fatalf("want 3 semi/anti joins, got %d:\n%s", semis, Format(n))
	}
	var inner *Join
	for _, j := range nodesOf[*Join](n) {
		if j.Kind == JoinInner {
			inner = j
		}
	}
	if inner == nil {
		t.Fatalf("no inner join:\n%s", Format(n))
	}
	// Under the inner join: both of its inputs carry semi or anti joins.
	for _, side := range []Node{inner.Left, inner.Right} {
		found := false
		visitPlan(side, func(x Node) {
			if j, ok := x.(*Join); ok && (j.Kind == JoinSemi || j.Kind == JoinAnti) {
				found = true
			}
		})
		if !found {
			t.Errorf("an input of the inner join has no semi/anti join under it:\n%s", Format(n))
		}
	}
}

func TestAggregatesReducedByJoinKeys(t *testing.T) {
	// Q17's shape: the correlated AVG becomes a GROUP BY auction over all
	// of b joined to the outer rows; the outer side's filtered scan of t
	// holds the only keys that can meet it, so the aggregate's input is
	// semi-joined with them first.
	n := planOf(t, `SELECT sum(b.price) FROM b, t
		WHERE t.i64 = b.auction AND t.s = 'x'
		  AND b.price < (SELECT avg(price) FROM b b2 WHERE b2.auction = t.i64)`)
	var reduced []*Aggregate
	for _, a := range nodesOf[*Aggregate](n) {
		if j, ok := a.Input.(*Join); ok && j.Kind == JoinSemi {
			reduced = append(reduced, a)
			if !filteredScan(j.Right) {
				t.Errorf("the key set is not a filtered scan:\n%s", Format(j.Right))
			}
		}
	}
	if len(reduced) != 1 {
		t.Fatalf("want the subquery's aggregate reduced by a SEMI join, got %d:\n%s", len(reduced), Format(n))
	}

	// Q20's shape: the outer side is b cut by an IN over a filtered t, so
	// the keys come from t through the IN's equality, for the one key
	// column it equates (auction; bidder is dropped, which only reduces
	// less).
	n = planOf(t, `SELECT b.price FROM b
		WHERE b.auction IN (SELECT i64 FROM t WHERE s = 'x')
		  AND b.price > (SELECT sum(price) FROM b b2 WHERE b2.auction = b.auction AND b2.bidder = b.bidder)`)
	reduced = reduced[:0]
	for _, a := range nodesOf[*Aggregate](n) {
		if j, ok := a.Input.(*Join); ok && j.Kind == JoinSemi && len(a.GroupCols) == 2 {
			reduced = append(reduced, a)
			if !filteredScan(j.Right) || j.Right.Schema().NumFields() != 1 {
				t.Errorf("the key set is not one column of a filtered scan:\n%s", Format(j.Right))
			}
		}
	}
	if len(reduced) != 1 {
		t.Fatalf("want the two-key aggregate reduced through the IN's equality, got %d:\n%s", len(reduced), Format(n))
	}

	// Without a filter on the outer side every key may meet a group: the
	// extra join would cost without cutting anything.
	n = planOf(t, `SELECT t.s FROM t WHERE t.i64 > (SELECT avg(price) FROM b WHERE b.auction = t.i64)`)
	for _, a := range nodesOf[*Aggregate](n) {
		if j, ok := a.Input.(*Join); ok && j.Kind == JoinSemi {
			t.Errorf("an aggregate was reduced by an unfiltered side:\n%s", Format(n))
		}
	}
}
