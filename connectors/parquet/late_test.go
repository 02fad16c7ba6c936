package parquet

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// Late materialisation against the plain scan: for files written by
// arrow-go and DuckDB (nulls, dictionary pages that fall back to plain,
// several row groups and many small pages, both data page versions), a
// scan given a predicate must emit every row the plain scan emits that
// passes it, in the same order; it may emit failing rows too (the Filter
// above drops them). Each case also checks that the evaluation happened
// and, for a selective predicate, that the other columns were decoded for
// fewer rows than the predicate's.

// predBuilder builds a predicate's conjuncts over a scan's output schema.
type predBuilder func(t *testing.T, s *arrow.Schema) []connectors.Conjunct

// col is output column name of s as an expression.
func col(t *testing.T, s *arrow.Schema, name string) *expr.ColRef {
	t.Helper()
	i := s.FieldIndices(name)
	if len(i) != 1 {
		t.Fatalf("no column %s in %s", name, s)
	}
	return expr.Col(i[0], s.Field(i[0]).Type, name)
}

// conj makes a conjunct of e, finding the columns it reads among refs.
func conj(t *testing.T, e expr.Expr, err error, refs ...*expr.ColRef) connectors.Conjunct {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var cols []int
	for _, r := range refs {
		cols = append(cols, r.Index)
	}
	return connectors.Conjunct{Expr: e, Columns: cols}
}

func cmp(op string, c *expr.ColRef, v any) predBuilder {
	return func(t *testing.T, s *arrow.Schema) []connectors.Conjunct {
		c := col(t, s, c.Name)
		e, err := expr.NewBinary(op, c, expr.Lit(v, c.T))
		return []connectors.Conjunct{conj(t, e, err, c)}
	}
}

func like(name, pattern string) predBuilder {
	return func(t *testing.T, s *arrow.Schema) []connectors.Conjunct {
		c := col(t, s, name)
		e, err := expr.NewLike(c, expr.Lit(pattern, arrow.BinaryTypes.String), false)
		return []connectors.Conjunct{conj(t, e, err, c)}
	}
}

func isNull(name string, negate bool) predBuilder {
	return func(t *testing.T, s *arrow.Schema) []connectors.Conjunct {
		c := col(t, s, name)
		return []connectors.Conjunct{conj(t, expr.NewIsNull(c, negate), nil, c)}
	}
}

// modEq is name % m = r.
func modEq(name string, m, r int64) predBuilder { return modCmp(name, m, "=", r) }

// modLt is name % m < r: runs of r rows every m.
func modLt(name string, m, r int64) predBuilder { return modCmp(name, m, "<", r) }

// modCmp is name % m op r.
func modCmp(name string, m int64, op string, r int64) predBuilder {
	return func(t *testing.T, s *arrow.Schema) []connectors.Conjunct {
		c := col(t, s, name)
		mod, err := expr.NewBinary("%", c, expr.Lit(m, arrow.PrimitiveTypes.Int64))
		if err != nil {
			t.Fatal(err)
		}
		e, err := expr.NewBinary(op, mod, expr.Lit(r, arrow.PrimitiveTypes.Int64))
		return []connectors.Conjunct{conj(t, e, err, c)}
	}
}

func and(ps ...predBuilder) predBuilder {
	return func(t *testing.T, s *arrow.Schema) []connectors.Conjunct {
		var out []connectors.Conjunct
		for _, p := range ps {
			out = append(out, p(t, s)...)
		}
		return out
	}
}

// passes reports whether row passes every conjunct (the Filter's row path).
func passes(t *testing.T, conj []connectors.Conjunct, row exec.Row) bool {
	t.Helper()
	for _, c := range conj {
		v, err := c.Expr.EvalRow(row)
		if err != nil {
			t.Fatalf("%s on %v: %v", c.Expr, row, err)
		}
		if v != true {
			return false
		}
	}
	return true
}

func passing(t *testing.T, conj []connectors.Conjunct, rows []exec.Row) []exec.Row {
	var out []exec.Row
	for _, r := range rows {
		if passes(t, conj, r) {
			out = append(out, r)
		}
	}
	return out
}

type lateRun struct {
	cols     []int // nil: all
	bs       int
	dictCols []int
	parts    int // > 1: a split scan sharing one queue
}

