package memory

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// makeRecord builds rows id = lo..hi-1 of testSchema: s is "s<id>" (NULL
// when id%5 == 0), f is id/2.
func makeRecord(mem memory.Allocator, lo, hi int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	for id := lo; id < hi; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		if id%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("s%d", id))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(id) / 2)
	}
	return b.NewRecordBatch()
}

// wantRow is row id as scan renders it (all three columns).
func wantRow(id int64) string {
	s := "NULL"
	if id%5 != 0 {
		s = fmt.Sprintf("s%d", id)
	}
	return fmt.Sprintf("%d|%s|%g", id, s, float64(id)/2)
}

// scanned is what a scan emitted.
type scanned struct {
	rows     []string
	batches  int
	columnar bool
	wms      []int64
}

type emitter struct{ got *scanned }

func (e emitter) Emit(_ context.Context, b *exec.Batch) error {
	e.got.batches++
	e.got.columnar = e.got.columnar || b.IsColumnar()
	rec := b.Record()
	for i := 0; i < int(rec.NumRows()); i++ {
		var cells []string
		for c := 0; c < int(rec.NumCols()); c++ {
			if rec.Column(c).IsNull(i) {
				cells = append(cells, "NULL")
			} else {
				cells = append(cells, rec.Column(c).ValueStr(i))
			}
		}
		e.got.rows = append(e.got.rows, strings.Join(cells, "|"))
	}
	return nil
}

func (e emitter) EmitWatermark(_ context.Context, wm int64) error {
	e.got.wms = append(e.got.wms, wm)
	return nil
}

func scan(t *testing.T, tbl *Table, spec connectors.ScanSpec) scanned {
	t.Helper()
	src, err := tbl.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	var got scanned
	if err := src.Run(context.Background(), emitter{&got}); err != nil {
		t.Fatal(err)
	}
	return got
}

