package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// Kind is one operator kind with a sample configuration, so a test can walk
// every kind and prove that what Capabilities says (and the planner's gates
// read) is what the operator does.
type Kind struct {
	Name string
	New  func(mem memory.Allocator) exec.Operator
	// Inputs is the sample's number of input ports (0 means one).
	Inputs int
}

// Ports is the sample's number of input ports.
func (k Kind) Ports() int { return max(k.Inputs, 1) }

// SampleSchema is the input schema of the Kinds samples: (k BIGINT, s
// VARCHAR, v BIGINT, f DOUBLE, t TIMESTAMP(3)), all nullable.
var SampleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
}, nil)

// Kinds lists every operator kind of this package (VALUES is a source, not
// an operator, and is not listed); the planner's agreement test adds the
// exchange, and plan's TestEveryCapabilitiesImplementationIsChecked finds
// every operator in the source and fails on one missing here. Samples read
// SampleSchema; the filter keeps every row whose v is not NULL.
func Kinds() []Kind {
	joined := arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), SampleSchema.Fields()...), nil)
	aggOut := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "total", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	return []Kind{
		{"filter", func(mem memory.Allocator) exec.Operator { return NewFilter(sampleNotNull{2}, mem) }, 1},
		{"project", func(mem memory.Allocator) exec.Operator {
			return NewProject([]expr.Expr{sampleCol{0}, sampleCol{2}},
				arrow.NewSchema([]arrow.Field{SampleSchema.Field(0), SampleSchema.Field(2)}, nil), mem)
		}, 1},
		{"limit", func(memory.Allocator) exec.Operator { return NewLimit(-1, 0) }, 1},
		{"union_all", func(memory.Allocator) exec.Operator { return NewUnionAll(2) }, 2},
		{"sort", func(mem memory.Allocator) exec.Operator { return NewSort([]SortKey{{Col: 0}}, mem) }, 1},
		{"top_n", func(mem memory.Allocator) exec.Operator {
			return NewTopN([]SortKey{{Col: 2, Desc: true, NullsFirst: true}}, 5, mem)
		}, 1},
		{"hash_aggregate", func(mem memory.Allocator) exec.Operator {
			return NewHashAggregate([]int{0}, []AggSpec{
				{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64},
				{Func: "sum", Col: 2, Type: arrow.PrimitiveTypes.Int64},
			}, aggOut, mem)
		}, 1},
		{"hash_join", func(mem memory.Allocator) exec.Operator {
			return NewHashJoin(Inner, []int{0}, []int{0}, joined, mem)
		}, 2},
		{"nested_loop_join", func(mem memory.Allocator) exec.Operator {
			return NewNestedLoopJoin(NestedLoopJoinSpec{Type: Inner, Out: joined}, mem)
		}, 2},
		{"stream_join", func(mem memory.Allocator) exec.Operator {
			return NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0},
				LeftOp: -1, RightOp: -1, Out: joined}, mem)
		}, 2},
		{"set_op", func(mem memory.Allocator) exec.Operator {
			return NewSetOp(Intersect, true, SampleSchema, mem)
		}, 2},
		{"watermark_assigner", func(mem memory.Allocator) exec.Operator {
			return NewWatermarkAssigner(4, time.Second, mem)
		}, 1},
		{"window_aggregate", func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(WindowSpec{Kind: Tumble, Size: time.Second}, 4, []int{0},
				[]AggSpec{{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64}}, windowAggOut, mem)
		}, 1},
		{"window_assign", func(mem memory.Allocator) exec.Operator {
			return NewWindowAssign(WindowSpec{Kind: Tumble, Size: time.Second}, 4, windowAssignOut, mem)
		}, 1},
		{"updating_aggregate", func(mem memory.Allocator) exec.Operator {
			return NewUpdatingAggregate([]int{0}, []AggSpec{
				{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64},
				{Func: "sum", Col: 2, Type: arrow.PrimitiveTypes.Int64},
			}, arrow.NewSchema(append(append([]arrow.Field{}, aggOut.Fields()...),
				arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil), mem)
		}, 1},
		{"updating_topn", func(memory.Allocator) exec.Operator {
			return NewUpdatingTopN([]SortKey{{Col: 2, Desc: true, NullsFirst: true}}, 5, 1,
				arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
					arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil))
		}, 1},
		{"stream_rank", func(memory.Allocator) exec.Operator {
			return NewStreamRank(StreamRankSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 2, Desc: true}}, N: 3, RowNumber: true},
				arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
					arrow.Field{Name: "rn", Type: arrow.PrimitiveTypes.Int64},
					arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil))
		}, 1},
		{"stream_dedup_first", func(memory.Allocator) exec.Operator {
			return NewStreamDedupFirst([]int{0}, 4, false, SampleSchema)
		}, 1},
		{"stream_over_aggregate", func(memory.Allocator) exec.Operator {
			return NewStreamOverAgg(StreamOverSpec{PartitionBy: []int{0}, TimeCol: 4, Rows: true, Preceding: 2,
				Funcs: []StreamOverFunc{{Func: "sum", Arg: 2, Type: arrow.PrimitiveTypes.Int64}}},
				arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
					arrow.Field{Name: "s3", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil))
		}, 1},
		{"window_rank", func(mem memory.Allocator) exec.Operator {
			return NewWindowRank(WindowRankSpec{StreamRankSpec: StreamRankSpec{PartitionBy: []int{4, 0},
				OrderBy: []SortKey{{Col: 2, Desc: true}}, N: 2}, EndCol: 4}, SampleSchema, mem)
		}, 1},
		{"window_funcs", func(mem memory.Allocator) exec.Operator {
			return NewWindowFuncs(WindowFuncsSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 4}}, Funcs: []WindowFunc{
				{Func: "row_number"},
				{Func: "sum", Args: []int{2}, Frame: &Frame{Unit: FrameRows,
					Start: FrameBound{Kind: OffsetPreceding, Offset: int64(2)}, End: FrameBound{Kind: CurrentRow}}},
			}}, windowFuncsOut, mem)
		}, 1},
		{"expand", func(mem memory.Allocator) exec.Operator {
			return NewExpand([][]int{{0, 1}, {0}, {}}, []int{0, 1}, expandSampleOut, mem)
		}, 1},
		{"collect", func(memory.Allocator) exec.Operator {
			return NewCollect(func(context.Context, *exec.Batch) error { return nil })
		}, 1},
	}
}