// scanParts runs a scan of path with spec (Split fields set per part) and
// returns every row, parts concatenated in part order, and the counters.
func scanParts(t *testing.T, path string, spec connectors.ScanSpec, run lateRun) ([]exec.Row, connectors.ScanCounts) {
	t.Helper()
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl := openWith(t, path, mem)
	parts := max(1, run.parts)
	share := &connectors.Share{}
	srcs := make([]*Source, parts)
	for i := range srcs {
		sp := spec
		sp.Columns, sp.BatchSize = run.cols, run.bs
		if parts > 1 {
			sp.Split, sp.Splits, sp.Share = i, parts, share
		}
		src, err := tbl.NewSource(sp)
		if err != nil {
			t.Fatal(err)
		}
		if run.dictCols != nil {
			src.SetDictionaryColumns(run.dictCols)
		}
		srcs[i] = src
	}
	rows := make([][]exec.Row, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range srcs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := &collector{}
			errs[i] = srcs[i].Run(context.Background(), c)
			rows[i] = c.rows()
			c.release()
		}(i)
	}
	wg.Wait()
	var all []exec.Row
	var counts connectors.ScanCounts
	for i := range srcs {
		if errs[i] != nil {
			t.Fatalf("part %d: %v", i, errs[i])
		}
		all = append(all, rows[i]...)
		c := srcs[i].ScanCounts()
		counts.RowGroupsByDictionary += c.RowGroupsByDictionary
		counts.RowGroupsByPages += c.RowGroupsByPages
		counts.RowsByPages += c.RowsByPages
		counts.PagesRead += c.PagesRead
		counts.PageBytes += c.PageBytes
		counts.PagesJumped += c.PagesJumped
		counts.RowsEvaluated += c.RowsEvaluated
		counts.RowsPassed += c.RowsPassed
		counts.RowsDecoded += c.RowsDecoded
		counts.BatchesUnevaluated += c.BatchesUnevaluated
	}
	return all, counts
}

// checkLate compares a scan of path given pred with the plain scan
// filtered row by row, and returns the late scan's counters.
func checkLate(t *testing.T, path string, pred predBuilder, run lateRun) connectors.ScanCounts {
	t.Helper()
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	schema := tbl.Schema()
	if run.cols != nil {
		var fs []arrow.Field
		for _, c := range run.cols {
			fs = append(fs, schema.Field(c))
		}
		schema = arrow.NewSchema(fs, nil)
	}
	conj := pred(t, schema)
	plain, _ := scanParts(t, path, connectors.ScanSpec{RowGroupsOnly: true, Predicate: conj}, lateRun{cols: run.cols, bs: run.bs, dictCols: run.dictCols})
	want := passing(t, conj, plain)
	got, counts := scanParts(t, path, connectors.ScanSpec{Predicate: conj}, run)
	kept := passing(t, conj, got)
	if run.parts > 1 {
		sortByText(kept)
		sortByText(want)
	}
	sameRows(t, "late scan, filtered", kept, want)
	if len(got) > len(plain) {
		t.Fatalf("late scan emitted %d rows, the plain scan %d", len(got), len(plain))
	}
	if counts.RowsEvaluated == 0 && len(plain) > 0 && counts.BatchesUnevaluated == 0 && counts.RowGroupsByDictionary == 0 {
		t.Fatalf("the predicate was never evaluated: %+v", counts)
	}
	if counts.RowsPassed > counts.RowsEvaluated || counts.RowsDecoded > counts.RowsEvaluated {
		t.Fatalf("counters do not add up: %+v", counts)
	}
	return counts
}

