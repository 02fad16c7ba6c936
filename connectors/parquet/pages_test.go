package parquet

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// Page and dictionary pruning: rows the page statistics or a row group's
// dictionaries rule out are never read, and no row that passes is lost.

// stepSchema's columns: id (0..n-1), step (page p of 50 rows holds
// p*1000 .. p*1000+49, so a value between two pages' ranges is in no
// page but within every row group's range), name ("n" and the id, sorted)
// and a nullable payload.
var stepSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "step", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

const stepPage = 50

func stepRow(i int) exec.Row {
	row := exec.Row{int64(i), int64(i/stepPage*1000 + i%stepPage), fmt.Sprintf("n%06d", i), nil}
	if i%3 != 0 {
		row[3] = fmt.Sprintf("payload-%d-%s", i, "xxxxxxxxxxxxxxxx"[:i%16])
	}
	return row
}

// writeSteps writes n stepRows in row groups of group rows, pages of
// stepPage rows (one write batch each, with a page size any batch passes).
func writeSteps(t *testing.T, path string, n, group int, version pq.DataPageVersion, pageIndex bool) {
	t.Helper()
	rec := arrowRecord(t, memory.NewGoAllocator(), stepSchema, stepRow, n)
	defer rec.Release()
	props := pq.NewWriterProperties(
		pq.WithDictionaryDefault(false),
		pq.WithDataPageSize(64),
		pq.WithBatchSize(stepPage),
		pq.WithMaxRowGroupLength(int64(group)),
		pq.WithDataPageVersion(version),
		pq.WithPageIndexEnabled(pageIndex))
	writeRecordFile(t, path, rec, props, pqarrow.DefaultWriterProps())
	// The test relies on the page layout: check it, independently of the
	// scan's own reading of the statistics.
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi := tbl.files[0]
	for g, rg := range fi.meta.RowGroups {
		ch := &rg.Columns[fi.cols[1].leaf]
		if pageIndex != (ch.ColumnIndexOffset != 0) {
			t.Fatalf("row group %d: column index at %d, page index on: %v", g, ch.ColumnIndexOffset, pageIndex)
		}
		pages, ok := chunkPageHeaders(f, &ch.MetaData, rg.NumRows)
		if !ok {
			t.Fatalf("row group %d: page headers unreadable", g)
		}
		for i, p := range pages {
			if p.rows != stepPage && i != len(pages)-1 {
				t.Fatalf("row group %d page %d has %d rows, want %d", g, i, p.rows, stepPage)
			}
		}
	}
}

func TestPagePruning(t *testing.T) {
	t.Setenv("CLINK_PARQUET_RECYCLE", "poison")
	const n, group = 3000, 1000
	f := func(col int, op string, v any) connectors.ColumnFilter {
		return connectors.ColumnFilter{Column: col, Op: op, Value: v}
	}
	cases := []struct {
		name    string
		filters []connectors.ColumnFilter
		// rows ruled out by the page statistics, and whole row groups
		minRows int64
		groups  int64
	}{
		{"step = 500: in every group's range, in no page", []connectors.ColumnFilter{f(1, "=", int64(500))}, group, 1},
		{"id range", []connectors.ColumnFilter{f(0, ">=", int64(1234)), f(0, "<", int64(1300))}, group - 100, 0},
		{"step IN", []connectors.ColumnFilter{{Column: 1, Op: "IN", Values: []any{int64(5), int64(40010)}}}, n - 2*stepPage - group, 0},
		{"name LIKE 'n0012%'", []connectors.ColumnFilter{f(2, "LIKE", "n0012")}, group - 150, 0},
		{"payload IS NULL: no page without nulls", []connectors.ColumnFilter{f(3, "IS NULL", nil)}, 0, 0},
		{"everything", []connectors.ColumnFilter{f(0, ">=", int64(0))}, 0, 0},
	}
	for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
		for _, pageIndex := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "steps.parquet")
			writeSteps(t, path, n, group, version, pageIndex)
			for _, tc := range cases {
				for _, parts := range []int{1, 2} {
					name := fmt.Sprintf("v%d/index=%v/%s/p%d", version, pageIndex, tc.name, parts)
					t.Run(name, func(t *testing.T) {
						setMorselRows(t, 300)
						all, _ := scanParts(t, path, connectors.ScanSpec{RowGroupsOnly: true}, lateRun{bs: 128})
						got, c := scanParts(t, path, connectors.ScanSpec{Filters: tc.filters}, lateRun{bs: 128, parts: parts})
						var want, kept []exec.Row
						for _, r := range all {
							if matchesAll(r, tc.filters) {
								want = append(want, r)
							}
						}
						for _, r := range got {
							if matchesAll(r, tc.filters) {
								kept = append(kept, r)
							}
						}
						sameRows(t, "pruned scan, filtered", rowsByID(kept), rowsByID(want))
						if c.RowsByPages < tc.minRows || c.RowGroupsByPages != tc.groups {
							t.Fatalf("page statistics ruled out %d rows (want at least %d) and %d row groups (want %d)", c.RowsByPages, tc.minRows, c.RowGroupsByPages, tc.groups)
						}
						if int64(len(got)) != int64(len(all))-c.RowsByPages-int64(skippedRows(t, path, tc.filters)) {
							t.Fatalf("%d rows read of %d, %d ruled out by pages", len(got), len(all), c.RowsByPages)
						}
					})
				}
			}
		}
	}
}

