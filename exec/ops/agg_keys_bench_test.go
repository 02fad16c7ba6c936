package ops

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// benchKeyRows is GROUP BY over 2M rows of one key type (card distinct
// keys, spread over the input) with COUNT(*) and SUM(v): the per-row cost
// of the key lookup by type. The (INT, VARCHAR) key repeats the INT's
// pattern with a VARCHAR of its own.
const benchKeyRows = 2 << 20

func benchKeyBatches(b *testing.B, mem memory.Allocator, types []arrow.DataType, card int) ([]*exec.Batch, *arrow.Schema) {
	var fs []arrow.Field
	for i, t := range types {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("k%d", i), Type: t, Nullable: true})
	}
	fs = append(fs, arrow.Field{Name: "v", Type: i64, Nullable: true})
	schema := arrow.NewSchema(fs, nil)
	var out []*exec.Batch
	for start := 0; start < benchKeyRows; start += benchBatch {
		rows := make([]exec.Row, 0, benchBatch)
		for i := start; i < min(start+benchBatch, benchKeyRows); i++ {
			k := (i * 7919) % card
			r := make(exec.Row, 0, len(types)+1)
			for c, t := range types {
				kc := (k >> (c * 3)) // a composite's columns vary differently
				switch t.ID() {
				case arrow.INT32:
					r = append(r, int32(kc))
				case arrow.INT64:
					r = append(r, int64(kc)*1_000_003)
				case arrow.DATE32:
					r = append(r, arrow.Date32(kc))
				case arrow.DECIMAL128:
					r = append(r, decimal128.FromI64(int64(kc)*101))
				case arrow.STRING:
					r = append(r, fmt.Sprintf("key-%07d", kc))
				}
			}
			rows = append(rows, append(r, int64(i%100)))
		}
		rec, err := exec.EncodeRows(mem, schema, rows)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, exec.NewColumnarBatch(rec))
	}
	return out, schema
}

func benchKeyAgg(b *testing.B, card int, types ...arrow.DataType) {
	mem := memory.NewGoAllocator()
	bs, schema := benchKeyBatches(b, mem, types, card)
	defer release(bs)
	groups := make([]int, len(types))
	for i := range groups {
		groups[i] = i
	}
	specs := []AggSpec{{Func: "count_star", Col: -1, Type: i64}, {Func: "sum", Col: len(types), Type: i64}}
	out := aggSchema(schema, groups, specs)
	cpu := cpuTime()
	runBench(b, bs, benchKeyRows, func() exec.Operator {
		h := NewHashAggregate(groups, specs, out, mem)
		h.SetColumnarOutput(true)
		return h
	}, 1)
	// CPU time (every thread, the collector's too) is what other load on
	// the machine disturbs least.
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*benchKeyRows), "cpu-ns/row")
}

var (
	benchInt  = arrow.PrimitiveTypes.Int32
	benchDate = arrow.FixedWidthTypes.Date32
	benchDec  = &arrow.Decimal128Type{Precision: 15, Scale: 2}
)

func BenchmarkGroupByKeyInt(b *testing.B)        { benchKeyAgg(b, 100_000, benchInt) }
func BenchmarkGroupByKeyBigint(b *testing.B)     { benchKeyAgg(b, 100_000, i64) }
func BenchmarkGroupByKeyDate(b *testing.B)       { benchKeyAgg(b, 100_000, benchDate) }
func BenchmarkGroupByKeyDecimal(b *testing.B)    { benchKeyAgg(b, 100_000, benchDec) }
func BenchmarkGroupByKeyVarchar(b *testing.B)    { benchKeyAgg(b, 100_000, str) }
func BenchmarkGroupByKeyIntVarchar(b *testing.B) { benchKeyAgg(b, 100_000, benchInt, str) }

// Every row a new key: the table's growth is most of the work (a final
// aggregate, ClickBench's GROUP BY URL).
func BenchmarkGroupByKeyVarcharUnique(b *testing.B) { benchKeyAgg(b, benchKeyRows, str) }
