package shuffle

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/recycle"
)

// CoalesceRows is the sub-batch size under which the exchange holds a
// target's rows back and concatenates them with the next ones (seed 001:
// kernel set-up, a hash probe round and an output batch per tiny input batch
// were most of a downstream task's time over ten-row blocks).
const CoalesceRows = 1024

// Exchange is the keyed shuffle operator: each row goes to target
// TargetOf(key hash, targets), where target i is the i-th consumer connected
// after the exchange's stage (exec.RoutedEmitter). A columnar batch is
// routed as Split routes it and stays columnar; a row batch is split row by
// row with HashRow, which routes every key exactly as the columnar split
// does, so the two kinds may interleave in one stream. A target's rows under
// CoalesceRows are held and sent together with the next ones (columnar rows
// are gathered once, at that flush); a watermark or the end of input
// flushes them first, so nothing is held across a watermark.
type Exchange struct {
	keyCols []int
	mem     memory.Allocator // allocates sub-batches: the caller's, or a recycle.Allocator over it
	recycle *recycle.Allocator
	scratch Scratch
	pend    []pending // per target
	stopped []bool    // targets that answered ErrStop: their rows are dropped
	nStop   int
}

// pending is what one target holds back: either columnar segments or rows,
// never both (a switch of kind flushes first, so order is kept). A segment
// is an input record (retained) and the target's row indexes in it (owned
// copy; nil for all rows): held rows are gathered once, at the flush, with
// no intermediate sub-record to concatenate.
type pending struct {
	schema *arrow.Schema
	segs   []segment
	rows   []exec.Row
	n      int
	// srcs are the columnar batches (retained) whose decoded rows are held:
	// decoded strings alias their records' memory.
	srcs []*exec.Batch
}

// maxHeldSegments bounds the input records one target pins while it waits
// for CoalesceRows rows: a target that gets a trickle of rows from every
// batch would otherwise hold whole batches for each of its few rows. Past
// it, the held rows are compacted into one record of their own.
const maxHeldSegments = 16

// RecycleLimit is how many bytes of released sub-batch blocks an exchange
// keeps for reuse by default. The runner is push-based: a consumer handles
// a sub-batch inside EmitTo, so what is in flight at once is about one
// input batch's worth (8192 rows of 100 bytes is 800 KB); what consumers
// keep (join builds, sorts, held windows) keeps its own blocks and is not
// counted. The free blocks are held until Close, so this bounds what an
// idle exchange costs: parallelism times it per keyed edge.
const RecycleLimit = 8 << 20

// NewExchange returns an exchange hashing the key columns keyCols. It
// allocates its sub-batches from a recycle.Allocator over mem holding at most
// RecycleLimit bytes: that is most of the split's speed (BenchmarkSplit vs
// BenchmarkSplitGoAlloc). Recycling is safe for the operators downstream of
// an exchange because none of them reads Arrow memory it has released or
// never wrote: the row form copies strings (exec.Value), key tables and
// MIN/MAX clone the strings they keep, and state that keeps batches (join
// builds and state, sorts, windows, session windows) Retains them, which
// keeps their blocks out of the recycler. The engine's SQL suite runs with
// CLINK_SHUFFLE_RECYCLE=poison to keep it so. CLINK_SHUFFLE_RECYCLE=off is
// the A/B switch back to allocating every sub-batch from mem.
func NewExchange(keyCols []int, mem memory.Allocator) *Exchange {
	e := &Exchange{keyCols: append([]int(nil), keyCols...), mem: mem}
	if r := recycle.FromEnv("CLINK_SHUFFLE_RECYCLE", mem, RecycleLimit); r != nil {
		e.recycle, e.mem = r, r
	}
	return e
}