// skippedRows is the rows of the row groups the filters skip by their
// statistics (before any page is looked at).
func skippedRows(t *testing.T, path string, fs []connectors.ColumnFilter) int {
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fi := range tbl.files {
		for g := range fi.meta.RowGroups {
			rg := &fi.meta.RowGroups[g]
			if !groupMatches(fi, rg, tbl.schema, fs) {
				n += int(rg.NumRows)
			}
		}
	}
	return n
}

// TestRowGroupsOnly: the A/B switch turns page and dictionary pruning and
// the predicate off.
func TestRowGroupsOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "steps.parquet")
	writeSteps(t, path, 2000, 1000, pq.DataPageV1, false)
	id := expr.Col(0, arrow.PrimitiveTypes.Int64, "id")
	pred := cmp("<", id, int64(10))(t, stepSchema)
	fs := []connectors.ColumnFilter{{Column: 0, Op: "<", Value: int64(10)}}
	rows, c := scanParts(t, path, connectors.ScanSpec{Filters: fs, Predicate: pred, RowGroupsOnly: true}, lateRun{})
	if len(rows) != 1000 || c.RowsByPages != 0 || c.RowsEvaluated != 0 {
		t.Fatalf("%d rows, counters %+v: want the whole first row group and no finer skipping", len(rows), c)
	}
	rows, c = scanParts(t, path, connectors.ScanSpec{Filters: fs, Predicate: pred}, lateRun{})
	if len(rows) != 10 || c.RowsByPages == 0 || c.RowsEvaluated == 0 {
		t.Fatalf("%d rows, counters %+v: want 10 rows, pages ruled out and the predicate evaluated", len(rows), c)
	}
}

// dictConj is one conjunct over the string column name of schema.
func strConj(t *testing.T, schema *arrow.Schema, name string, build func(c *expr.ColRef) (expr.Expr, error)) connectors.Conjunct {
	c := col(t, schema, name)
	e, err := build(c)
	return conj(t, e, err, c)
}

