package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/recycle"
)

// SetOpKind is INTERSECT or EXCEPT.
type SetOpKind int

// Set operations.
const (
	Intersect SetOpKind = iota
	Except
)

func (k SetOpKind) String() string {
	if k == Except {
		return "EXCEPT"
	}
	return "INTERSECT"
}

// SetOp is INTERSECT [ALL] or EXCEPT [ALL] of two inputs of one schema,
// rows compared whole with NULLs equal (as SQL set operations compare):
//
//	INTERSECT       each row in both inputs, once
//	INTERSECT ALL   a row m times on the left and n on the right: min(m, n) times
//	EXCEPT          each left row absent from the right, once
//	EXCEPT ALL      max(m - n, 0) times
//
// Input 1 (right) is counted per distinct row as it arrives (one key index
// over every column, so a row's key is the whole row); input 0 (left)
// streams through once the right has ended, each row taking from its
// row's count. Left batches that come earlier are held. Output order is
// unspecified; a columnar batch leaves as a columnar batch (its kept rows
// gathered, or the batch itself when all are kept).
type SetOp struct {
	kind   SetOpKind
	all    bool
	schema *arrow.Schema
	mem    memory.Allocator
	// outMem is where kept rows are gathered (see outputAllocator).
	outMem  memory.Allocator
	recycle *recycle.Allocator
	err     error

	keys *keyIndex
	// counts per key id: the right input's copies still to take (INTERSECT,
	// EXCEPT ALL); for EXCEPT, non-zero once a row must not come out.
	counts    []int64
	rightDone bool
	pending   []pendingProbe
	heldWM    int64

	ids []int32
	sel []int32

	// distinct holds, decoded, the row of every key id in id order (each
	// record the rows a batch added): the checkpoint state re-inserts
	// them, so a restored operator gives every row the id it had.
	plain    *arrow.Schema
	distinct []arrow.RecordBatch
	newRows  []int32 // positions in the batch at hand that got new ids
	onNew    func(row int)
}

// NewSetOp returns kind [ALL] over two inputs of schema.
func NewSetOp(kind SetOpKind, all bool, schema *arrow.Schema, mem memory.Allocator) *SetOp {
	s := &SetOp{kind: kind, all: all, schema: schema, mem: mem, heldWM: exec.MinWatermark, plain: plainSchema(schema)}
	s.onNew = func(row int) { s.newRows = append(s.newRows, int32(row)) }
	s.outMem, s.recycle = outputAllocator(mem)
	if kind != Intersect && kind != Except {
		s.err = fmt.Errorf("set operation: unknown kind %d", int(kind))
		return s
	}
	types := make([]arrow.DataType, schema.NumFields())
	for i, f := range schema.Fields() {
		types[i] = f.Type
	}
	s.keys = newKeyIndex(chooseKeyKind(types), true)
	return s
}

// Kind implements exec.Operator.
func (s *SetOp) Kind() string { return "set_op" }

// Op is the operation and whether it is ALL, for EXPLAIN.
func (s *SetOp) Op() (SetOpKind, bool) { return s.kind, s.all }

// Capabilities implements exec.Operator.
func (s *SetOp) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

func (s *SetOp) checkSchema(input int, got *arrow.Schema) error {
	if got.NumFields() != s.schema.NumFields() {
		return fmt.Errorf("%s: input %d has %d columns, want %d", s.kind, input, got.NumFields(), s.schema.NumFields())
	}
	for i, f := range got.Fields() {
		if !exec.SameColumnType(f.Type, s.schema.Field(i).Type) {
			return fmt.Errorf("%s: input %d column %q is %s, want %s", s.kind, input, f.Name, f.Type, s.schema.Field(i).Type)
		}
	}
	return nil
}

// Process is the row path.
func (s *SetOp) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if s.err != nil {
		return s.err
	}
	if err := s.checkSchema(input, b.Schema()); err != nil {
		return err
	}
	if input == 1 {
		return s.countRows(b.Rows())
	}
	if !s.rightDone {
		b.Retain()
		s.pending = append(s.pending, pendingProbe{b: b})
		return nil
	}
	return s.leftRows(ctx, b, out)
}

// ProcessColumnar counts or filters a record by its arrays.
func (s *SetOp) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if s.err != nil {
		return false, s.err
	}
	if err := s.checkSchema(input, b.Schema()); err != nil {
		return false, err
	}
	if input == 1 {
		ids, err := s.keys.idsColumnar(recordColumns(b.Record()), b.Len(), true, s.ids, s.onNew)
		if err != nil {
			return false, fmt.Errorf("%s: %w", s.kind, err)
		}
		s.ids = ids
		s.count(ids)
		return true, s.holdNew(b.Record())
	}
	if !s.rightDone {
		b.Retain()
		s.pending = append(s.pending, pendingProbe{b: b, columnar: true})
		return true, nil
	}
	return true, s.leftColumnar(ctx, b, out)
}

