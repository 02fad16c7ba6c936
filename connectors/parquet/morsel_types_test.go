package parquet

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// Shared-range scans against whole-file scans over every column type the
// scan reads, including BOOLEAN pages (bit-packed: a range that starts
// inside one must start at the right bit), files with their own offset
// index, several files, fixtures written by other tools and zero-column
// scans. The first versions of these tests came from a review, which found
// BOOLEAN values shifted by up to 7 rows after a mid-page seek.

// typedIDBase is added to writeTyped's ids.
var typedIDBase int64

// writeTyped writes rows of typedSchema in row groups of group rows with
// small pages (dictionary off unless extra turns it on).
var typedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "bn", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "d", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

func writeTyped(t *testing.T, path string, rows, group int, version pq.DataPageVersion, int96 bool, extra ...pq.WriterProperty) {
	t.Helper()
	mem := memory.NewGoAllocator()
	bld := array.NewRecordBuilder(mem, typedSchema)
	defer bld.Release()
	for i := 0; i < rows; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i) + typedIDBase)
		bld.Field(1).(*array.BooleanBuilder).Append(i%3 == 0)
		if i%4 == 1 {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.BooleanBuilder).Append(i%5 < 2)
		}
		if i%6 == 2 {
			bld.Field(3).AppendNull()
			bld.Field(4).AppendNull()
			bld.Field(5).AppendNull()
			bld.Field(6).AppendNull()
		} else {
			bld.Field(3).(*array.Float32Builder).Append(float32(i) / 4)
			bld.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * 101))
			bld.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1000001))
			bld.Field(6).(*array.Int32Builder).Append(int32(i * 3))
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	opts := append([]pq.WriterProperty{
		pq.WithDictionaryDefault(false),
		pq.WithDataPageSize(256),
		pq.WithBatchSize(50),
		pq.WithMaxRowGroupLength(int64(group)),
		pq.WithDataPageVersion(version)}, extra...)
	aprops := pqarrow.DefaultWriterProps()
	if int96 {
		aprops = pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true))
	}
	writeRecordFile(t, path, rec, pq.NewWriterProperties(opts...), aprops)
}

