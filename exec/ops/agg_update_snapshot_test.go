package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// snapAggs are aggregates of every accumulator kind over snapSchema:
// COUNT, SUM and AVG over integers, floats and decimals (AVG over
// integers keeps a 128-bit sum), MIN/MAX over strings, integers, floats,
// timestamps and decimals, the variance family, bool_and/bool_or and
// DISTINCT ones.
func snapAggs() ([]AggSpec, []arrow.Field) {
	i64, f64, str := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String
	dec := snapSchema.Field(6).Type
	specs := []AggSpec{
		{Func: "count_star", Col: -1, Type: i64},
		{Func: "count", Col: 1, Type: i64},
		{Func: "sum", Col: 2, Type: i64},
		{Func: "sum", Col: 3, Type: f64},
		{Func: "sum", Col: 6, Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}},
		{Func: "avg", Col: 2, Type: f64},
		{Func: "avg", Col: 3, Type: f64},
		{Func: "avg", Col: 6, Type: &arrow.Decimal128Type{Precision: 38, Scale: 6}},
		{Func: "min", Col: 1, Type: str},
		{Func: "max", Col: 2, Type: i64},
		{Func: "min", Col: 3, Type: f64},
		{Func: "max", Col: 4, Type: snapSchema.Field(4).Type},
		{Func: "max", Col: 6, Type: dec},
		{Func: "var_samp", Col: 3, Type: f64},
		{Func: "stddev_pop", Col: 2, Type: f64},
		{Func: "bool_and", Col: 5, Type: arrow.FixedWidthTypes.Boolean},
		{Func: "bool_or", Col: 5, Type: arrow.FixedWidthTypes.Boolean},
		{Func: "count", Distinct: true, Col: 1, Type: i64},
		{Func: "sum", Distinct: true, Col: 2, Type: i64},
		{Func: "max", Distinct: true, Col: 1, Type: str},
	}
	fields := make([]arrow.Field, len(specs))
	for i, s := range specs {
		fields[i] = arrow.Field{Name: s.Func + string(rune('a'+i)), Type: s.Type, Nullable: true}
	}
	return specs, fields
}

func updatingAggCase(name string, groupCols []int) snapCase {
	specs, aggFields := snapAggs()
	var fs []arrow.Field
	for _, c := range groupCols {
		fs = append(fs, snapSchema.Field(c))
	}
	fs = append(append(fs, aggFields...), arrow.Field{Name: "op", Type: arrow.BinaryTypes.String})
	out := arrow.NewSchema(fs, nil)
	return snapCase{name: name, schemas: []*arrow.Schema{snapSchema}, ordered: true,
		newOp: func(mem memory.Allocator) exec.Operator { return NewUpdatingAggregate(groupCols, specs, out, mem) }}
}

// An updating aggregate restored from a snapshot emits the changelog the
// one that never stopped emits: every accumulator kind, keyed by an
// integer, a string, two columns (the general key encoding) or nothing.
func TestUpdatingAggregateSnapshotResumes(t *testing.T) {
	for _, c := range []snapCase{
		updatingAggCase("by k", []int{0}),
		updatingAggCase("by s", []int{1}),
		updatingAggCase("by k, s, b", []int{0, 1, 5}),
		updatingAggCase("no keys", nil),
	} {
		t.Run(c.name, func(t *testing.T) { checkSeeds(t, c, 1, nil) })
	}
}

// A snapshot restored into an aggregate of another shape fails with an
// error that says so.
func TestUpdatingAggregateSnapshotMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := updatingAggCase("by k", []int{0})
	other := updatingAggCase("by s", []int{1})
	g := &snapGen{rng: snapRand(7), now: 1_700_000_000_000, keys: 5}
	steps := g.steps(10, 1, nil)
	from := c.newOp(mem)
	runSteps(t, mem, c, from, steps[:len(steps)-1])
	into := other.newOp(mem)
	restoreMustFail(t, mem, from.(exec.Snapshotter), into.(exec.Snapshotter), "columns")
	into.Close()
	// Another operator kind.
	wm := NewWatermarkAssigner(4, 0, mem)
	restoreMustFail(t, mem, from.(exec.Snapshotter), wm, "updating_aggregate")
	from.Close()
}

// The one group of an aggregate without GROUP BY exists from the first
// batch on, even an empty one, but emits nothing until a row comes: a
// restore must not take its first row for an update (-U of a row never
// emitted).
func TestUpdatingAggregateSnapshotBeforeFirstRow(t *testing.T) {
	c := updatingAggCase("no keys", nil)
	g := &snapGen{rng: snapRand(3), now: 1_700_000_000_000, keys: 4}
	steps := []snapStep{
		{rows: nil, columnar: true},
		{rows: []exec.Row{g.row(), g.row()}},
		{rows: []exec.Row{g.row()}, columnar: true},
		{finish: true},
	}
	checkCuts(t, c, steps, []int{1, 2})
}

// A (bounded) hash aggregate restored mid-input gives the result and the
// held watermark the uninterrupted one gives at the end.
func TestHashAggregateSnapshotResumes(t *testing.T) {
	specs, aggFields := snapAggs()
	for _, tc := range []struct {
		name   string
		groups []int
	}{{"by k, s", []int{0, 1}}, {"no keys", nil}} {
		var fs []arrow.Field
		for _, c := range tc.groups {
			fs = append(fs, snapSchema.Field(c))
		}
		out := arrow.NewSchema(append(fs, aggFields...), nil)
		c := snapCase{name: tc.name, schemas: []*arrow.Schema{snapSchema}, ordered: true, columnarOut: true,
			newOp: func(mem memory.Allocator) exec.Operator { return NewHashAggregate(tc.groups, specs, out, mem) }}
		t.Run(tc.name, func(t *testing.T) { checkSeeds(t, c, 1, nil) })
	}
}
