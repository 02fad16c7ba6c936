package exec

import (
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func testRecord(t *testing.T, mem memory.Allocator, n int) arrow.RecordBatch {
	t.Helper()
	rows := make([]Row, n)
	for i := range rows {
		var name any = "x"
		if i%3 == 0 {
			name = nil
		}
		rows[i] = Row{int64(i), name}
	}
	rec, err := EncodeRows(mem, testSchema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// A columnar batch decodes its rows once, on first access, counts that once
// process-wide, and answers Len without decoding.
func TestBatchLazyMaterialisation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := NewColumnarBatch(testRecord(t, mem, 10))
	defer b.Release()
	before := Global.BatchesMaterialized.Load()
	rowsBefore := Global.RowsMaterialized.Load()
	if b.Len() != 10 || !b.IsColumnar() || b.Materialized() {
		t.Fatalf("fresh batch: len %d columnar %v materialised %v", b.Len(), b.IsColumnar(), b.Materialized())
	}
	if Global.BatchesMaterialized.Load() != before {
		t.Fatal("Len decoded the batch")
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows := b.Rows()
			if len(rows) != 10 || rows[4][0] != int64(4) || rows[3][1] != nil || rows[4][1] != "x" {
				t.Errorf("decoded rows wrong: %v", rows[:5])
			}
		}()
	}
	wg.Wait()
	if got := Global.BatchesMaterialized.Load() - before; got != 1 {
		t.Fatalf("materialised %d times, want once", got)
	}
	if got := Global.RowsMaterialized.Load() - rowsBefore; got != 10 {
		t.Fatalf("rows materialised %d, want 10", got)
	}
	if !b.Materialized() {
		t.Fatal("Materialized() false after decoding")
	}
}

// A row batch behaves as if Arrow did not exist: no record, no counting.
func TestRowBatchNeverCounts(t *testing.T) {
	before := Global.BatchesMaterialized.Load()
	b := NewRowBatch(testSchema, []Row{{int64(1), "a"}, {int64(2), nil}})
	defer b.Release()
	if b.IsColumnar() || b.Record() != nil || b.Len() != 2 || len(b.Rows()) != 2 || b.Materialized() {
		t.Fatal("row batch misbehaves")
	}
	if Global.BatchesMaterialized.Load() != before {
		t.Fatal("a row batch counted a materialisation")
	}
}

// Retain/Release: the record is released with the last reference.
func TestBatchReferenceCounting(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b := NewColumnarBatch(testRecord(t, mem, 5))
	b.Retain()
	b.Release()
	if mem.CurrentAlloc() == 0 {
		t.Fatal("record released while a reference remained")
	}
	b.Release()
	mem.AssertSize(t, 0)
}

// Encoding rows and decoding them again is the identity, for every type the
// row form documents.
func TestRowRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem, 7)
	defer rec.Release()
	rows := DecodeRows(rec)
	again, err := EncodeRows(mem, testSchema, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if !arrowEqual(rec, again) {
		t.Fatal("round trip changed the record")
	}
	if _, err := EncodeRows(mem, testSchema, []Row{{"not an int", nil}}); err == nil {
		t.Fatal("a mistyped value was accepted")
	}
}

func arrowEqual(a, b arrow.RecordBatch) bool {
	if a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols() {
		return false
	}
	for c := 0; c < int(a.NumCols()); c++ {
		for i := 0; i < int(a.NumRows()); i++ {
			if Value(a.Column(c), i) != Value(b.Column(c), i) {
				return false
			}
		}
	}
	return true
}

func TestDamper(t *testing.T) {
	d := NewOutputDamper()
	for i := 0; i < 3; i++ {
		if !d.Try() {
			t.Fatal("backed off too early")
		}
		d.Observe(10)
	}
	d.Try()
	d.Observe(10) // the fourth small emission
	if !d.BackedOff() {
		t.Fatal("did not back off after 4 small emissions")
	}
	tries := 0
	for i := 0; i < 128; i++ {
		if d.Try() {
			tries++
		}
	}
	if tries != 2 {
		t.Fatalf("re-probed %d times in 128 emissions, want every 64th (2)", tries)
	}
	d.Observe(1000) // a probe that paid
	if d.BackedOff() || !d.Try() {
		t.Fatal("a large emission did not restore columnar output")
	}
}

// INTERVAL columns carry arrow.MonthDayNanoInterval in row form: encoded
// and decoded without losing months, days or nanoseconds (1 month and 30
// days stay apart), NULL as nil.
func TestIntervalRowRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "iv", Type: arrow.FixedWidthTypes.MonthDayNanoInterval, Nullable: true}}, nil)
	rows := []Row{{arrow.MonthDayNanoInterval{Months: 1}}, {arrow.MonthDayNanoInterval{Days: 30}}, {nil},
		{arrow.MonthDayNanoInterval{Months: -2, Days: 3, Nanoseconds: -4}}}
	rec, err := EncodeRows(mem, schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	back := DecodeRows(rec)
	for i := range rows {
		if back[i][0] != rows[i][0] {
			t.Errorf("row %d: %#v, want %#v", i, back[i][0], rows[i][0])
		}
	}
	if _, err := EncodeRows(mem, schema, []Row{{int64(1)}}); err == nil {
		t.Error("a BIGINT in an INTERVAL column must be refused")
	}
}
