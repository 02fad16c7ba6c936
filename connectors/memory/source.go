package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// DefaultBatchSize is the most rows a scan puts in one batch when the
// planner does not say.
const DefaultBatchSize = 8192

// Source scans one snapshot of a Table: spec's columns, in its order, as
// born-columnar batches that share the table's buffers (slices, no copy).
type Source struct {
	pin       *pin
	cleanup   runtime.Cleanup
	schema    *arrow.Schema
	cols      []int
	lo, hi    int64 // the rows of this part (of the snapshot's rows)
	batchSize int64
	progress  *exec.Progress
}

var _ exec.Source = (*Source)(nil)

// pin is a scan's hold on its snapshot, let go once: at the end of Run,
// or, for a source that is opened but never run (EXPLAIN plans a query
// without running it, a plan may fail after its scans are opened), when
// the garbage collector finds the source unreachable.
type pin struct {
	snap *snapshot
	done atomic.Bool
}

func (p *pin) release() {
	if p.done.CompareAndSwap(false, true) {
		p.snap.release()
	}
}

// Open returns a source of the current snapshot; see Source. With Splits >
// 1 it reads part Split of Splits equal row ranges.
func (t *Table) Open(spec connectors.ScanSpec) (exec.Source, error) {
	return t.NewSource(spec)
}

// NewSource is Open with the concrete type.
func (t *Table) NewSource(spec connectors.ScanSpec) (*Source, error) {
	cols, projected, err := connectors.ScanColumns(t.schema, spec)
	if err != nil {
		return nil, fmt.Errorf("memory table: %w", err)
	}
	if spec.Splits > 1 && (spec.Split < 0 || spec.Split >= spec.Splits) {
		return nil, fmt.Errorf("memory table: split %d of %d", spec.Split, spec.Splits)
	}
	t.mu.Lock()
	snap := t.cur
	if snap != nil {
		snap.retain()
	}
	t.mu.Unlock()
	if snap == nil {
		return nil, errClosed
	}
	s := &Source{pin: &pin{snap: snap}, schema: projected, cols: cols,
		lo: 0, hi: snap.rows, batchSize: int64(spec.BatchSize), progress: spec.Progress}
	if spec.Splits > 1 {
		n, k := int64(spec.Splits), int64(spec.Split)
		s.lo, s.hi = snap.rows*k/n, snap.rows*(k+1)/n
	}
	if s.batchSize <= 0 {
		s.batchSize = DefaultBatchSize
	}
	s.cleanup = runtime.AddCleanup(s, (*pin).release, s.pin)
	if s.progress != nil {
		s.progress.RowsTotal.Add(s.hi - s.lo)
	}
	return s, nil
}

// Kind is "memory-scan".
func (s *Source) Kind() string { return "memory-scan" }

// Capabilities: every batch is born columnar.
func (s *Source) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}

// Schema is the schema of the emitted batches.
func (s *Source) Schema() *arrow.Schema { return s.schema }

// Rows is how many rows this part reads.
func (s *Source) Rows() int64 { return s.hi - s.lo }

// Run emits the part's rows in batches of at most the batch size (a
// stored batch is never merged with the next), then the final watermark.
// A source runs once.
func (s *Source) Run(ctx context.Context, out exec.Emitter) error {
	if s.pin.done.Load() {
		return errors.New("memory table: a scan runs once")
	}
	defer func() {
		s.cleanup.Stop()
		s.pin.release()
	}()
	var at int64 // the snapshot row where the current record starts
	for _, rec := range s.pin.snap.recs {
		n := rec.NumRows()
		lo, hi := max(s.lo, at)-at, min(s.hi, at+n)-at
		at += n
		for ; lo < hi; lo += s.batchSize {
			if err := ctx.Err(); err != nil {
				return err
			}
			end := min(hi, lo+s.batchSize)
			b := exec.NewColumnarBatch(s.slice(rec, lo, end))
			err := out.Emit(ctx, b)
			b.Release()
			if errors.Is(err, exec.ErrStop) {
				return nil
			}
			if err != nil {
				return err
			}
			if s.progress != nil {
				s.progress.RowsRead.Add(end - lo)
			}
		}
		if at >= s.hi {
			break
		}
	}
	if err := out.EmitWatermark(ctx, exec.MaxWatermark); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	return nil
}

// slice is rows [lo, hi) of rec's projected columns, sharing rec's buffers.
func (s *Source) slice(rec arrow.RecordBatch, lo, hi int64) arrow.RecordBatch {
	whole := lo == 0 && hi == rec.NumRows()
	cols := make([]arrow.Array, len(s.cols))
	for i, c := range s.cols {
		if whole {
			cols[i] = rec.Column(c)
		} else {
			cols[i] = array.NewSlice(rec.Column(c), lo, hi)
		}
	}
	out := array.NewRecordBatch(s.schema, cols, hi-lo)
	if !whole {
		for _, c := range cols {
			c.Release()
		}
	}
	return out
}
