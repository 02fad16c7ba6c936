package parquet

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// The arrow_*.parquet fixtures are written by arrow-go's own Parquet writer
// (pqarrow): data page v2, zstd, dictionary encoding on every column until
// the dictionary grows too big, small pages (many per row group) and
// several row groups. Regenerate them with
//
//	go test ./connectors/parquet/ -run TestArrowFixture -regen
var regen = flag.Bool("regen", false, "rewrite the arrow-written fixtures in testdata/parquet")

const arrowRows = 1000

// arrowSchema is the fixture's Arrow schema (as written), and arrowRow its
// i-th row in clink's row form (as read back: INT8/16 widen to INT32).
var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "req", Type: arrow.PrimitiveTypes.Int64},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "d9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	{Name: "d18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 4}, Nullable: true},
	{Name: "d38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 10}, Nullable: true},
	{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
}, nil)

func arrowRow(i int) exec.Row {
	n := func(mod int, v any) any {
		if i%mod == 0 {
			return nil
		}
		return v
	}
	i64 := int64(i)
	d38 := decimal128.FromI64(i64 - 500).Mul(decimal128.FromI64(1234567890123456789)).Mul(decimal128.FromI64(1000003))
	return exec.Row{
		i64,
		n(7, i%2 == 0),
		n(11, int32(i%200-100)),
		n(13, int32(i*7%60000-30000)),
		n(17, int32(i*1000003-1200000000)),
		n(19, i64*1000000007-1000000000000),
		n(29, float32(i)*0.25-100),
		n(31, float64(i)*0.125-7),
		n(37, fmt.Sprintf("str_%d", i)),
		n(41, fmt.Sprintf("cat_%d", i%5)),
		n(43, []byte(fmt.Sprintf("blob%d", i))),
		n(47, decimal128.FromI64(i64*12345-6000000)),
		n(53, decimal128.FromI64(i64*123456789012-50000000000000)),
		n(59, d38),
		n(61, arrow.Timestamp(i64*3601001-86400000)),
		n(67, arrow.Timestamp(i64*3601000123-86400000000)),
		n(71, arrow.Timestamp(i64*3601000123457-86400000000000)),
		n(73, arrow.Date32(i*3-200)),
	}
}

// arrowRecord builds the fixture's record. Row values go through
// exec.EncodeRows except for the two narrow integer columns.
func arrowRecord(t *testing.T, mem memory.Allocator, schema *arrow.Schema, row func(int) exec.Row, n int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for i := 0; i < n; i++ {
		for c, v := range row(i) {
			switch b := bld.Field(c).(type) {
			case *array.Int8Builder:
				if v == nil {
					b.AppendNull()
				} else {
					b.Append(int8(v.(int32)))
				}
			case *array.Int16Builder:
				if v == nil {
					b.AppendNull()
				} else {
					b.Append(int16(v.(int32)))
				}
			default:
				if err := exec.AppendValue(b, v); err != nil {
					t.Fatalf("row %d column %d: %v", i, c, err)
				}
			}
		}
	}
	return bld.NewRecordBatch()
}

func writeArrowFixture(t *testing.T, path string, rec arrow.RecordBatch, rowGroup int64, arrowOpts ...pqarrow.WriterOption) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := pq.NewWriterProperties(
		pq.WithDataPageVersion(pq.DataPageV2),
		pq.WithCompression(compress.Codecs.Zstd),
		pq.WithDataPageSize(512),
		pq.WithDictionaryPageSizeLimit(2048),
		pq.WithMaxRowGroupLength(rowGroup),
	)
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, rowGroup, props, pqarrow.NewArrowWriterProperties(arrowOpts...)); err != nil {
		t.Fatal(err)
	}
}

var int96Schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int32},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
}, nil)

func int96Row(i int) exec.Row {
	var ts any = arrow.Timestamp(int64(i-50)*86399123456789 + int64(i))
	if i%9 == 0 {
		ts = nil
	}
	return exec.Row{int32(i), ts}
}

func TestArrowFixture(t *testing.T) {
	if *regen {
		mem := memory.NewGoAllocator()
		rec := arrowRecord(t, mem, arrowSchema, arrowRow, arrowRows)
		writeArrowFixture(t, fixtures+"arrow_types.parquet", rec, 300)
		rec.Release()
		rec = arrowRecord(t, mem, int96Schema, int96Row, 100)
		writeArrowFixture(t, fixtures+"arrow_int96.parquet", rec, 100, pqarrow.WithDeprecatedInt96Timestamps(true))
		rec.Release()
	}
	for _, bs := range []int{1, 3, 64, 299, 300, 8192} {
		t.Run(fmt.Sprint("batch", bs), func(t *testing.T) {
			mem := checkedMem(t)
			defer mem.AssertSize(t, 0)
			c, src := scan(t, mem, fixtures+"arrow_types.parquet", nil, connectors.ScanSpec{BatchSize: bs})
			defer c.release()
			if total, skipped := src.RowGroups(); total != 4 || skipped != 0 {
				t.Errorf("row groups %d/%d skipped, want 0/4", skipped, total)
			}
			for _, b := range c.batches {
				if !b.IsColumnar() || b.Len() > bs {
					t.Fatalf("batch of %d rows (columnar %v), batch size %d", b.Len(), b.IsColumnar(), bs)
				}
			}
			checkRows(t, c.rows(), arrowRow, arrowRows, nil)
			if len(c.wms) != 1 || c.wms[0] != exec.MaxWatermark {
				t.Errorf("watermarks %v, want the final one", c.wms)
			}
		})
	}
}

func TestInt96(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	c, src := scan(t, mem, fixtures+"arrow_int96.parquet", nil, connectors.ScanSpec{BatchSize: 16})
	defer c.release()
	if typ := src.Schema().Field(1).Type; typ.String() != "timestamp[ns]" {
		t.Fatalf("INT96 column type %s, want timestamp[ns]", typ)
	}
	checkRows(t, c.rows(), int96Row, 100, nil)

	// Declared as TIMESTAMP(3): converted to milliseconds (floor).
	decl := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true}}, nil)
	c2, _ := scan(t, mem, fixtures+"arrow_int96.parquet", decl, connectors.ScanSpec{})
	defer c2.release()
	for i, r := range c2.rows() {
		w := int96Row(i)[1]
		if w != nil {
			ns := int64(w.(arrow.Timestamp))
			ms := ns / 1e6
			if ns%1e6 != 0 && ns < 0 {
				ms--
			}
			w = arrow.Timestamp(ms)
		}
		if !reflect.DeepEqual(r[0], w) {
			t.Fatalf("row %d: %v, want %v", i, r[0], w)
		}
	}
}

// checkRows compares rows with want(i) for i in [0, n); cols, when set, picks
// the expected columns (projection).
func checkRows(t *testing.T, rows []exec.Row, want func(int) exec.Row, n int, cols []int) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		w := want(i)
		if cols != nil {
			p := make(exec.Row, len(cols))
			for j, c := range cols {
				p[j] = w[c]
			}
			w = p
		}
		if !reflect.DeepEqual(r, w) {
			for c := range r {
				if !reflect.DeepEqual(r[c], w[c]) {
					t.Fatalf("row %d column %d: got %v (%T), want %v (%T)", i, c, r[c], r[c], w[c], w[c])
				}
			}
			t.Fatalf("row %d: got %v, want %v", i, r, w)
		}
	}
}