var (
	windowCols = []arrow.Field{
		{Name: "window_start", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "window_end", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "window_time", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	}
	windowAggOut = arrow.NewSchema(append([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, windowCols...), nil)
	windowAssignOut = arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), windowCols...), nil)
	windowFuncsOut  = arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
		arrow.Field{Name: "rn", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "s3", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil)
	expandSampleOut = arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
		arrow.Field{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64}), nil)
)

// sampleCol and sampleNotNull are the two expressions the samples need, so
// the registry does not wait on package expr's constructors. They read
// SampleSchema.

// sampleCol is a column reference.
type sampleCol struct{ col int }

func (c sampleCol) Type() arrow.DataType            { return SampleSchema.Field(c.col).Type }
func (c sampleCol) String() string                  { return SampleSchema.Field(c.col).Name }
func (c sampleCol) ColumnIndex() int                { return c.col }
func (c sampleCol) EvalRow(r exec.Row) (any, error) { return r[c.col], nil }
func (c sampleCol) EvalColumnar(_ memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a := rec.Column(c.col)
	a.Retain()
	return a, nil
}

// sampleNotNull is "col IS NOT NULL".
type sampleNotNull struct{ col int }

func (n sampleNotNull) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (n sampleNotNull) String() string {
	return fmt.Sprintf("%s IS NOT NULL", SampleSchema.Field(n.col).Name)
}
func (n sampleNotNull) EvalRow(r exec.Row) (any, error) { return r[n.col] != nil, nil }
func (n sampleNotNull) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	col := rec.Column(n.col)
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(col.Len())
	for i := 0; i < col.Len(); i++ {
		b.UnsafeAppend(col.IsValid(i))
	}
	return b.NewArray(), nil
}