func TestLateMaterialization(t *testing.T) {
	t.Setenv("CLINK_PARQUET_RECYCLE", "poison")
	arrowFile := fixtures + "arrow_types.parquet"
	duckFile := fixtures + "duckdb_types.parquet"
	dir := t.TempDir()
	dictV1 := filepath.Join(dir, "dict1.parquet")
	writeDictFixture(t, dictV1, true, pq.DataPageV1)
	dictV2 := filepath.Join(dir, "dict2.parquet")
	writeDictFixture(t, dictV2, true, pq.DataPageV2)
	typed := filepath.Join(dir, "typed.parquet")
	writeTyped(t, typed, 3000, 1000, pq.DataPageV1, false)
	typed96 := filepath.Join(dir, "typed96.parquet")
	writeTyped(t, typed96, 3000, 1000, pq.DataPageV2, true)

	req := expr.Col(0, arrow.PrimitiveTypes.Int64, "req")
	i32 := expr.Col(0, arrow.PrimitiveTypes.Int32, "i32")
	f64 := expr.Col(0, arrow.PrimitiveTypes.Float64, "f64")
	cat := expr.Col(0, arrow.BinaryTypes.String, "cat")
	id := expr.Col(0, arrow.PrimitiveTypes.Int64, "id")
	id32 := expr.Col(0, arrow.PrimitiveTypes.Int32, "id")
	word := expr.Col(0, arrow.BinaryTypes.String, "s")
	for _, tc := range []struct {
		name      string
		path      string
		pred      predBuilder
		selective bool // other columns decoded for fewer rows than evaluated
	}{
		{"arrow/selective-mod", arrowFile, modEq("req", 97, 3), true},
		{"arrow/half-nullable", arrowFile, cmp(">", i32, int32(0)), false},
		{"arrow/like", arrowFile, like("s", "%_9_"), false},
		{"arrow/eq-dict", arrowFile, cmp("=", cat, "cat_3"), false},
		{"arrow/none", arrowFile, cmp("<", req, int64(0)), true},
		{"arrow/all", arrowFile, cmp(">=", req, int64(0)), false},
		{"arrow/is-null", arrowFile, isNull("b", false), false},
		{"arrow/tail", arrowFile, cmp(">=", req, int64(950)), true},
		{"arrow/two", arrowFile, and(cmp(">", f64, 50.0), isNull("i64", true), modEq("req", 10, 1)), true},
		{"duckdb/selective", duckFile, modEq("id", 50, 7), true},
		{"duckdb/like", duckFile, like("s", "str_1%"), false},
		{"duckdb/range", duckFile, and(cmp(">=", id32, int32(100)), cmp("<", id32, int32(110))), true},
		{"dict-v1/fallback-words", dictV1, cmp("=", word, "Google"), false},
		{"dict-v1/selective", dictV1, modEq("id", 37, 5), true},
		{"dict-v2/selective", dictV2, modEq("id", 37, 5), true},
		{"dict-v2/word-null", dictV2, isNull("s", false), false},
		{"typed/bools", typed, and(modEq("id", 23, 2), isNull("bn", true)), true},
		{"typed/clustered", typed, cmp("<", id, int64(40)), true},
		// Runs of a few rows, some across page boundaries, picked a page
		// at a time (pick.go); INT96 and BOOLEAN read run by run.
		{"typed/short-runs", typed, modLt("id", 61, 5), true},
		{"typed-int96-v2/short-runs", typed96, modLt("id", 61, 5), true},
		{"int96/selective", fixtures + "arrow_int96.parquet", modEq("id", 25, 4), true},
		{"duckdb/short-runs", duckFile, modLt("id", 45, 3), true},
		{"duckdb-times/selective", fixtures + "duckdb_times.parquet", modEq("id", 30, 5), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dictCols []int
			if tc.path == dictV1 || tc.path == dictV2 {
				dictCols = []int{1, 2}
			}
			for _, bs := range []int{1, 7, 100, 8192} {
				for _, parts := range []int{1, 3} {
					run := lateRun{bs: bs, parts: parts, dictCols: dictCols}
					t.Run(fmt.Sprintf("bs%d-p%d", bs, parts), func(t *testing.T) {
						c := checkLate(t, tc.path, tc.pred, run)
						if tc.selective && bs > 1 && c.RowsDecoded >= c.RowsEvaluated {
							t.Errorf("selective predicate: other columns decoded for %d rows of %d evaluated: %+v", c.RowsDecoded, c.RowsEvaluated, c)
						}
					})
				}
			}
		})
	}
}

