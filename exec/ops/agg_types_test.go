package ops

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// AVG over integers is DOUBLE (PostgreSQL gives numeric, DuckDB DOUBLE):
// AVG(1, 2) is 1.5, never the truncated 1, on every path, with NULLs; the
// sum behind it is 128-bit, so two MaxInt64 values average without
// overflowing. Expected means are computed here independently.
func TestAvgOverIntegersIsDouble(t *testing.T) {
	specs := []AggSpec{{Func: "avg", Col: 2, Type: f64, Text: "AVG(v)"}}
	out := aggSchema(SampleSchema, []int{0}, specs)
	runCase(t, opCase{
		name:  "avg-int",
		newOp: func(mem memory.Allocator) exec.Operator { return NewHashAggregate([]int{0}, specs, out, mem) },
		inputs: func(nulls bool) []input {
			rows := []exec.Row{
				{int64(1), "a", int64(1), 0.0, nil}, {int64(1), "a", int64(2), 0.0, nil}, // 1.5
				{int64(2), "a", int64(-1), 0.0, nil}, {int64(2), "a", int64(-2), 0.0, nil}, // -1.5
				{int64(3), "a", int64(math.MaxInt64), 0.0, nil}, {int64(3), "a", int64(math.MaxInt64), 0.0, nil},
				{int64(4), "a", int64(129499), 0.0, nil}, {int64(4), "a", int64(129500), 0.0, nil}, {int64(4), "a", int64(129498), 0.0, nil},
				{int64(5), "a", int64(math.MinInt64), 0.0, nil}, {int64(5), "a", int64(-1), 0.0, nil},
			}
			if nulls {
				rows = append(rows, exec.Row{int64(1), "a", nil, 0.0, nil}, exec.Row{int64(6), "a", nil, 0.0, nil})
			}
			return []input{{SampleSchema, rows}}
		},
		want: func(ins []input) []exec.Row {
			rows := []exec.Row{{int64(1), 1.5}, {int64(2), -1.5}, {int64(3), float64(math.MaxInt64)},
				{int64(4), 129499.0}, {int64(5), -4611686018427387904.5}}
			if len(ins[0].rows) > 11 {
				rows = append(rows, exec.Row{int64(6), nil})
			}
			return rows
		},
	})
	if _, err := newAccumulator(AggSpec{Func: "avg", Col: 2, Type: i64}); err == nil {
		t.Error("AVG into BIGINT (a truncated mean) must be refused")
	}
}

// A BIGINT SUM that leaves int64 fails naming the aggregate as written, on
// the row path, the columnar path with and without NULLs, and the updating
// (changelog) aggregate.
func TestSumOverflowNamesTheAggregate(t *testing.T) {
	specs := []AggSpec{{Func: "sum", Col: 2, Type: i64, Text: "SUM(price)"}}
	const want = "SUM(price) overflowed BIGINT"
	for _, neg := range []bool{false, true} {
		big := int64(math.MaxInt64 - 1)
		step := int64(2)
		if neg {
			big, step = math.MinInt64+1, -2
		}
		for _, nulls := range []bool{false, true} {
			rows := []exec.Row{{int64(1), "a", big, 0.0, nil}, {int64(1), "a", step, 0.0, nil}}
			if nulls {
				rows = append([]exec.Row{{int64(1), "a", nil, 0.0, nil}}, rows...)
			}
			for _, col := range []bool{false, true} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				h := NewHashAggregate([]int{0}, specs, aggSchema(SampleSchema, []int{0}, specs), mem)
				var err error
				for _, b := range makeBatches(t, mem, input{SampleSchema, rows}, len(rows), col) {
					if err == nil {
						_, err = exec.Dispatch(t.Context(), h, col, 0, b, &capture{})
					}
					b.Release()
				}
				if err == nil || err.Error() != want {
					t.Errorf("neg=%v nulls=%v columnar=%v: err = %v, want %q", neg, nulls, col, err, want)
				}
				h.Close()
				mem.AssertSize(t, 0)
			}
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	outU := arrow.NewSchema(append(aggSchema(SampleSchema, []int{0}, specs).Fields(), arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)
	u := NewUpdatingAggregate([]int{0}, specs, outU, mem)
	rows := []exec.Row{{int64(1), "a", int64(math.MaxInt64), 0.0, nil}, {int64(1), "a", int64(1), 0.0, nil}}
	var err error
	for _, b := range makeBatches(t, mem, input{SampleSchema, rows}, 1, false) {
		if err == nil {
			_, err = exec.Dispatch(t.Context(), u, false, 0, b, &capture{})
		}
		b.Release()
	}
	if err == nil || err.Error() != want {
		t.Errorf("updating aggregate: err = %v, want %q", err, want)
	}
	u.Close()
	mem.AssertSize(t, 0)
}