func (s *SetOp) countRows(rows []exec.Row) error {
	ids := s.ids[:0]
	for i, r := range rows {
		id, created, err := s.keys.idRow(r, true)
		if err != nil {
			return fmt.Errorf("%s: right row %d: %w", s.kind, i, err)
		}
		if created {
			s.newRows = append(s.newRows, int32(i))
		}
		ids = append(ids, id)
	}
	s.ids = ids
	s.count(ids)
	return s.holdNewRows(rows)
}

func (s *SetOp) count(ids []int32) {
	s.counts = growTo(s.counts, s.keys.len())
	for _, id := range ids {
		s.counts[id]++
	}
}

// keep decides the left rows with key ids ids, appending the kept
// positions to sel.
func (s *SetOp) keep(ids []int32, sel []int32) []int32 {
	s.counts = growTo(s.counts, s.keys.len()) // EXCEPT adds left rows' keys
	for i, id := range ids {
		switch {
		case s.kind == Intersect:
			if id < 0 || s.counts[id] == 0 {
				continue
			}
			if s.all {
				s.counts[id]--
			} else {
				s.counts[id] = 0
			}
		case s.all: // EXCEPT ALL
			if id >= 0 && s.counts[id] > 0 {
				s.counts[id]--
				continue
			}
		default: // EXCEPT
			if s.counts[id] > 0 {
				continue
			}
			s.counts[id] = 1 // out once
		}
		sel = append(sel, int32(i))
	}
	return sel
}

// insertLeft: EXCEPT (distinct) keys left rows too, to let each out once.
func (s *SetOp) insertLeft() bool { return s.kind == Except && !s.all }

func (s *SetOp) leftRows(ctx context.Context, b *exec.Batch, out exec.Emitter) error {
	rows := b.Rows()
	ids := s.ids[:0]
	for i, r := range rows {
		id, created, err := s.keys.idRow(r, s.insertLeft())
		if err != nil {
			return fmt.Errorf("%s: left row %d: %w", s.kind, i, err)
		}
		if created {
			s.newRows = append(s.newRows, int32(i))
		}
		ids = append(ids, id)
	}
	s.ids = ids
	if err := s.holdNewRows(rows); err != nil {
		return err
	}
	sel := s.keep(ids, s.sel[:0])
	s.sel = sel
	if len(sel) == len(rows) {
		return emitRowsOf(ctx, out, b)
	}
	kept := make([]exec.Row, len(sel))
	for k, i := range sel {
		kept[k] = rows[i]
	}
	return emitRows(ctx, out, b.Schema(), kept)
}

func (s *SetOp) leftColumnar(ctx context.Context, b *exec.Batch, out exec.Emitter) error {
	rec := b.Record()
	ids, err := s.keys.idsColumnar(recordColumns(rec), b.Len(), s.insertLeft(), s.ids, s.onNew)
	if err != nil {
		return fmt.Errorf("%s: %w", s.kind, err)
	}
	s.ids = ids
	if err := s.holdNew(rec); err != nil {
		return err
	}
	sel := s.keep(ids, s.sel[:0])
	s.sel = sel
	switch n := len(sel); {
	case n == 0:
		return nil
	case n == b.Len():
		return out.Emit(ctx, b)
	case int(sel[n-1]-sel[0])+1 == n:
		return emitRecord(ctx, out, rec.NewSlice(int64(sel[0]), int64(sel[n-1])+1))
	}
	res, err := gatherRecord(s.outMem, rec.Schema(), recordColumns(rec), sel)
	if err != nil {
		return fmt.Errorf("%s: %w", s.kind, err)
	}
	return emitRecord(ctx, out, res)
}

// emitRowsOf forwards a row batch kept whole (nothing for an empty one).
func emitRowsOf(ctx context.Context, out exec.Emitter, b *exec.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	return out.Emit(ctx, b)
}

// OnWatermark forwards the watermark once the right input has ended;
// before that the held left rows would come out behind it.
func (s *SetOp) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if !s.rightDone {
		s.heldWM = max(s.heldWM, wm)
		return nil
	}
	return out.EmitWatermark(ctx, wm)
}

// Finish of the right input lets the held left batches through.
func (s *SetOp) Finish(ctx context.Context, input int, out exec.Emitter) error {
	if input == 0 || s.rightDone {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	s.rightDone = true
	pending := s.pending
	s.pending = nil
	err := replay(pending, func(b *exec.Batch, columnar bool) error {
		if columnar {
			return s.leftColumnar(ctx, b, out)
		}
		return s.leftRows(ctx, b, out)
	})
	if err != nil {
		return err
	}
	if s.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, s.heldWM)
	}
	return nil
}

// Close releases held batches.
func (s *SetOp) Close() {
	if s.recycle != nil {
		s.recycle.Close()
	}
	for _, p := range s.pending {
		p.b.Release()
	}
	s.pending = nil
	s.keys.release()
	releaseRecs(s.distinct)
	s.distinct = nil
}
