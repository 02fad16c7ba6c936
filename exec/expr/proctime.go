package expr

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// ProcTimeType is PROCTIME()'s type, Flink's TIMESTAMP_LTZ(3).
var ProcTimeType = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}

// ProcTime is PROCTIME(): the wall clock when the row is processed, read
// once per batch (the rows of a batch are processed together). Unlike
// CURRENT_TIMESTAMP it is not the statement's clock: a streaming query
// reads a new value for every batch.
type ProcTime struct {
	now func() time.Time
}

// NewProcTime returns PROCTIME() reading now (time.Now when nil).
func NewProcTime(now func() time.Time) *ProcTime {
	if now == nil {
		now = time.Now
	}
	return &ProcTime{now: now}
}

// Type implements Expr.
func (p *ProcTime) Type() arrow.DataType { return ProcTimeType }

// String implements Expr.
func (p *ProcTime) String() string { return "PROCTIME()" }

// EvalRow implements Expr.
func (p *ProcTime) EvalRow(exec.Row) (any, error) { return arrow.Timestamp(p.now().UnixMilli()), nil }

// EvalColumnar implements Expr: one reading for the whole batch.
func (p *ProcTime) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	v := arrow.Timestamp(p.now().UnixMilli())
	tb := array.NewTimestampBuilder(mem, ProcTimeType)
	defer tb.Release()
	tb.Reserve(n)
	for i := 0; i < n; i++ {
		tb.UnsafeAppend(v)
	}
	return tb.NewArray(), nil
}
