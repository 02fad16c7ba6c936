package shuffle

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// CoalesceRows is the sub-batch size under which the exchange holds a
// target's rows back and concatenates them with the next ones (seed 001:
// kernel set-up, a hash probe round and an output batch per tiny input batch
// were most of a downstream task's time over ten-row blocks).
const CoalesceRows = 1024

// Exchange is the keyed shuffle operator: each row goes to target
// TargetOf(key hash, targets), where target i is the i-th consumer connected
// after the exchange's stage (exec.RoutedEmitter). A columnar batch is split
// with Split and stays columnar; a row batch is split row by row with
// HashRow, which routes every key exactly as the columnar split does, so the
// two kinds may interleave in one stream. Small sub-batches are held per
// target and sent coalesced; a watermark or the end of input flushes them
// first, so nothing is held across a watermark.
type Exchange struct {
	keyCols []int
	mem     memory.Allocator // allocates sub-batches: the caller's, or a Recycler over it
	recycle *Recycler
	scratch Scratch
	pend    []pending // per target
	stopped []bool    // targets that answered ErrStop: their rows are dropped
	nStop   int
}

// pending is what one target holds back: either records or rows, never both
// (a switch of kind flushes first, so order is kept).
type pending struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch // owned
	rows   []exec.Row
	n      int
}

// NewExchange returns an exchange hashing the key columns keyCols.
func NewExchange(keyCols []int, mem memory.Allocator) *Exchange {
	return &Exchange{keyCols: append([]int(nil), keyCols...), mem: mem}
}

// Recycle makes the exchange allocate its sub-batches from a Recycler over
// its allocator that holds at most limit bytes of released blocks (see
// Recycler for what it saves and what it demands of consumers). Call it
// before the run.
func (e *Exchange) Recycle(limit int) {
	if e.recycle == nil {
		e.recycle = NewRecycler(e.mem, limit)
		e.mem = e.recycle
	}
}

// Kind is "exchange".
func (e *Exchange) Kind() string { return "exchange" }

// Capabilities: a columnar batch is split without materialising and leaves
// as columnar sub-batches.
func (e *Exchange) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// KeyCols are the key columns the exchange hashes.
func (e *Exchange) KeyCols() []int { return e.keyCols }

// targets is how many consumers out routes to; an emitter that cannot route
// counts as one.
func (e *Exchange) targets(out exec.Emitter) (exec.RoutedEmitter, int) {
	ro, ok := out.(exec.RoutedEmitter)
	if !ok {
		return nil, 1
	}
	n := ro.Targets()
	if len(e.pend) != n {
		if len(e.pend) != 0 {
			// Targets are the stage's consumers, fixed for a run; a change
			// means the exchange was reused, so start clean.
			e.dropAll()
		}
		e.pend = make([]pending, n)
		e.stopped = make([]bool, n)
		e.nStop = 0
	}
	return ro, n
}