// Recycle sets how many bytes of released blocks the exchange keeps for
// reuse (see recycle.Allocator for what it saves and what it demands of consumers);
// limit <= 0 turns recycling off: every sub-batch is fresh memory from the
// exchange's allocator. Call it before the run.
func (e *Exchange) Recycle(limit int) {
	if e.recycle != nil {
		if limit > 0 {
			e.recycle.SetLimit(limit)
			return
		}
		e.mem = e.recycle.Base()
		e.recycle.Close()
		e.recycle = nil
		return
	}
	if limit > 0 {
		e.recycle = recycle.New(e.mem, limit)
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
		if len(p.segs) > 0 || (p.n > 0 && !sameSchema(p.schema, schema)) {
			if err := e.flush(ctx, ro, t); err != nil {
				return err
			}
		}
		p.schema = schema
		if b.IsColumnar() && (len(p.srcs) == 0 || p.srcs[len(p.srcs)-1] != b) {
			b.Retain()
			p.srcs = append(p.srcs, b)
		}
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

// ProcessColumnar routes a columnar batch's rows (the routing of Split) and
// sends each target its rows as one gathered sub-batch, or holds them back
// when there are too few. It always handles the batch.
func (e *Exchange) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	ro, n := e.targets(out)
	if n <= 1 {
		return true, out.Emit(ctx, b)
	}
	rec := b.Record()
	if err := checkKeys(rec.Schema(), e.keyCols); err != nil {
		return true, err
	}
	if n > maxTargets {
		return true, fmt.Errorf("shuffle: exchange: %d targets, at most %d", n, maxTargets)
	}
	starts, idx, whole := route(rec, e.keyCols, n, &e.scratch)
	if whole >= 0 {
		return true, e.addSegment(ctx, ro, whole, rec, nil)
	}
	for t := range n {
		lo, hi := starts[t], starts[t+1]
		if lo == hi {
			continue
		}
		if err := e.addSegment(ctx, ro, t, rec, idx[lo:hi]); err != nil {
			return true, err
		}
	}
	return true, nil
}

// addSegment gives target t the rows idx of rec (borrowed; nil idx: every
// row): sent at once when they are enough and nothing is held, else held.
func (e *Exchange) addSegment(ctx context.Context, ro exec.RoutedEmitter, t int, rec arrow.RecordBatch, idx []int32) error {
	if e.stopped[t] {
		return nil
	}
	p := &e.pend[t]
	if len(p.rows) > 0 || (len(p.segs) > 0 && !sameSchema(p.schema, rec.Schema())) {
		if err := e.flush(ctx, ro, t); err != nil {
			return err
		}
	}
	seg := segment{rec: rec, idx: idx}
	rows := seg.len()
	if p.n == 0 && rows >= CoalesceRows {
		if idx == nil {
			rec.Retain() // the whole input goes on, uncopied
			return e.send(ctx, ro, t, exec.NewColumnarBatch(rec))
		}
		sub, err := gatherRecord(e.mem, rec, idx, &e.scratch)
		if err != nil {
			return fmt.Errorf("shuffle: exchange: gathering target %d: %w", t, err)
		}
		return e.send(ctx, ro, t, exec.NewColumnarBatch(sub))
	}
	rec.Retain()
	if idx != nil {
		seg.idx = append([]int32(nil), idx...) // the scratch is reused
	}
	p.schema = rec.Schema()
	p.segs = append(p.segs, seg)
	p.n += rows
	if p.n >= CoalesceRows {
		return e.flush(ctx, ro, t)
	}
	if len(p.segs) >= maxHeldSegments {
		return e.compact(t)
	}
	return nil
}

// gatherHeld gathers target t's held segments into one record and releases
// them; the pending state is left empty.
func (e *Exchange) gatherHeld(t int) (arrow.RecordBatch, error) {
	p := &e.pend[t]
	segs := p.segs
	schema := p.schema
	*p = pending{segs: segs[:0]}
	defer func() {
		for i := range segs {
			segs[i].rec.Release()
			segs[i] = segment{}
		}
	}()
	if len(segs) == 1 && segs[0].idx == nil {
		segs[0].rec.Retain()
		return segs[0].rec, nil
	}
	rec, err := gatherSegments(e.mem, schema, segs, &e.scratch)
	if err != nil {
		return nil, fmt.Errorf("shuffle: exchange: coalescing %d batches for target %d: %w", len(segs), t, err)
	}
	return rec, nil
}

// compact replaces target t's held segments by one record of their rows,
// so they pin no input batch.
func (e *Exchange) compact(t int) error {
	n := e.pend[t].n
	rec, err := e.gatherHeld(t)
	if err != nil {
		return err
	}
	p := &e.pend[t]
	p.schema = rec.Schema()
	p.segs = append(p.segs, segment{rec: rec})
	p.n = n
	return nil
}

// flush sends what target t holds as one batch.
func (e *Exchange) flush(ctx context.Context, ro exec.RoutedEmitter, t int) error {
	p := &e.pend[t]
	if p.n == 0 {
		return nil
	}
	if p.rows != nil {
		schema, rows, srcs := p.schema, p.rows, p.srcs
		*p = pending{segs: p.segs}
		err := e.send(ctx, ro, t, exec.NewRowBatch(schema, rows))
		for _, b := range srcs {
			b.Release()
		}
		return err
	}
	rec, err := e.gatherHeld(t)
	if err != nil {
		return err
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

// FlushBeforeBarrier implements exec.BarrierFlusher: the held rows go out
// before a checkpoint barrier, as before a watermark, so the exchange has
// no state to snapshot.
func (e *Exchange) FlushBeforeBarrier(ctx context.Context, out exec.Emitter) error {
	return e.flushAll(ctx, out)
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
	for _, sg := range p.segs {
		sg.rec.Release()
	}
	for _, b := range p.srcs {
		b.Release()
	}
	*p = pending{}
}

func sameSchema(a, b *arrow.Schema) bool { return a == b || a.Equal(b) }
