package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/recycle"
)

// columnRef is how Project recognises a bare column reference so it can
// hand the input column on without evaluating anything. Declared here, by
// its consumer; an expression that does not implement it is simply
// evaluated (a column reference's EvalColumnar retains the column anyway).
type columnRef interface {
	ColumnIndex() int
}

// Project computes one output column per expression.
type Project struct {
	exec.Base
	exprs []expr.Expr
	fused []*expr.Fused // the columnar path's evaluators (nil: a column passed on)
	out   *arrow.Schema
	mem   memory.Allocator
	// outMem is where the fused evaluators build their columns (see
	// outputAllocator): they write every byte they hand out.
	outMem  memory.Allocator
	recycle *recycle.Allocator
	err     error
	// dictOut is out with the dictionary-encoded columns of the last batch
	// that had any (passed through by reference; see exec.PlainType).
	dictOut *arrow.Schema
}

// NewProject returns a projection of exprs into the columns of out.
func NewProject(exprs []expr.Expr, out *arrow.Schema, mem memory.Allocator) *Project {
	p := &Project{exprs: exprs, out: out, mem: mem, fused: make([]*expr.Fused, len(exprs))}
	if len(exprs) != out.NumFields() {
		p.err = fmt.Errorf("project: %d expressions for %d output columns", len(exprs), out.NumFields())
	}
	p.outMem, p.recycle = outputAllocator(mem)
	for c, e := range exprs {
		if _, ok := e.(columnRef); !ok {
			p.fused[c] = expr.NewFused(e, mem)
			p.fused[c].SetOutput(p.outMem)
		}
	}
	return p
}

// Close frees the evaluators' scratch and the recycled output blocks.
func (p *Project) Close() {
	for _, f := range p.fused {
		if f != nil {
			f.Release()
		}
	}
	if p.recycle != nil {
		p.recycle.Close()
	}
}

// Kind implements exec.Operator.
func (p *Project) Kind() string { return "project" }

// Capabilities implements exec.Operator.
func (p *Project) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Exprs are the projected expressions, for EXPLAIN.
func (p *Project) Exprs() []expr.Expr { return p.exprs }

// Process is the row path.
func (p *Project) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if p.err != nil {
		return p.err
	}
	rows := b.Rows()
	res := make([]exec.Row, len(rows))
	cells := make([]any, len(rows)*len(p.exprs))
	for i, r := range rows {
		row := exec.Row(cells[i*len(p.exprs) : (i+1)*len(p.exprs) : (i+1)*len(p.exprs)])
		for c, e := range p.exprs {
			v, err := e.EvalRow(r)
			if err != nil {
				return fmt.Errorf("project column %q (%s): row %d: %w", p.out.Field(c).Name, e, i, err)
			}
			row[c] = v
		}
		res[i] = row
	}
	return emitRows(ctx, out, p.out, res)
}

// ProcessColumnar evaluates each expression over the whole record; a bare
// column reference retains the input column (zero copy).
func (p *Project) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if p.err != nil {
		return false, p.err
	}
	rec := b.Record()
	cols := make([]arrow.Array, len(p.exprs))
	dict := false
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c, e := range p.exprs {
		var a arrow.Array
		if ref, ok := e.(columnRef); ok && ref.ColumnIndex() >= 0 && ref.ColumnIndex() < int(rec.NumCols()) {
			a = rec.Column(ref.ColumnIndex())
			a.Retain()
		} else {
			var err error
			if f := p.fused[c]; f != nil {
				a, err = f.Eval(p.mem, rec)
			} else {
				a, err = e.EvalColumnar(p.mem, rec)
			}
			if err != nil {
				return false, fmt.Errorf("project column %q (%s): %w", p.out.Field(c).Name, e, err)
			}
		}
		cols[c] = a
		if want := p.out.Field(c).Type; !arrow.TypeEqual(a.DataType(), want) {
			if !exec.SameColumnType(a.DataType(), want) {
				return false, fmt.Errorf("project column %q (%s): got %s, want %s", p.out.Field(c).Name, e, a.DataType(), want)
			}
			dict = true
		}
		if a.Len() != int(rec.NumRows()) {
			return false, fmt.Errorf("project column %q (%s): %d values for %d rows", p.out.Field(c).Name, e, a.Len(), rec.NumRows())
		}
	}
	schema := p.out
	if dict {
		schema = p.schemaFor(cols)
	}
	return true, emitRecord(ctx, out, array.NewRecordBatch(schema, cols, rec.NumRows()))
}

// schemaFor is out with the types of cols, which differ from out's only
// by dictionary encoding.
func (p *Project) schemaFor(cols []arrow.Array) *arrow.Schema {
	if s := p.dictOut; s != nil {
		same := true
		for c, a := range cols {
			if !arrow.TypeEqual(s.Field(c).Type, a.DataType()) {
				same = false
				break
			}
		}
		if same {
			return s
		}
	}
	fields := make([]arrow.Field, len(cols))
	for c, a := range cols {
		fields[c] = p.out.Field(c)
		fields[c].Type = a.DataType()
	}
	md := p.out.Metadata()
	p.dictOut = arrow.NewSchema(fields, &md)
	return p.dictOut
}
