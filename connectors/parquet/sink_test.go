package parquet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// keep copies the files TestSinkRoundTrip writes into a directory, to check
// them with another reader by hand, e.g.
//
//	go test ./connectors/parquet -run TestSinkRoundTrip -sink.keep /tmp/pq
//	duckpeer "SELECT count(*), sum(i64), min(ts_ns), max(d38) FROM '/tmp/pq/*.parquet'"
var keep = flag.String("sink.keep", "", "copy the files the sink tests write into this directory")

// sinkSchema has every type a clink table column can have (flat), with a
// required column and nullable ones.
var sinkSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "d9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	{Name: "d38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 10}, Nullable: true},
	{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
}, nil)

func sinkRow(i int) exec.Row {
	n := func(mod int, v any) any {
		if i%mod == 0 {
			return nil
		}
		return v
	}
	return exec.Row{
		int64(i),
		n(5, i%3 == 0),
		n(7, int32(i*31-5000)),
		n(3, int64(i)*1_000_000_007),
		n(11, float32(i)/4),
		n(13, float64(i)*-1.5),
		n(4, fmt.Sprintf("row %d %s", i, strings.Repeat("x", i%17))),
		n(9, []string{"red", "green", "blue"}[i%3]),
		n(6, []byte{byte(i), byte(i >> 8), 0}),
		n(8, decimal128.FromI64(int64(i*137-20000))),
		n(10, decimal128.New(int64(i), uint64(i)*12345)),
		n(12, arrow.Timestamp(1_600_000_000_000+int64(i)*1001)),
		n(14, arrow.Timestamp(1_600_000_000_000_000+int64(i)*7)),
		n(15, arrow.Timestamp(1_600_000_000_000_000_000+int64(i)*3)),
		n(16, arrow.Date32(18000+i)),
	}
}

func sinkRows(n int) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		rows[i] = sinkRow(i)
	}
	return rows
}

// feed sends rows[lo:hi] to the sink through exec.Dispatch, as the runner
// does: columnar batches when columnar, row batches otherwise.
func feed(t *testing.T, mem memory.Allocator, s *Sink, rows []exec.Row, columnar bool) error {
	t.Helper()
	var b *exec.Batch
	if columnar {
		rec, err := exec.EncodeRows(mem, sinkSchema, rows)
		if err != nil {
			t.Fatal(err)
		}
		b = exec.NewColumnarBatch(rec)
	} else {
		b = exec.NewRowBatch(sinkSchema, rows)
	}
	defer b.Release()
	took, err := exec.Dispatch(context.Background(), s, true, 0, b, &collector{})
	if err == nil && took != columnar {
		t.Fatalf("columnar path taken = %v for a columnar = %v batch", took, columnar)
	}
	return err
}

// readBackArrow reads path with arrow-go's own Parquet reader (pqarrow), a
// second implementation besides this package's scan.
func readBackArrow(t *testing.T, mem memory.Allocator, path string) (*arrow.Schema, []exec.Row, *file.Reader) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(pq.NewReaderProperties(mem)))
	if err != nil {
		t.Fatalf("pqarrow cannot open %s: %v", path, err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 333}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("pqarrow cannot read %s: %v", path, err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 500)
	defer tr.Release()
	var rows []exec.Row
	for tr.Next() {
		rows = append(rows, exec.DecodeRows(tr.RecordBatch())...)
	}
	return tbl.Schema(), rows, rdr
}

func partFiles(t *testing.T, dir string) (parts, others []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "part-") && strings.HasSuffix(e.Name(), "-0.parquet") {
			parts = append(parts, filepath.Join(dir, e.Name()))
		} else {
			others = append(others, e.Name())
		}
	}
	return parts, others
}

func sameRows(t *testing.T, what string, got, want []exec.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: row %d\n got %v\nwant %v", what, i, got[i], want[i])
		}
	}
}