func TestDictionaryPruning(t *testing.T) {
	t.Setenv("CLINK_PARQUET_RECYCLE", "poison")
	path := fixtures + "duckdb_scan.parquet" // 5 row groups; grp's values differ per group
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	schema := tbl.Schema()
	str := func(v string) expr.Expr { return expr.Lit(v, arrow.BinaryTypes.String) }
	eq := func(v string) func(c *expr.ColRef) (expr.Expr, error) {
		return func(c *expr.ColRef) (expr.Expr, error) { return expr.NewBinary("=", c, str(v)) }
	}
	likeP := func(p string) func(c *expr.ColRef) (expr.Expr, error) {
		return func(c *expr.ColRef) (expr.Expr, error) { return expr.NewLike(c, str(p), false) }
	}
	cases := []struct {
		name    string
		conj    func() []connectors.Conjunct
		skipped int64
	}{
		{"grp LIKE '%3_1' (no prefix: statistics cannot tell)", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "grp", likeP("%3_1"))}
		}, 4},
		{"s = 'w13': between the min and max, in no dictionary", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "s", eq("w13"))}
		}, 5},
		{"s IN ('w3', 'zz')", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "s", func(c *expr.ColRef) (expr.Expr, error) {
				return expr.NewIn(c, []expr.Expr{str("w3"), str("zz")}, false)
			})}
		}, 0},
		{"s IS NULL: every group has NULLs", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "s", func(c *expr.ColRef) (expr.Expr, error) { return expr.NewIsNull(c, false), nil })}
		}, 0},
		{"grp IS NULL: no group has NULLs", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "grp", func(c *expr.ColRef) (expr.Expr, error) { return expr.NewIsNull(c, false), nil })}
		}, 5},
		{"coalesce(s, 'none') = 'none': TRUE on NULL", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "s", func(c *expr.ColRef) (expr.Expr, error) {
				co, err := expr.NewFunc("coalesce", []expr.Expr{c, str("none")})
				if err != nil {
					return nil, err
				}
				return expr.NewBinary("=", co, str("none"))
			})}
		}, 0},
		{"two conjuncts on grp, ANDed over the dictionary", func() []connectors.Conjunct {
			return []connectors.Conjunct{strConj(t, schema, "grp", likeP("%1_%")), strConj(t, schema, "grp", likeP("%_2"))}
		}, 4},
		{"a conjunct on two columns is not tested", func() []connectors.Conjunct {
			g, s := col(t, schema, "grp"), col(t, schema, "s")
			e, err := expr.NewBinary("=", g, s)
			return []connectors.Conjunct{conj(t, e, err, g, s)}
		}, 0},
	}
	for _, tc := range cases {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/p%d", tc.name, parts), func(t *testing.T) {
				cj := tc.conj()
				all, _ := scanParts(t, path, connectors.ScanSpec{RowGroupsOnly: true}, lateRun{})
				got, c := scanParts(t, path, connectors.ScanSpec{Predicate: cj}, lateRun{parts: parts})
				want, kept := passing(t, cj, all), passing(t, cj, got)
				sameRows(t, "pruned scan, filtered", rowsByID(kept), rowsByID(want))
				if c.RowGroupsByDictionary != tc.skipped {
					t.Fatalf("%d row groups skipped by dictionary, want %d", c.RowGroupsByDictionary, tc.skipped)
				}
			})
		}
	}
}

// TestDictionaryPruningFallback: a row group whose dictionary overflowed
// into plain pages is never skipped by its dictionary, whose values are
// not all the chunk's; one dictionary-encoded throughout is.
func TestDictionaryPruningFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dict.parquet")
	writeDictFixture(t, path, true, pq.DataPageV1) // even groups fall back to plain after row 400
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	schema := tbl.Schema()
	str := func(v string) expr.Expr { return expr.Lit(v, arrow.BinaryTypes.String) }
	for _, tc := range []struct {
		name    string
		pattern string
		skipped int64
	}{
		// "unique-..." values exist only past the fallback, in plain pages
		// of the even groups, whose dictionaries lack them: those groups
		// are read; the odd groups, dictionary-encoded throughout, hold
		// none and are skipped.
		{"only in plain pages", "unique-%", int64(dictGroups(t, path) / 2)},
		// No value ends in "zz": the same groups are skipped.
		{"nowhere", "%zz", int64(dictGroups(t, path) / 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := []connectors.Conjunct{strConj(t, schema, "s", func(c *expr.ColRef) (expr.Expr, error) {
				return expr.NewLike(c, str(tc.pattern), false)
			})}
			all, _ := scanParts(t, path, connectors.ScanSpec{RowGroupsOnly: true}, lateRun{})
			got, c := scanParts(t, path, connectors.ScanSpec{Predicate: cj}, lateRun{})
			sameRows(t, "pruned scan, filtered", passing(t, cj, got), passing(t, cj, all))
			if c.RowGroupsByDictionary != tc.skipped {
				t.Fatalf("%d row groups skipped by dictionary, want %d", c.RowGroupsByDictionary, tc.skipped)
			}
		})
	}
}

func dictGroups(t *testing.T, path string) int {
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(tbl.files[0].meta.RowGroups)
}

// TestCutRun: removing a range from a list of runs.
func TestCutRun(t *testing.T) {
	runs := []rowRun{{0, 10}, {20, 30}}
	for _, tc := range []struct {
		lo, hi int64
		want   []rowRun
	}{
		{5, 25, []rowRun{{0, 5}, {25, 30}}},
		{0, 10, []rowRun{{20, 30}}},
		{10, 20, []rowRun{{0, 10}, {20, 30}}},
		{2, 4, []rowRun{{0, 2}, {4, 10}, {20, 30}}},
		{-5, 50, nil},
	} {
		got := cutRun(runs, tc.lo, tc.hi)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("cut [%d, %d): %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}