func checked(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func appendRange(t *testing.T, tbl *Table, mem memory.Allocator, lo, hi int64) {
	t.Helper()
	rec := makeRecord(mem, lo, hi)
	defer rec.Release()
	if err := tbl.Append(rec); err != nil {
		t.Fatal(err)
	}
}

func TestScanProjectsColumns(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()
	appendRange(t, tbl, mem, 0, 7)

	got := scan(t, tbl, connectors.ScanSpec{Columns: []int{2, 0}})
	if !got.columnar {
		t.Error("the scan emitted row batches; it must be born columnar")
	}
	if len(got.rows) != 7 {
		t.Fatalf("%d rows, want 7", len(got.rows))
	}
	for i, r := range got.rows {
		if want := fmt.Sprintf("%g|%d", float64(i)/2, i); r != want {
			t.Errorf("row %d = %q, want %q", i, r, want)
		}
	}
	if len(got.wms) != 1 || got.wms[0] != exec.MaxWatermark {
		t.Errorf("watermarks %v, want the final one", got.wms)
	}
	src, err := tbl.NewSource(connectors.ScanSpec{Columns: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if s := src.Schema(); s.NumFields() != 1 || s.Field(0).Name != "s" {
		t.Errorf("projected schema %v", s)
	}
	if err := src.Run(context.Background(), emitter{&scanned{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Open(connectors.ScanSpec{Columns: []int{3}}); err == nil {
		t.Error("a column index out of range was accepted")
	}
}

// The parts of a split scan are disjoint and together the table, whatever
// the stored batches' boundaries and the batch size.
func TestSplitsCoverTheTable(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()
	// Batches of CoalesceRows rows are kept apart: three stored batches.
	appendRange(t, tbl, mem, 0, CoalesceRows)
	appendRange(t, tbl, mem, CoalesceRows, 2*CoalesceRows)
	appendRange(t, tbl, mem, 2*CoalesceRows, 2*CoalesceRows+777)
	total := int64(2*CoalesceRows + 777)
	if n := tbl.NumRows(); n != total {
		t.Fatalf("NumRows %d, want %d", n, total)
	}
	if m := tbl.MaxSplits(); m != int(total/SplitRows) {
		t.Errorf("MaxSplits %d, want %d", m, total/SplitRows)
	}
	for _, splits := range []int{1, 2, 3, 7} {
		for _, bs := range []int{0, 1000, 5000} {
			seen := make([]bool, total)
			for p := 0; p < splits; p++ {
				spec := connectors.ScanSpec{BatchSize: bs}
				if splits > 1 {
					spec.Split, spec.Splits = p, splits
				}
				got := scan(t, tbl, spec)
				if len(got.rows) == 0 {
					t.Fatalf("splits %d: part %d read nothing", splits, p)
				}
				limit := bs
				if limit == 0 {
					limit = DefaultBatchSize
				}
				if got.batches*limit < len(got.rows) {
					t.Errorf("part %d: %d rows in %d batches of at most %d", p, len(got.rows), got.batches, limit)
				}
				for _, r := range got.rows {
					var id int64
					fmt.Sscanf(r, "%d|", &id)
					if seen[id] {
						t.Fatalf("splits %d: row %d read twice", splits, id)
					}
					seen[id] = true
					if r != wantRow(id) {
						t.Fatalf("row %q, want %q", r, wantRow(id))
					}
				}
			}
			for id, ok := range seen {
				if !ok {
					t.Fatalf("splits %d, batch size %d: row %d not read", splits, bs, id)
				}
			}
		}
	}
}

func TestSmallAppendsCoalesce(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()
	for id := int64(0); id < 100; id++ {
		if err := tbl.AppendRows([]exec.Row{{id, nullableString(id), float64(id) / 2}}); err != nil {
			t.Fatal(err)
		}
	}
	got := scan(t, tbl, connectors.ScanSpec{})
	if got.batches != 1 {
		t.Errorf("100 one-row appends scan as %d batches, want 1", got.batches)
	}
	for i, r := range got.rows {
		if r != wantRow(int64(i)) {
			t.Fatalf("row %d = %q, want %q", i, r, wantRow(int64(i)))
		}
	}
	if len(got.rows) != 100 {
		t.Fatalf("%d rows, want 100", len(got.rows))
	}
}

func nullableString(id int64) any {
	if id%5 == 0 {
		return nil
	}
	return fmt.Sprintf("s%d", id)
}

func TestAppendChecksTheSchema(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()

	// Other names and nullability are fine: columns match by position.
	renamed := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "z", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rec := makeRecord(mem, 0, 3)
	relabelled := array.NewRecordBatch(renamed, rec.Columns(), rec.NumRows())
	rec.Release()
	if err := tbl.Append(relabelled); err != nil {
		t.Fatalf("a record with other column names: %v", err)
	}
	relabelled.Release()
	if got := scan(t, tbl, connectors.ScanSpec{}); len(got.rows) != 3 || got.rows[1] != wantRow(1) {
		t.Errorf("rows %v", got.rows)
	}

	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{1, 2}, nil)
	i32 := ib.NewArray()
	ib.Release()
	defer i32.Release()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a", "b"}, nil)
	str := sb.NewArray()
	sb.Release()
	defer str.Release()
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{1, 2}, nil)
	f64 := fb.NewArray()
	fb.Release()
	defer f64.Release()
	nb := array.NewInt64Builder(mem)
	nb.AppendValues([]int64{1, 0}, []bool{true, false})
	withNull := nb.NewArray()
	nb.Release()
	defer withNull.Release()

	bad := []struct {
		name string
		cols []arrow.Array
		want string
	}{
		{"too few columns", []arrow.Array{withNull, str}, "2 columns, the table 3"},
		{"a wrong type", []arrow.Array{i32, str, f64}, "column 1 ('id') is int32"},
		{"NULL in NOT NULL", []arrow.Array{withNull, str, f64}, "NOT NULL"},
	}
	for _, c := range bad {
		fields := make([]arrow.Field, len(c.cols))
		for i, a := range c.cols {
			fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: a.DataType(), Nullable: true}
		}
		r := array.NewRecordBatch(arrow.NewSchema(fields, nil), c.cols, 2)
		err := tbl.Append(r)
		r.Release()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if n := tbl.NumRows(); n != 3 {
		t.Errorf("the refused appends changed the table: %d rows", n)
	}
	if err := tbl.AppendRows([]exec.Row{{"not an int", nil, nil}}); err == nil {
		t.Error("AppendRows took a string for a BIGINT")
	}
}

// A scan reads the snapshot it was opened on: rows appended or truncated
// after Open are not seen, and the memory is kept until the scan is done.
func TestScanSeesItsSnapshot(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	tbl := NewTable(testSchema, mem)
	appendRange(t, tbl, mem, 0, 10)
	before, err := tbl.Open(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, tbl, mem, 10, 20)
	if err := tbl.Truncate(); err != nil {
		t.Fatal(err)
	}
	appendRange(t, tbl, mem, 100, 103)
	tbl.Close()
	if mem.CurrentAlloc() == 0 {
		t.Fatal("the open scan's snapshot was freed by Close")
	}
	var got scanned
	if err := before.Run(context.Background(), emitter{&got}); err != nil {
		t.Fatal(err)
	}
	if len(got.rows) != 10 || got.rows[9] != wantRow(9) {
		t.Errorf("the scan opened first read %v", got.rows)
	}
	mem.AssertSize(t, 0)
	if _, err := tbl.Open(connectors.ScanSpec{}); err == nil {
		t.Error("a dropped table opened a scan")
	}
	if err := tbl.AppendRows([]exec.Row{{int64(1), nil, nil}}); err == nil {
		t.Error("a dropped table took rows")
	}
	if err := before.Run(context.Background(), emitter{&got}); err == nil {
		t.Error("a source ran twice")
	}
}

// A source that is opened but never run (EXPLAIN, a plan that fails after
// opening its scans) lets its snapshot go when it is collected.
func TestUnrunSourceIsReleased(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	tbl := NewTable(testSchema, mem)
	appendRange(t, tbl, mem, 0, 10)
	func() {
		if _, err := tbl.Open(connectors.ScanSpec{}); err != nil {
			t.Fatal(err)
		}
	}()
	tbl.Close()
	// Cleanups run on their own goroutine after a collection.
	for i := 0; i < 200 && mem.CurrentAlloc() != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	mem.AssertSize(t, 0)
}

// Readers scanning while a writer appends each see a whole snapshot: a
// prefix of the appended rows that ends at an append's boundary.
func TestConcurrentReadAndAppend(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()
	const appends, per = 50, 37
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := int64(0); k < appends; k++ {
			rec := makeRecord(mem, k*per, (k+1)*per)
			err := tbl.Append(rec)
			rec.Release()
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				src, err := tbl.Open(connectors.ScanSpec{Columns: []int{0}, Split: i % 2, Splits: 2})
				if err != nil {
					errs <- err
					return
				}
				var got scanned
				if err := src.Run(context.Background(), emitter{&got}); err != nil {
					errs <- err
					return
				}
				if err := contiguous(got.rows); err != nil {
					errs <- err
					return
				}
				whole, err := tbl.Open(connectors.ScanSpec{Columns: []int{0}})
				if err != nil {
					errs <- err
					return
				}
				got = scanned{}
				if err := whole.Run(context.Background(), emitter{&got}); err != nil {
					errs <- err
					return
				}
				if len(got.rows)%per != 0 {
					errs <- fmt.Errorf("a scan saw %d rows: not a whole number of appends", len(got.rows))
					return
				}
				if err := contiguous(got.rows); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := tbl.NumRows(); n != appends*per {
		t.Errorf("NumRows %d, want %d", n, appends*per)
	}
}

// contiguous checks that rows are consecutive ids.
func contiguous(rows []string) error {
	var prev int64 = -1
	for i, r := range rows {
		var id int64
		fmt.Sscanf(r, "%d", &id)
		if i > 0 && id != prev+1 {
			return fmt.Errorf("row %d after row %d", id, prev)
		}
		prev = id
	}
	return nil
}

func TestFactory(t *testing.T) {
	f, ok := connectors.Lookup("memory")
	if !ok {
		t.Fatal("the memory connector is not registered")
	}
	tbl, err := f(map[string]string{"connector": "memory"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.(*Table).Close()
	if !tbl.Bounded() || tbl.Schema() != testSchema || tbl.Describe() != "memory (0 rows)" {
		t.Errorf("table %v %v %q", tbl.Bounded(), tbl.Schema(), tbl.Describe())
	}
	if _, err := f(map[string]string{"connector": "memory"}, nil); err == nil {
		t.Error("a memory table without columns was made")
	}
	if _, err := f(map[string]string{"connector": "memory", "path": "x"}, testSchema); err == nil {
		t.Error("an unknown option was accepted")
	}
}
