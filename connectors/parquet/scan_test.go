package parquet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

func TestProjection(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	cols := []int{16, 0, 8, 11}
	c, src := scan(t, mem, fixtures+"arrow_types.parquet", nil, connectors.ScanSpec{Columns: cols, BatchSize: 128})
	defer c.release()
	var names []string
	for _, f := range src.Schema().Fields() {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "ts_ns,req,s,d9" {
		t.Fatalf("output columns %s", got)
	}
	for _, b := range c.batches {
		if n := b.Record().NumCols(); n != 4 {
			t.Fatalf("batch has %d columns", n)
		}
	}
	checkRows(t, c.rows(), arrowRow, arrowRows, cols)
}

func TestNoColumns(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	c, _ := scan(t, mem, fixtures+"duckdb_groups.parquet", nil, connectors.ScanSpec{Columns: []int{}})
	defer c.release()
	if c.numRows() != 6500 {
		t.Fatalf("%d rows, want 6500", c.numRows())
	}
}

func TestProgress(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	var p exec.Progress
	c, _ := scan(t, mem, fixtures+"arrow_types.parquet", nil, connectors.ScanSpec{Columns: []int{0, 8}, Progress: &p})
	defer c.release()
	if p.RowsRead.Load() != arrowRows || p.RowsTotal.Load() != arrowRows {
		t.Errorf("rows %d of %d, want %d", p.RowsRead.Load(), p.RowsTotal.Load(), arrowRows)
	}
	if p.BytesRead.Load() == 0 || p.BytesRead.Load() != p.BytesTotal.Load() {
		t.Errorf("bytes %d of %d", p.BytesRead.Load(), p.BytesTotal.Load())
	}
	st, _ := os.Stat(fixtures + "arrow_types.parquet")
	if p.BytesTotal.Load() >= st.Size()/2 {
		t.Errorf("bytes total %d for 2 of 18 columns of a %d-byte file", p.BytesTotal.Load(), st.Size())
	}
}

// duckdb_groups.parquet: 4 row groups (2048, 2048, 2048, 356 rows) of
// id BIGINT = row number, v = id*10 (NULL when id%3 == 0), k = 'k'||id%4
// (NULL from id 4096 on), late = id (NULL below 2048).
func TestRowGroupSkipping(t *testing.T) {
	tbl, err := Open(fixtures+"duckdb_groups.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	const id, v, k, late = 0, 1, 2, 3
	f := func(col int, op string, val any) connectors.ColumnFilter {
		return connectors.ColumnFilter{Column: col, Op: op, Value: val}
	}
	cases := []struct {
		name    string
		filters []connectors.ColumnFilter
		skipped int
	}{
		{"id = 5000", []connectors.ColumnFilter{f(id, "=", int64(5000))}, 3},
		{"nothing: id < 0", []connectors.ColumnFilter{f(id, "<", int64(0))}, 4},
		{"everything: id >= 0", []connectors.ColumnFilter{f(id, ">=", int64(0))}, 0},
		{"id > 6143", []connectors.ColumnFilter{f(id, ">", int64(6143))}, 3},
		{"id <= 2047", []connectors.ColumnFilter{f(id, "<=", int64(2047))}, 3},
		{"id <= 2048", []connectors.ColumnFilter{f(id, "<=", int64(2048))}, 2},
		{"range", []connectors.ColumnFilter{f(id, ">=", int64(2048)), f(id, "<", int64(4096))}, 3},
		{"k IS NULL", []connectors.ColumnFilter{f(k, "IS NULL", nil)}, 2},
		{"k IS NOT NULL", []connectors.ColumnFilter{f(k, "IS NOT NULL", nil)}, 2},
		{"late IS NULL", []connectors.ColumnFilter{f(late, "IS NULL", nil)}, 3},
		{"late = 10 (all-null group too)", []connectors.ColumnFilter{f(late, "=", int64(10))}, 4},
		{"k = 'k2'", []connectors.ColumnFilter{f(k, "=", "k2")}, 2},
		{"k > 'k3'", []connectors.ColumnFilter{f(k, ">", "k3")}, 4},
		{"v > 64990", []connectors.ColumnFilter{f(v, ">", int64(64990))}, 4},
		{"v IS NULL (nulls everywhere)", []connectors.ColumnFilter{f(v, "IS NULL", nil)}, 0},
		{"wrong value type: never skips", []connectors.ColumnFilter{f(id, "=", int32(5000))}, 0},
		{"unknown op: never skips", []connectors.ColumnFilter{f(id, "SIMILAR", "x")}, 0},
		{"LIKE on a number: never skips", []connectors.ColumnFilter{f(id, "LIKE", "x")}, 0},
		{"id IN (10, 5000)", []connectors.ColumnFilter{{Column: id, Op: "IN", Values: []any{int64(10), int64(5000)}}}, 2},
		{"id IN () (only NULLs listed)", []connectors.ColumnFilter{{Column: id, Op: "IN"}}, 4},
		{"k IN ('k9', 'a')", []connectors.ColumnFilter{{Column: k, Op: "IN", Values: []any{"k9", "a"}}}, 4},
		{"k LIKE 'k2%'", []connectors.ColumnFilter{f(k, "LIKE", "k2")}, 2},
		{"k LIKE 'k%'", []connectors.ColumnFilter{f(k, "LIKE", "k")}, 2},
		{"k LIKE 'j%'", []connectors.ColumnFilter{f(k, "LIKE", "j")}, 4},
		{"k LIKE 'k3x%' (after the max)", []connectors.ColumnFilter{f(k, "LIKE", "k3x")}, 4},
	}
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl.WithAllocator(mem)
	all := runAll(t, tbl, connectors.ScanSpec{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, err := tbl.NewSource(connectors.ScanSpec{Filters: tc.filters})
			if err != nil {
				t.Fatal(err)
			}
			if total, skipped := src.RowGroups(); total != 4 || skipped != tc.skipped {
				t.Fatalf("skipped %d of %d row groups, want %d of 4", skipped, total, tc.skipped)
			}
			c := &collector{}
			if err := src.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			defer c.release()
			if len(c.wms) != 1 {
				t.Fatalf("watermarks %v", c.wms)
			}
			got := map[int64]bool{}
			for _, r := range c.rows() {
				got[r[id].(int64)] = true
			}
			// Every row that passes the predicate must have been read.
			for _, r := range all {
				if matchesAll(r, tc.filters) && !got[r[id].(int64)] {
					t.Fatalf("row id=%d passes the filters but its row group was skipped", r[id])
				}
			}
		})
	}
}

func runAll(t *testing.T, tbl *Table, spec connectors.ScanSpec) []exec.Row {
	t.Helper()
	src, err := tbl.NewSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	defer c.release()
	return c.rows()
}

// matchesAll is the reference predicate evaluation (row path).
func matchesAll(r exec.Row, fs []connectors.ColumnFilter) bool {
	for _, f := range fs {
		v := r[f.Column]
		switch f.Op {
		case "IS NULL":
			if v != nil {
				return false
			}
			continue
		case "IS NOT NULL":
			if v == nil {
				return false
			}
			continue
		}
		if v == nil {
			return false
		}
		switch f.Op {
		case "IN":
			in := false
			for _, x := range f.Values {
				c, ok := compare(v, x)
				in = in || !ok || c == 0
			}
			if !in {
				return false
			}
			continue
		case "LIKE":
			s, ok1 := v.(string)
			p, ok2 := f.Value.(string)
			if ok1 && ok2 && !strings.HasPrefix(s, p) {
				return false
			}
			continue
		}
		c, ok := compare(v, f.Value)
		if !ok {
			return true // not evaluable here: assume it may match
		}
		switch f.Op {
		case "=":
			if c != 0 {
				return false
			}
		case "<":
			if c >= 0 {
				return false
			}
		case "<=":
			if c > 0 {
				return false
			}
		case ">":
			if c <= 0 {
				return false
			}
		case ">=":
			if c < 0 {
				return false
			}
		}
	}
	return true
}

// Skipping on the arrow fixture's other types (4 groups of 300/300/300/100).
func TestRowGroupSkippingTypes(t *testing.T) {
	tbl, err := Open(fixtures+"arrow_types.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	at := func(col, i int) any { return arrowRow(i)[col] }
	cases := []struct {
		name    string
		f       connectors.ColumnFilter
		skipped int
	}{
		{"req >= 900", connectors.ColumnFilter{Column: 0, Op: ">=", Value: int64(900)}, 3},
		{"ts_us < row 100", connectors.ColumnFilter{Column: 15, Op: "<", Value: at(15, 100)}, 3},
		{"ts_ms > row 950", connectors.ColumnFilter{Column: 14, Op: ">", Value: at(14, 950)}, 3},
		{"dt = row 450", connectors.ColumnFilter{Column: 17, Op: "=", Value: at(17, 450)}, 3},
		{"d18 = row 650", connectors.ColumnFilter{Column: 12, Op: "=", Value: at(12, 650)}, 3},
		{"d38 <= row 1", connectors.ColumnFilter{Column: 13, Op: "<=", Value: at(13, 1)}, 3},
		{"f64 > 1e9", connectors.ColumnFilter{Column: 7, Op: ">", Value: float64(1e9)}, 4},
		{"req IS NULL (required column)", connectors.ColumnFilter{Column: 0, Op: "IS NULL"}, 4},
	}
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl.WithAllocator(mem)
	all := runAll(t, tbl, connectors.ScanSpec{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := []connectors.ColumnFilter{tc.f}
			src, err := tbl.NewSource(connectors.ScanSpec{Filters: fs})
			if err != nil {
				t.Fatal(err)
			}
			if _, skipped := src.RowGroups(); skipped != tc.skipped {
				t.Fatalf("skipped %d row groups, want %d", skipped, tc.skipped)
			}
			c := &collector{}
			if err := src.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			defer c.release()
			got := map[int64]bool{}
			for _, r := range c.rows() {
				got[r[0].(int64)] = true
			}
			for _, r := range all {
				if matchesAll(r, fs) && !got[r[0].(int64)] {
					t.Fatalf("row req=%d passes but was skipped", r[0])
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGlobAndDirectory(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, fixtures+"arrow_types.parquet", filepath.Join(dir, "b.parquet"))
	copyFile(t, fixtures+"arrow_types.parquet", filepath.Join(dir, "a.parquet"))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not data"), 0o644); err != nil {
		t.Fatal(err)
	}
	two := func(i int) exec.Row { return arrowRow(i % arrowRows) }
	for _, path := range []string{dir, filepath.Join(dir, "*.parquet"), filepath.Join(dir, "?.parquet")} {
		mem := checkedMem(t)
		tbl, err := Open(path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(tbl.Files()) != 2 || !strings.HasSuffix(tbl.Files()[0], "a.parquet") {
			t.Fatalf("%s: files %v", path, tbl.Files())
		}
		if !strings.Contains(tbl.Describe(), "(2 files)") || tbl.NumRows() != 2*arrowRows || tbl.RowGroups() != 8 {
			t.Fatalf("%s: %s, %d rows, %d groups", path, tbl.Describe(), tbl.NumRows(), tbl.RowGroups())
		}
		tbl.WithAllocator(mem)
		rows := runAll(t, tbl, connectors.ScanSpec{BatchSize: 500})
		checkRows(t, rows, two, 2*arrowRows, nil)
		mem.AssertSize(t, 0)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.parquet")
	os.WriteFile(text, []byte("id,name\n1,hello\n2,world\n"), 0o644)
	whole, _ := os.ReadFile(fixtures + "arrow_types.parquet")
	trunc := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(trunc, whole[:len(whole)/2], 0o644)
	tiny := filepath.Join(dir, "tiny.parquet")
	os.WriteFile(tiny, []byte("PAR1"), 0o644)
	mixed := filepath.Join(dir, "mixed")
	copyFile(t, fixtures+"arrow_types.parquet", filepath.Join(mixed, "1.parquet"))
	copyFile(t, fixtures+"duckdb_types.parquet", filepath.Join(mixed, "2.parquet"))
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)

	decl := func(fs ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fs, nil) }
	cases := []struct {
		name     string
		path     string
		declared *arrow.Schema
		want     []string
	}{
		{"missing file", filepath.Join(dir, "nope.parquet"), nil, []string{"nope.parquet", "no such file"}},
		{"text file", text, nil, []string{"text.parquet", "not a readable parquet file"}},
		{"truncated", trunc, nil, []string{"truncated.parquet"}},
		{"tiny", tiny, nil, []string{"tiny.parquet"}},
		{"glob without match", filepath.Join(dir, "*.nothing"), nil, []string{"no files match"}},
		{"empty directory", filepath.Join(dir, "empty"), nil, []string{"no *.parquet files"}},
		{"files disagree", mixed, nil, []string{"2.parquet", "column req is missing"}},
		{"declared column absent", fixtures + "arrow_types.parquet",
			decl(arrow.Field{Name: "nope", Type: arrow.PrimitiveTypes.Int64}), []string{"arrow_types.parquet", "column nope is missing"}},
		{"type mismatch", fixtures + "arrow_types.parquet",
			decl(arrow.Field{Name: "s", Type: arrow.PrimitiveTypes.Int64}), []string{"arrow_types.parquet", "column s", "declared int64 but the file has utf8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(tc.path, tc.declared)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A file whose footer is fine but whose pages are garbage: the scan fails
// with an error naming the file, does not panic and frees its buffers.
func TestCorruptPages(t *testing.T) {
	whole, _ := os.ReadFile(fixtures + "arrow_types.parquet")
	bad := append([]byte(nil), whole...)
	for i := 40; i < len(bad)/2; i += 3 {
		bad[i] ^= 0x5a
	}
	path := filepath.Join(t.TempDir(), "corrupt.parquet")
	os.WriteFile(path, bad, 0o644)
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl.WithAllocator(mem)
	src, _ := tbl.NewSource(connectors.ScanSpec{})
	c := &collector{}
	defer c.release()
	err = src.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "corrupt.parquet") {
		t.Fatalf("error %v does not name the file", err)
	}
	t.Log(err)
}

func TestDeclaredSchema(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	decl := arrow.NewSchema([]arrow.Field{
		{Name: "TS_US", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "Req", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	c, src := scan(t, mem, fixtures+"arrow_types.parquet", decl, connectors.ScanSpec{BatchSize: 333})
	defer c.release()
	if !src.Schema().Equal(decl) {
		t.Fatalf("schema %s, want the declared one", src.Schema())
	}
	want := func(i int) exec.Row {
		r := arrowRow(i)
		out := exec.Row{r[15], r[0], r[4], r[6], r[10]}
		if out[0] != nil {
			us := int64(out[0].(arrow.Timestamp))
			ms := us / 1000
			if us%1000 != 0 && us < 0 {
				ms--
			}
			out[0] = arrow.Timestamp(ms)
		}
		if out[2] != nil {
			out[2] = int64(out[2].(int32))
		}
		if out[3] != nil {
			out[3] = float64(out[3].(float32))
		}
		if out[4] != nil {
			out[4] = string(out[4].([]byte))
		}
		return out
	}
	checkRows(t, c.rows(), want, arrowRows, nil)
}

func TestCancelAndStop(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl, err := Open(fixtures+"arrow_types.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl.WithAllocator(mem)

	src, _ := tbl.NewSource(connectors.ScanSpec{BatchSize: 100})
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{onEmit: func(n int) {
		if n == 2 {
			cancel()
		}
	}}
	err = src.Run(ctx, c)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run returned %v", err)
	}
	if len(c.batches) != 2 || len(c.wms) != 0 {
		t.Errorf("cancelled run emitted %d batches, %d watermarks", len(c.batches), len(c.wms))
	}
	c.release()

	src, _ = tbl.NewSource(connectors.ScanSpec{BatchSize: 100})
	c = &collector{stopAfter: 3}
	if err := src.Run(context.Background(), c); err != nil {
		t.Errorf("stopped run returned %v", err)
	}
	if len(c.batches) != 3 || len(c.wms) != 0 {
		t.Errorf("stopped run emitted %d batches, %d watermarks", len(c.batches), len(c.wms))
	}
	checkRows(t, c.rows(), arrowRow, 300, nil)
	c.release()
}

func TestSourceContract(t *testing.T) {
	tbl, err := Open(fixtures+"duckdb_groups.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !tbl.Bounded() || tbl.Describe() != "parquet '"+fixtures+"duckdb_groups.parquet'" {
		t.Errorf("bounded %v, describe %q", tbl.Bounded(), tbl.Describe())
	}
	src, err := tbl.Open(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	caps := src.Capabilities()
	if src.Kind() != "parquet-scan" || !caps.EmitsColumnar || caps.IngestsColumnar {
		t.Errorf("kind %s caps %+v", src.Kind(), caps)
	}
	if _, err := tbl.Open(connectors.ScanSpec{Columns: []int{9}}); err == nil {
		t.Error("column index out of range accepted")
	}
	// Batches never cross row groups and hold at most the batch size.
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	c, _ := scan(t, mem, fixtures+"duckdb_groups.parquet", nil, connectors.ScanSpec{BatchSize: 1000})
	defer c.release()
	var sizes []int
	for _, b := range c.batches {
		sizes = append(sizes, b.Len())
	}
	want := []int{1000, 1000, 48, 1000, 1000, 48, 1000, 1000, 48, 356}
	if !reflect.DeepEqual(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
}

func TestFactory(t *testing.T) {
	f, ok := connectors.Lookup("filesystem")
	if !ok {
		t.Fatal("filesystem connector not registered")
	}
	tbl, err := f(map[string]string{"connector": "filesystem", "path": fixtures + "duckdb_groups.parquet", "format": "parquet"}, nil)
	if err != nil || tbl.Schema().NumFields() != 4 {
		t.Fatalf("table %v, err %v", tbl, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"format": "parquet"}, "option 'path' is required"},
		// 'json' is registered by connectors/jsonfile when the engine is
		// linked in (this test binary links it through sink_engine_test.go).
		{map[string]string{"path": "x.xml", "format": "xml"}, "unknown format 'xml'"},
		{map[string]string{"path": "x.csv", "format": "csv"}, "declare the table's columns"}, // connectors/csvfile, linked likewise
	} {
		if _, err := f(tc.opts, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestDecimalBytes(t *testing.T) {
	cases := []struct {
		in   []byte
		want decimal128.Num
		ok   bool
	}{
		{nil, decimal128.FromI64(0), true},
		{[]byte{0x01}, decimal128.FromI64(1), true},
		{[]byte{0xff}, decimal128.FromI64(-1), true},
		{[]byte{0x80, 0x00}, decimal128.FromI64(-32768), true},
		{[]byte{0x00, 0xff, 0xff}, decimal128.FromI64(65535), true},
		{append([]byte{0xff, 0xff}, make([]byte, 16)...), decimal128.Num{}, false},
		{append([]byte{0x00, 0x00}, append(make([]byte, 15), 7)...), decimal128.FromI64(7), true},
	}
	for _, tc := range cases {
		got, ok := decFromBE(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("decFromBE(%x) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

var _ memory.Allocator = (*memory.CheckedAllocator)(nil)