// TestSinkRoundTrip writes batches of several sizes, columnar and row, and
// reads the file back through this package's scan and through pqarrow.
func TestSinkRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sizes    []int
		columnar bool
	}{
		{"columnar-mixed", []int{1, 7, 1000, 1, 1491}, true},
		{"rows-mixed", []int{1, 7, 1000, 1, 1491}, false},
		{"columnar-one", []int{2500}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			defer mem.AssertSize(t, 0)
			dir := filepath.Join(t.TempDir(), "out")
			d, err := OpenDataset(dir, sinkSchema)
			if err != nil {
				t.Fatal(err)
			}
			d.WithAllocator(mem)
			d.rowGroupRows = 1000
			s, err := d.NewSink(connectors.SinkSpec{Name: "out"})
			if err != nil {
				t.Fatal(err)
			}
			want := sinkRows(2500)
			pos := 0
			for i, n := range tc.sizes {
				// Alternate the carriers in the row case's neighbour too:
				// the mixed cases differ only in the carrier.
				if err := feed(t, mem, s, want[pos:pos+n], tc.columnar); err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
				pos += n
			}
			if err := s.Finish(context.Background(), 0, &collector{}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if s.Rows() != 2500 {
				t.Fatalf("sink counted %d rows", s.Rows())
			}
			parts, others := partFiles(t, dir)
			if len(parts) != 1 || len(others) != 0 || parts[0] != s.Path() {
				t.Fatalf("directory holds %v and %v, want only %s", parts, others, s.Path())
			}

			if *keep != "" {
				data, err := os.ReadFile(parts[0])
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(*keep, tc.name+".parquet"), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			// This package's scan, with the schema inferred from the file.
			c, _ := scan(t, mem, parts[0], nil, connectors.ScanSpec{BatchSize: 777})
			sameRows(t, "clink scan", c.rows(), want)
			got := c.batches[0].Schema()
			c.release()
			for i, f := range sinkSchema.Fields() {
				g := got.Field(i)
				if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || g.Nullable != f.Nullable {
					t.Errorf("column %d read back as %v, written %v", i, g, f)
				}
			}

			// pqarrow.
			schema, rows, rdr := readBackArrow(t, mem, parts[0])
			defer rdr.Close()
			sameRows(t, "pqarrow", rows, want)
			for i, f := range sinkSchema.Fields() {
				g := schema.Field(i)
				if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || g.Nullable != f.Nullable {
					t.Errorf("pqarrow: column %d read back as %v, written %v", i, g, f)
				}
			}
			md := rdr.MetaData()
			if md.NumRowGroups() != 3 {
				t.Errorf("%d row groups, want 3 (1000 rows each)", md.NumRowGroups())
			}
			for g := 0; g < md.NumRowGroups(); g++ {
				rg := md.RowGroup(g)
				for c := 0; c < rg.NumColumns(); c++ {
					cc, err := rg.ColumnChunk(c)
					if err != nil {
						t.Fatal(err)
					}
					if cc.Compression() != compress.Codecs.Snappy {
						t.Fatalf("row group %d column %d compressed with %v, want snappy", g, c, cc.Compression())
					}
				}
			}
		})
	}
}