// TestLateMaterializationProjected: the predicate reads columns in the
// middle of a projection in another order, and a dictionary output column.
func TestLateMaterializationProjected(t *testing.T) {
	path := fixtures + "arrow_types.parquet"
	cols := []int{9, 0, 8, 14} // cat, req, s, ts_ms
	pred := and(like("cat", "cat_1"), modEq("req", 7, 0))
	for _, bs := range []int{5, 64, 8192} {
		c := checkLate(t, path, pred, lateRun{cols: cols, bs: bs, dictCols: []int{0, 2}})
		if c.RowsDecoded >= c.RowsEvaluated {
			t.Errorf("bs %d: other columns decoded for %d rows of %d", bs, c.RowsDecoded, c.RowsEvaluated)
		}
	}
}

// TestLateMaterializationJumpsPages: a predicate passing only the last rows
// of a row group leaves the other columns' earlier pages unread: the
// readers jump over them.
func TestLateMaterializationJumpsPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typed.parquet")
	writeTyped(t, path, 4000, 2000, pq.DataPageV2, false)
	id := expr.Col(0, arrow.PrimitiveTypes.Int64, "id")
	c := checkLate(t, path, modEq("id", 2000, 1999), lateRun{bs: 256})
	if c.RowsPassed != 2 || c.PagesJumped == 0 {
		t.Fatalf("want 2 rows passed and pages jumped over: %+v", c)
	}
	plain := checkLate(t, path, cmp(">=", id, int64(0)), lateRun{bs: 256})
	if c.PagesRead >= plain.PagesRead {
		t.Fatalf("selective scan read %d pages, the scan passing every row %d", c.PagesRead, plain.PagesRead)
	}
}

// TestLateMaterializationDamper: a predicate most rows pass stops being
// evaluated after a few batches, and is tried again later.
func TestLateMaterializationDamper(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typed.parquet")
	writeTyped(t, path, 20000, 20000, pq.DataPageV1, false)
	c := checkLate(t, path, modEq("id", 100, 1), lateRun{bs: 100})
	if c.RowsDecoded >= c.RowsEvaluated || c.BatchesUnevaluated != 0 {
		t.Fatalf("selective predicate: %+v", c)
	}
	// 99 of 100 rows pass: two runs a batch, read run by run.
	notMod := func(t *testing.T, s *arrow.Schema) []connectors.Conjunct {
		cs := modEq("id", 100, 1)(t, s)
		e, err := expr.NewNot(cs[0].Expr)
		cs[0].Expr = e
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	c = checkLate(t, path, notMod, lateRun{bs: 100})
	if c.RowsDecoded != c.RowsPassed || c.BatchesUnevaluated != 0 {
		t.Fatalf("few long runs: %+v", c)
	}
	// Every other row passes: as many runs as passing rows, not selective.
	c = checkLate(t, path, modEq("id", 2, 0), lateRun{bs: 100})
	batches := int64(200)
	if c.BatchesUnevaluated < batches/2 || c.RowsEvaluated == 0 || c.RowsEvaluated >= 20000 {
		t.Fatalf("dense predicate: want most batches unevaluated and some probes: %+v", c)
	}
}

// TestLateMaterializationError: a predicate that fails on some rows is left
// to the Filter: the scan hands the rows on instead of failing.
func TestLateMaterializationError(t *testing.T) {
	path := fixtures + "arrow_types.parquet"
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl := openWith(t, path, mem)
	s := tbl.Schema()
	str := col(t, s, "s")
	cast, err := expr.NewCast(str, arrow.PrimitiveTypes.Int32) // 'str_1' is no number
	if err != nil {
		t.Fatal(err)
	}
	e, err := expr.NewBinary(">", cast, expr.Lit(int32(1), arrow.PrimitiveTypes.Int32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EvalRow(arrowRow(1)[:str.Index+1]); err == nil {
		t.Fatal("the predicate does not fail: the test tests nothing")
	}
	src, err := tbl.NewSource(connectors.ScanSpec{Predicate: []connectors.Conjunct{{Expr: e, Columns: []int{str.Index}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	defer c.release()
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatalf("the scan failed instead of leaving the error to the Filter: %v", err)
	}
	if c.numRows() != arrowRows {
		t.Fatalf("%d rows, want all %d", c.numRows(), arrowRows)
	}
	if n := src.ScanCounts().BatchesUnevaluated; n == 0 {
		t.Fatal("no batch counted as unevaluated")
	}
}