// compareShared scans path whole and in shared ranges of parts parts and
// compares the rows as sorted sets.
func compareShared(t *testing.T, path string, cols []int, parts int) {
	t.Helper()
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	c, _ := scan(t, mem, path, nil, connectors.ScanSpec{Columns: cols})
	want := c.rows()
	c.release()
	tbl := openWith(t, path, mem)
	rows, srcs := runShared(t, tbl, parts, cols, nil)
	var got []exec.Row
	var ranges int64
	for i, r := range rows {
		got = append(got, r...)
		ranges += srcs[i].ranges.Load()
	}
	sortByText(got)
	sortByText(want)
	if len(got) != len(want) {
		t.Fatalf("%s, %d parts: %d rows, want %d", path, parts, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			if bad < 3 {
				t.Errorf("%s, %d parts: row %d\n got %v\nwant %v", path, parts, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s, %d parts: %d rows differ (%d ranges)", path, parts, bad, ranges)
	}
}

func sortByText(rows []exec.Row) {
	keys := make([]string, len(rows))
	idx := make([]int, len(rows))
	for i, r := range rows {
		keys[i], idx[i] = fmt.Sprint(r), i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	out := make([]exec.Row, len(rows))
	for i, j := range idx {
		out[i] = rows[j]
	}
	copy(rows, out)
}

func TestSharedRangesTypes(t *testing.T) {
	setMorselRows(t, 100)
	for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
		for _, int96 := range []bool{false, true} {
			for _, dict := range []bool{false, true} {
				path := filepath.Join(t.TempDir(), "t.parquet")
				writeTyped(t, path, 3500, 1000, version, int96, pq.WithDictionaryDefault(dict))
				for _, parts := range []int{2, 3, 4} {
					compareShared(t, path, nil, parts)
				}
			}
		}
	}
}

// TestSharedRangesOwnOffsetIndex: files that carry an offset index.
func TestSharedRangesOwnOffsetIndex(t *testing.T) {
	setMorselRows(t, 100)
	for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
		path := filepath.Join(t.TempDir(), "t.parquet")
		writeTyped(t, path, 3500, 1000, version, false, pq.WithPageIndexEnabled(true))
		for _, parts := range []int{2, 3, 4} {
			compareShared(t, path, nil, parts)
		}
	}
}

// TestSharedRangesFixtures: files written by pyarrow-like arrow-go and by
// DuckDB (testdata/parquet), BOOLEAN columns included, and a zero-column
// scan (COUNT(*)).
func TestSharedRangesFixtures(t *testing.T) {
	setMorselRows(t, 50)
	for _, f := range []string{"arrow_int96.parquet", "arrow_types.parquet", "duckdb_groups.parquet", "duckdb_types.parquet"} {
		for _, parts := range []int{2, 3, 4} {
			compareShared(t, fixtures+f, nil, parts)
			compareShared(t, fixtures+f, []int{}, parts)
		}
	}
}

// TestSharedRangesFiles: a directory and a glob of files of different row
// group sizes (one empty): the queue crosses files.
func TestSharedRangesFiles(t *testing.T) {
	setMorselRows(t, 100)
	dir := t.TempDir()
	writeTyped(t, filepath.Join(dir, "a.parquet"), 3500, 1000, pq.DataPageV1, false)
	writeTyped(t, filepath.Join(dir, "b.parquet"), 150, 1000, pq.DataPageV2, true)
	writeTyped(t, filepath.Join(dir, "c.parquet"), 2000, 700, pq.DataPageV1, true, pq.WithDictionaryDefault(true))
	writeTyped(t, filepath.Join(dir, "d.parquet"), 0, 1000, pq.DataPageV1, true)
	for _, parts := range []int{2, 3, 4, 7} {
		compareShared(t, dir, []int{0, 1, 3, 4, 5, 6}, parts)
		compareShared(t, filepath.Join(dir, "*.parquet"), []int{6, 2, 0}, parts)
	}
}

// TestSharedRangesDatasetListedTwice: the parts of one shared scan of a
// Dataset open at different times, and another statement lists the
// directory between them (a file was added). Every part reads through the
// plan of the part that built the queue, so the rows are that listing's,
// each once (a review found part 1 reading its own, newer listing).
func TestSharedRangesDatasetListedTwice(t *testing.T) {
	setMorselRows(t, 100)
	dir := t.TempDir()
	writeTyped(t, filepath.Join(dir, "b.parquet"), 1000, 1000, pq.DataPageV1, false)
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	d, err := OpenDataset(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.WithAllocator(mem)
	_ = d.MaxSplits()
	share := &connectors.Share{}
	spec := func(p int) connectors.ScanSpec {
		return connectors.ScanSpec{Columns: []int{0}, Split: p, Splits: 2, Share: share}
	}
	s0, err := d.Open(spec(0))
	if err != nil {
		t.Fatal(err)
	}
	// Another statement adds a file that sorts first and lists again.
	typedIDBase = 1_000_000
	writeTyped(t, filepath.Join(dir, "a.parquet"), 1000, 1000, pq.DataPageV1, false)
	typedIDBase = 0
	if _, err := d.Snapshot(); err != nil {
		t.Fatal(err)
	}
	s1, err := d.Open(spec(1))
	if err != nil {
		t.Fatal(err)
	}
	// Part 0 builds the queue (it runs first), part 1 reads its run.
	s0.(*Source).queue(share)
	var ids []int64
	for _, s := range []exec.Source{s1, s0} {
		c := &collector{}
		if err := s.Run(context.Background(), c); err != nil {
			c.release()
			t.Fatal(err)
		}
		for _, r := range c.rows() {
			ids = append(ids, r[0].(int64))
		}
		c.release()
	}
	seen := map[int64]int{}
	for _, id := range ids {
		seen[id]++
	}
	for id, n := range seen {
		if n != 1 || id >= 1_000_000 {
			t.Fatalf("id %d read %d times (%d rows read, the snapshot part 0 planned has 1000)", id, n, len(ids))
		}
	}
	if len(ids) != 1000 {
		t.Fatalf("%d rows read, want 1000", len(ids))
	}
}