// TestSinkAbort: a statement that ends without Finish (an error, a cancel)
// leaves no file behind, and the writer's memory is given back.
func TestSinkAbort(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	d, err := OpenDataset(dir, sinkSchema)
	if err != nil {
		t.Fatal(err)
	}
	d.WithAllocator(mem)
	s, err := d.NewSink(connectors.SinkSpec{Name: "out"})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed(t, mem, s, sinkRows(3000), true); err != nil {
		t.Fatal(err)
	}
	if _, others := partFiles(t, dir); len(others) != 1 || !strings.HasSuffix(others[0], ".inprogress") {
		t.Fatalf("while writing, the directory holds %v, want one hidden .inprogress file", others)
	}
	s.Close()
	if parts, others := partFiles(t, dir); len(parts)+len(others) != 0 {
		t.Fatalf("after Close without Finish the directory holds %v %v", parts, others)
	}
	// A later scan of the (empty) directory reads nothing, without error.
	src, err := d.Open(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	if err := src.Run(context.Background(), c); err != nil || c.numRows() != 0 {
		t.Fatalf("scan after abort: %d rows, err %v", c.numRows(), err)
	}
}

func TestSinkBadInput(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	d, err := OpenDataset(dir, sinkSchema)
	if err != nil {
		t.Fatal(err)
	}
	d.WithAllocator(mem)

	// NULL in the NOT NULL column: named with its row in the statement.
	s, _ := d.NewSink(connectors.SinkSpec{Name: "out"})
	if err := feed(t, mem, s, sinkRows(10), true); err != nil {
		t.Fatal(err)
	}
	bad := sinkRows(5)
	bad[3] = append(exec.Row(nil), bad[3]...)
	bad[3][0] = nil
	err = feed(t, mem, s, bad, true)
	if err == nil || !strings.Contains(err.Error(), "column 1 ('id') is NOT NULL, but row 14 is NULL") {
		t.Fatalf("error %v", err)
	}
	s.Close()

	// A column of another type than the table's (a planner bug) is an
	// error naming the column, not a corrupt file.
	s, _ = d.NewSink(connectors.SinkSpec{Name: "out"})
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	rec, _ := exec.EncodeRows(mem, other, []exec.Row{{int32(1)}})
	b := exec.NewColumnarBatch(rec)
	_, err = exec.Dispatch(context.Background(), s, true, 0, b, &collector{})
	b.Release()
	if err == nil || !strings.Contains(err.Error(), "a batch has 1 columns, the table 15") {
		t.Fatalf("error %v", err)
	}
	s.Close()
	if parts, others := partFiles(t, dir); len(parts)+len(others) != 0 {
		t.Fatalf("failed statements left %v %v", parts, others)
	}

	// A row of the wrong Go type on the row path.
	s, _ = d.NewSink(connectors.SinkSpec{Name: "out"})
	rows := sinkRows(2)
	rows[1] = append(exec.Row(nil), rows[1]...)
	rows[1][2] = "not an int"
	if err := feed(t, mem, s, rows, false); err == nil || !strings.Contains(err.Error(), `column "i32"`) {
		t.Fatalf("error %v", err)
	}
	s.Close()
}

// TestSinkOnlyTable: a declared table over a path that does not exist yet
// scans as empty, INSERTs add one file each, and scans see them.
func TestSinkOnlyTable(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "a", "b")
	if _, err := OpenDataset(dir, nil); !errors.Is(err, ErrNoFiles) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("undeclared table over nothing: error %v", err)
	}
	d, err := OpenDataset(dir, sinkSchema)
	if err != nil {
		t.Fatal(err)
	}
	d.WithAllocator(mem)
	count := func() int {
		src, err := d.Open(connectors.ScanSpec{Columns: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		c := &collector{}
		if err := src.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		defer c.release()
		if len(c.wms) != 1 || c.wms[0] != exec.MaxWatermark {
			t.Fatalf("watermarks %v", c.wms)
		}
		return c.numRows()
	}
	if n := count(); n != 0 || !strings.Contains(d.Describe(), "no files yet") {
		t.Fatalf("%d rows before any insert, %s", n, d.Describe())
	}
	for i, n := range []int{100, 0, 250} {
		s, err := d.OpenSink(connectors.SinkSpec{Name: "out"})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			if err := feed(t, mem, s.(*Sink), sinkRows(n), true); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Finish(context.Background(), 0, &collector{}); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
		s.Close()
	}
	if n := count(); n != 350 {
		t.Fatalf("%d rows after inserts of 100, 0 and 250", n)
	}
	if parts, _ := partFiles(t, dir); len(parts) != 3 || !strings.Contains(d.Describe(), "(3 files)") {
		t.Fatalf("files %v, %s", parts, d.Describe())
	}
	// The same listing reuses the footers read before.
	t1, _ := d.Snapshot()
	t2, _ := d.Snapshot()
	if t1 != t2 {
		t.Error("an unchanged directory was listed as a new snapshot")
	}
	// An undeclared table over the written directory infers the schema.
	d2, err := OpenDataset(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Schema().Equal(sinkSchema) {
		t.Errorf("inferred %v", d2.Schema())
	}
}

// TestSinkExactFile: a path ending in .parquet is the file itself, written
// once.
func TestSinkExactFile(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "sub", "out.parquet")
	d, err := OpenDataset(path, sinkSchema)
	if err != nil {
		t.Fatal(err)
	}
	d.WithAllocator(mem)
	s, err := d.NewSink(connectors.SinkSpec{Name: "out"})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed(t, mem, s, sinkRows(42), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(context.Background(), 0, &collector{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Path() != path {
		t.Fatalf("wrote %s, want %s", s.Path(), path)
	}
	c, _ := scan(t, mem, path, nil, connectors.ScanSpec{})
	sameRows(t, "clink scan", c.rows(), sinkRows(42))
	c.release()
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want only the file", len(ents))
	}
	if _, err := d.NewSink(connectors.SinkSpec{Name: "out"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second insert into a file: error %v", err)
	}
	g, err := OpenDataset(filepath.Join(filepath.Dir(path), "*.parquet"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.NewSink(connectors.SinkSpec{Name: "g"}); err == nil || !strings.Contains(err.Error(), "cannot write to the glob") {
		t.Fatalf("insert into a glob: error %v", err)
	}
}

// TestFormatDispatch: a registered format receives every WITH option
// (path queries are tested through the engine, in TestPathQueryFormat).
func TestFormatDispatch(t *testing.T) {
	f, _ := connectors.Lookup("filesystem")
	var got []map[string]string
	fake := func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		got = append(got, options)
		return OpenDataset(fixtures+"duckdb_groups.parquet", declared)
	}
	defer SwapFormat("json", fake)()

	opts := map[string]string{"connector": "filesystem", "path": "events.json", "format": "JSON", "json.fail-on-missing-field": "true"}
	if _, err := f(opts, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["json.fail-on-missing-field"] != "true" || got[0]["path"] != "events.json" {
		t.Fatalf("the format saw %v", got)
	}
	// The path-only hook and its duplicate check.
	RegisterFormat("clink-test-format", func(path string, declared *arrow.Schema) (connectors.Table, error) {
		return OpenDataset(path, declared)
	})
	defer func() {
		formatsMu.Lock()
		delete(formats, "clink-test-format")
		formatsMu.Unlock()
	}()
	tbl, err := f(map[string]string{"path": fixtures + "duckdb_groups.parquet", "format": "clink-test-format"}, nil)
	if err != nil || tbl.Schema().NumFields() != 4 {
		t.Fatalf("table %v, err %v", tbl, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a duplicate format registration did not panic")
			}
		}()
		RegisterFormat("Clink-Test-Format", nil)
	}()

	if _, err := f(map[string]string{"path": "x.parquet", "metadata.offset": "offset"}, sinkSchema); err == nil ||
		!strings.Contains(err.Error(), "no option 'metadata.offset'") {
		t.Fatalf("unknown option: error %v", err)
	}
}

// BenchmarkSink writes 8192-row batches of sinkSchema (15 columns) into one
// file per iteration round: columnar (the record as it is) and rows (one
// EncodeRows per batch first). Reports rows/s.
func BenchmarkSink(b *testing.B) {
	rows := sinkRows(8192)
	rec, err := exec.EncodeRows(memory.DefaultAllocator, sinkSchema, rows)
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Release()
	for _, columnar := range []bool{true, false} {
		b.Run(fmt.Sprintf("columnar=%v", columnar), func(b *testing.B) {
			d, err := OpenDataset(b.TempDir(), sinkSchema)
			if err != nil {
				b.Fatal(err)
			}
			s, err := d.NewSink(connectors.SinkSpec{Name: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var batch *exec.Batch
				if columnar {
					rec.Retain()
					batch = exec.NewColumnarBatch(rec)
				} else {
					batch = exec.NewRowBatch(sinkSchema, rows)
				}
				if _, err := exec.Dispatch(ctx, s, true, 0, batch, &collector{}); err != nil {
					b.Fatal(err)
				}
				batch.Release()
			}
			if err := s.Finish(ctx, 0, &collector{}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N*len(rows))/sec, "rows/s")
			b.ReportMetric(sec*1e9/float64(b.N*len(rows)), "ns/row")
		})
	}
}

// TestDatasetSplits: a Dataset splits like the Table it lists, and the
// parts of one split scan read one listing.
func TestDatasetSplits(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	d, err := OpenDataset(fixtures+"duckdb_groups.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	d.WithAllocator(mem)
	tbl, _ := Open(fixtures+"duckdb_groups.parquet", nil)
	n := d.MaxSplits()
	if n != tbl.MaxSplits() || n < 2 {
		t.Fatalf("MaxSplits %d, the table's %d", n, tbl.MaxSplits())
	}
	total := 0
	for i := 0; i < n; i++ {
		src, err := d.Open(connectors.ScanSpec{Columns: []int{0}, Split: i, Splits: n})
		if err != nil {
			t.Fatal(err)
		}
		c := &collector{}
		if err := src.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		total += c.numRows()
		c.release()
	}
	if int64(total) != tbl.NumRows() {
		t.Fatalf("%d splits read %d rows, the table has %d", n, total, tbl.NumRows())
	}
	empty, _ := OpenDataset(filepath.Join(t.TempDir(), "none"), sinkSchema)
	if empty.MaxSplits() != 1 {
		t.Fatalf("an empty dataset splits %d ways", empty.MaxSplits())
	}
}
