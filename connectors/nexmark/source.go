package nexmark

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Source generates a table's events as born-columnar batches.
type Source struct {
	gen       *gen
	cfg       *config
	kind      uint8 // the table's kind; kindAny for the wide table
	schema    *arrow.Schema
	cols      []column
	batchSize int
	progress  *exec.Progress
	mem       memory.Allocator
	// split of splits: this source generates the events of every
	// splits-th block of splitBlock events, starting at block split, so
	// parallel sources share one event sequence without overlap.
	split, splits int64

	// next is the event number after the last emitted batch's events, the
	// position a checkpoint records (moved under the emitter's lock, see
	// exec.EmitThen); restored says it came from a checkpoint.
	next     int64
	restored bool
}

// SnapshotState implements exec.Snapshotter: the split's next event number
// is all there is (events are a function of their number).
func (s *Source) SnapshotState(_ context.Context, w exec.StateWriter) error {
	return w.Value("next-event", binary.LittleEndian.AppendUint64(nil, uint64(s.next)))
}

// RestoreState implements exec.Snapshotter.
func (s *Source) RestoreState(_ context.Context, r exec.StateReader) error {
	v, ok, err := r.Value("next-event")
	if err != nil {
		return err
	}
	if !ok || len(v) != 8 {
		return fmt.Errorf("nexmark: checkpoint has no position for this source")
	}
	s.next, s.restored = int64(binary.LittleEndian.Uint64(v)), true
	return nil
}

// splitBlock is the number of consecutive events one split generates
// before the next split's turn: large enough for full batches, small enough
// that the splits' event times (and so their watermarks) stay close.
const splitBlock = 1024

// own returns the first event number >= n of this source's kind and split.
func (s *Source) own(n int64) int64 {
	n = s.gen.nextOfKind(n, s.kind)
	if s.splits <= 1 {
		return n
	}
	for {
		blk := n / splitBlock
		r := blk % s.splits
		if r == s.split {
			return n
		}
		blk += (s.split - r + s.splits) % s.splits
		n = s.gen.nextOfKind(blk*splitBlock, s.kind)
	}
}

// Kind names the source in metrics and EXPLAIN.
func (s *Source) Kind() string { return "nexmark-source" }

// Capabilities: the batches are built in Arrow builders, never as rows.
func (s *Source) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}

// Schema is the schema of the emitted batches (the scanned columns).
func (s *Source) Schema() *arrow.Schema { return s.schema }

// events is one batch's events and their kinds.
type events struct {
	evs   []event
	kinds []uint8
}

func (e *events) reset() {
	e.evs, e.kinds = e.evs[:0], e.kinds[:0]
}

// Run generates until events.num events have gone by (then it emits the
// final watermark), ctx ends, or the consumer stops it with exec.ErrStop.
// With a rate it paces to wall-clock time: a batch holds the events that
// are due, so rows stream at the rate instead of waiting for a full batch.
func (s *Source) Run(ctx context.Context, out exec.Emitter) error {
	g := s.gen
	limit := s.cfg.eventsNum
	bounded := limit > 0
	if !bounded {
		limit = math.MaxInt64
	}
	paced := s.cfg.firstRate > 0 || s.cfg.nextRate > 0
	if s.progress != nil && bounded {
		total := limit
		if s.kind != kindAny {
			total = g.countOfKind(limit, s.kind)
		}
		if s.splits > 1 {
			total /= s.splits // near enough for a progress line
		}
		s.progress.RowsTotal.Add(total)
	}
	if lo, hi := g.kindRange(s.kind); hi == lo {
		// A table of a kind with proportion 0 has no rows.
		if !bounded {
			<-ctx.Done()
			return ctx.Err()
		}
		return emitEnd(ctx, out)
	}

	w := writer{mem: s.mem, gen: g, dense: s.kind != kindAny}
	var ev events
	start := time.Now()
	n := s.own(0)
	if s.restored {
		// Resume where the checkpoint was, on the same event clock.
		n = s.own(s.next)
		start = start.Add(-time.Duration(g.clock.offsetUs(n)) * time.Microsecond)
	}
	for n < limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev.reset()
		due := int64(math.MaxInt64)
		if paced {
			due = time.Since(start).Microseconds()
		}
		for len(ev.evs) < s.batchSize && n < limit && (!paced || g.clock.offsetUs(n) <= due) {
			ev.evs = append(ev.evs, g.event(n))
			ev.kinds = append(ev.kinds, g.kind(n))
			n = s.own(n + 1)
		}
		if len(ev.evs) == 0 {
			// Nothing is due yet. Sleep until the next event is, but at
			// least a millisecond so a fast rate still makes useful batches.
			wait := time.Duration(g.clock.offsetUs(n)-due) * time.Microsecond
			if err := exec.Sleep(ctx, max(wait, time.Millisecond)); err != nil {
				return err
			}
			continue
		}
		rec, err := s.build(&w, &ev)
		if err != nil {
			return err
		}
		b := exec.NewColumnarBatch(rec)
		err = exec.EmitThen(ctx, out, b, func() { s.next = n })
		b.Release()
		if err != nil {
			if errors.Is(err, exec.ErrStop) {
				return nil
			}
			return err
		}
		if s.progress != nil {
			s.progress.RowsRead.Add(int64(len(ev.evs)))
		}
		// Event times are monotonic, so the last is the max. It is taken at
		// the column's millisecond precision so no later row is behind it.
		if err := out.EmitWatermark(ctx, ev.evs[len(ev.evs)-1].tms*1000); err != nil {
			if errors.Is(err, exec.ErrStop) {
				return nil
			}
			return err
		}
	}
	return emitEnd(ctx, out)
}

// emitEnd is the end of a bounded run: the final watermark fires every
// open window.
func emitEnd(ctx context.Context, out exec.Emitter) error {
	if err := out.EmitWatermark(ctx, exec.MaxWatermark); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	return nil
}

func (s *Source) build(w *writer, ev *events) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(s.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range s.cols {
		d, err := w.column(&s.cols[i], s.schema.Field(i).Type, ev)
		if err != nil {
			return nil, fmt.Errorf("nexmark: column %q: %w", s.schema.Field(i).Name, err)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	// With no columns (a COUNT(*) scan) the row count still travels.
	return array.NewRecordBatch(s.schema, cols, int64(len(ev.evs))), nil
}
