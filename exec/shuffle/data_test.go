package shuffle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// allTypes is a schema with one column of every key type the typed hash
// loops cover, plus a struct (the generic path) and a sequence column
// (seq, never a key) that tells rows apart when checking order.
var allTypes = arrow.NewSchema([]arrow.Field{
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true},
	), Nullable: true},
	{Name: "iv", Type: arrow.FixedWidthTypes.MonthDayNanoInterval, Nullable: true},
	{Name: "tm", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
	{Name: "tm3", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
}, nil)

// keyTypeCols are the key columns of allTypes (everything but seq).
var keyTypeCols = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}

// sameMonth are three spellings of one interval (= says they are equal).
var sameMonth = []arrow.MonthDayNanoInterval{{Months: 1}, {Days: 30}, {Nanoseconds: 720 * 3600e9}}

// genRows makes n rows of allTypes with seq = first..first+n-1. Values come
// from small domains so keys repeat; nullPct of the key cells are NULL;
// floats include -0.0, 0.0 and NaN.
func genRows(rng *rand.Rand, first, n, domain, nullPct int) []exec.Row {
	rows := make([]exec.Row, n)
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), 1.5, -2.25, 1e300}
	for i := range rows {
		k := rng.IntN(domain)
		r := exec.Row{
			int64(first + i),
			int64(k*7919 - 500),
			int32(k - 3),
			floats[k%len(floats)] + float64(k/len(floats)),
			float32(floats[k%len(floats)]),
			k%2 == 0,
			decimal128.New(int64(k), uint64(k)*0x9e3779b97f4a7c15),
			strings.Repeat("k", k%5) + fmt.Sprint(k),
			[]byte{byte(k), byte(k >> 8), 0},
			arrow.Timestamp(int64(k) * 1_000_003),
			arrow.Date32(k),
			exec.Row{int64(k), fmt.Sprint("y", k%3)},
			arrow.MonthDayNanoInterval{Days: int32(k)},
			arrow.Time64(int64(k) * 1_000_003 % 86400e6),
			arrow.Time64(int64(k) * 1009 % 86400e3),
		}
		if k%4 < 3 {
			r[12] = sameMonth[k%4]
		}
		if k%3 == 0 {
			r[11].(exec.Row)[1] = nil
		}
		for c := 1; c < len(r); c++ {
			if nullPct > 0 && rng.IntN(100) < nullPct {
				r[c] = nil
			}
		}
		rows[i] = r
	}
	return rows
}

func encode(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows []exec.Row) arrow.RecordBatch {
	t.Helper()
	rec, err := exec.EncodeRows(mem, schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// refTarget is the routing rule written out independently of TargetOf:
// the key group is the hash modulo 128, and subtask t owns the key groups
// [t*128/targets, (t+1)*128/targets) (rounded up), as in Flink's
// KeyGroupRangeAssignment.
func refTarget(h uint64, targets int) int {
	group := int(h & 127)
	for t := 0; t < targets; t++ {
		start := (t*128 + targets - 1) / targets
		end := ((t+1)*128 + targets - 1) / targets
		if group >= start && group < end {
			return t
		}
	}
	panic("no target owns the group")
}

// refSplit routes decoded rows by the row path's hash and the independent
// routing rule: the reference a split is compared against.
func refSplit(rows []exec.Row, keyCols []int, targets int) [][]exec.Row {
	out := make([][]exec.Row, targets)
	for _, r := range rows {
		t := refTarget(HashRow(r, keyCols), targets)
		out[t] = append(out[t], r)
	}
	return out
}

// rowString prints a row so that NaN equals NaN and -0 differs from 0.
func rowString(r exec.Row) string { return fmt.Sprintf("%v", []any(r)) }

func rowsString(rows []exec.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowString(r)
	}
	return out
}

func newMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}