// Process is the row path: every row goes to its key's target.
func (e *Exchange) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	ro, n := e.targets(out)
	if n <= 1 {
		return out.Emit(ctx, b)
	}
	if err := checkKeys(b.Schema(), e.keyCols); err != nil {
		return err
	}
	schema := b.Schema()
	for _, r := range b.Rows() {
		if len(r) != schema.NumFields() {
			return fmt.Errorf("shuffle: exchange: row has %d values, schema %d columns", len(r), schema.NumFields())
		}
		t := TargetOf(HashRow(r, e.keyCols), n)
		if e.stopped[t] {
			continue
		}
		p := &e.pend[t]
		if len(p.recs) > 0 || (p.n > 0 && !sameSchema(p.schema, schema)) {
			if err := e.flush(ctx, ro, t); err != nil {
				return err
			}
		}
		p.schema = schema
		// The row slice is fresh after every flush and never reused, so a
		// consumer that keeps an emitted batch keeps its rows intact.
		p.rows = append(p.rows, r)
		p.n++
	}
	for t := range e.pend {
		if e.pend[t].n >= CoalesceRows {
			if err := e.flush(ctx, ro, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// ProcessColumnar splits a columnar batch with Split; it always handles it.
func (e *Exchange) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	ro, n := e.targets(out)
	if n <= 1 {
		return true, out.Emit(ctx, b)
	}
	subs, err := Split(e.mem, b.Record(), e.keyCols, n, &e.scratch)
	if err != nil {
		return true, err
	}
	for t, sub := range subs {
		if sub == nil {
			continue
		}
		subs[t] = nil
		if err := e.addRecord(ctx, ro, t, sub); err != nil {
			releaseAll(subs)
			return true, err
		}
	}
	return true, nil
}

// addRecord takes over rec for target t: it is sent at once when it is
// big enough and nothing is held, else held and coalesced.
func (e *Exchange) addRecord(ctx context.Context, ro exec.RoutedEmitter, t int, rec arrow.RecordBatch) error {
	if e.stopped[t] {
		rec.Release()
		return nil
	}
	p := &e.pend[t]
	if len(p.rows) > 0 || (len(p.recs) > 0 && !sameSchema(p.schema, rec.Schema())) {
		if err := e.flush(ctx, ro, t); err != nil {
			rec.Release()
			return err
		}
	}
	rows := int(rec.NumRows())
	if p.n == 0 && rows >= CoalesceRows {
		return e.send(ctx, ro, t, exec.NewColumnarBatch(rec))
	}
	p.schema = rec.Schema()
	p.recs = append(p.recs, rec)
	p.n += rows
	if p.n >= CoalesceRows {
		return e.flush(ctx, ro, t)
	}
	return nil
}

// flush sends what target t holds as one batch.
func (e *Exchange) flush(ctx context.Context, ro exec.RoutedEmitter, t int) error {
	p := &e.pend[t]
	if p.n == 0 {
		return nil
	}
	schema, recs, rows, n := p.schema, p.recs, p.rows, p.n
	// Reset before sending: the pending state no longer owns anything, so an
	// error below cannot release twice.
	*p = pending{recs: recs[:0]}
	if rows != nil {
		return e.send(ctx, ro, t, exec.NewRowBatch(schema, rows))
	}
	rec, err := concatRecords(e.mem, schema, recs, n)
	clear(recs)
	if err != nil {
		return fmt.Errorf("shuffle: exchange: coalescing %d batches for target %d: %w", len(recs), t, err)
	}
	return e.send(ctx, ro, t, exec.NewColumnarBatch(rec))
}

// send emits b (owned) to target t and releases it. A target that stops
// (ErrStop) gets nothing more; the exchange stops when every target has.
func (e *Exchange) send(ctx context.Context, ro exec.RoutedEmitter, t int, b *exec.Batch) error {
	err := ro.EmitTo(ctx, t, b)
	b.Release()
	if errors.Is(err, exec.ErrStop) {
		e.stopped[t] = true
		e.nStop++
		e.dropPending(t)
		if e.nStop == len(e.stopped) {
			return exec.ErrStop
		}
		return nil
	}
	return err
}

// flushAll flushes every target, in target order.
func (e *Exchange) flushAll(ctx context.Context, out exec.Emitter) error {
	ro, ok := out.(exec.RoutedEmitter)
	if !ok {
		return nil // nothing is held when there is nothing to route
	}
	for t := range e.pend {
		if err := e.flush(ctx, ro, t); err != nil {
			return err
		}
	}
	return nil
}

// OnWatermark flushes every held sub-batch, then forwards the watermark: a
// row must never arrive after a watermark that it preceded.
func (e *Exchange) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if err := e.flushAll(ctx, out); err != nil {
		return err
	}
	return out.EmitWatermark(ctx, wm)
}

// Finish flushes every held sub-batch.
func (e *Exchange) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	return e.flushAll(ctx, out)
}

// Close releases whatever is still held (an error or a stop cut the run)
// and the recycler's blocks.
func (e *Exchange) Close() {
	e.dropAll()
	if e.recycle != nil {
		e.recycle.Close()
	}
}

func (e *Exchange) dropAll() {
	for t := range e.pend {
		e.dropPending(t)
	}
}

func (e *Exchange) dropPending(t int) {
	p := &e.pend[t]
	releaseAll(p.recs)
	*p = pending{}
}

func sameSchema(a, b *arrow.Schema) bool { return a == b || a.Equal(b) }

// concatRecords concatenates recs (borrowed) column by column into one
// record of n rows; a single record is returned as is, with a new reference.
func concatRecords(mem memory.Allocator, schema *arrow.Schema, recs []arrow.RecordBatch, n int) (arrow.RecordBatch, error) {
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(recs))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		col, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", schema.Field(c).Name, err)
		}
		cols[c] = col
	}
	return array.NewRecordBatch(schema, cols, int64(n)), nil
}
