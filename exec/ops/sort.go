package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Sort is ORDER BY over a bounded input: it buffers its input and emits it
// sorted when the input finishes. With a limit it is a top-n: it keeps at
// most the first limit rows. Instead of a heap it compacts: whenever more
// than max(2*limit, compactMin) rows are buffered, it sorts them and keeps
// limit. That is O(N log limit) amortised like a heap, keeps the sort
// stable (ties stay in arrival order, identical on both paths) and lets
// the columnar path compact with one typed sort and one gather.
type Sort struct {
	keys  []SortKey
	limit int64
	mem   memory.Allocator

	schema   *arrow.Schema
	recs     []arrow.RecordBatch // retained columnar input
	recRows  int
	rows     []exec.Row // row input
	heldWM   int64
	finished bool
	idx      []int32
}

// compactMin keeps a top-n with a small limit from compacting every batch.
const compactMin = 4096

// NewSort returns ORDER BY keys, keeping the first limit rows when
// limit >= 0.
func NewSort(keys []SortKey, limit int64, mem memory.Allocator) *Sort {
	return &Sort{keys: keys, limit: limit, mem: mem, heldWM: exec.MinWatermark}
}

// Kind implements exec.Operator.
func (s *Sort) Kind() string {
	if s.limit >= 0 {
		return "top_n"
	}
	return "sort"
}

// Capabilities implements exec.Operator: columnar input is sorted with
// typed comparators and leaves columnar.
func (s *Sort) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Keys are the sort keys, for EXPLAIN.
func (s *Sort) Keys() []SortKey { return s.keys }

func (s *Sort) check(schema *arrow.Schema) error {
	if s.schema != nil {
		return nil
	}
	for _, k := range s.keys {
		if k.Col < 0 || k.Col >= schema.NumFields() {
			return fmt.Errorf("sort: key column %d out of range (input has %d columns)", k.Col, schema.NumFields())
		}
	}
	s.schema = schema
	return nil
}

func (s *Sort) compactAt() int {
	return max(2*int(s.limit), compactMin)
}

// Process is the row path: buffer the rows (compacting a top-n).
func (s *Sort) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if err := s.check(b.Schema()); err != nil {
		return err
	}
	s.rows = append(s.rows, b.Rows()...)
	if s.limit >= 0 && len(s.rows) > s.compactAt() {
		s.sortRows()
	}
	return nil
}

func (s *Sort) sortRows() {
	slices.SortStableFunc(s.rows, rowComparator(s.keys))
	if s.limit >= 0 && int64(len(s.rows)) > s.limit {
		clear(s.rows[s.limit:])
		s.rows = s.rows[:s.limit]
	}
}

// ProcessColumnar buffers the record (retained).
func (s *Sort) ProcessColumnar(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	if err := s.check(b.Schema()); err != nil {
		return false, err
	}
	rec := b.Record()
	rec.Retain()
	s.recs = append(s.recs, rec)
	s.recRows += int(rec.NumRows())
	if s.limit >= 0 && s.recRows > s.compactAt() {
		if err := s.compactRecords(); err != nil {
			return true, err
		}
	}
	return true, nil
}

// compactRecords replaces the buffered records by one sorted record of at
// most limit rows.
func (s *Sort) compactRecords() error {
	rec, err := s.sortedRecord()
	if err != nil {
		return err
	}
	s.releaseRecs()
	if rec != nil {
		s.recs = append(s.recs, rec)
		s.recRows = int(rec.NumRows())
	}
	return nil
}

// sortedRecord sorts every buffered record (one concatenation, an index
// sort with typed comparators, one gather). nil when there are no rows.
func (s *Sort) sortedRecord() (arrow.RecordBatch, error) {
	if s.recRows == 0 {
		return nil, nil
	}
	cols, err := concatColumns(s.mem, s.schema, s.recs)
	if err != nil {
		return nil, fmt.Errorf("sort: %w", err)
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	n := cols[0].Len()
	idx := s.idx[:0]
	for i := 0; i < n; i++ {
		idx = append(idx, int32(i))
	}
	slices.SortStableFunc(idx, recordComparator(cols, s.keys))
	if s.limit >= 0 && int64(len(idx)) > s.limit {
		idx = idx[:s.limit]
	}
	s.idx = idx
	rec, err := gatherRecord(s.mem, s.schema, cols, idx)
	if err != nil {
		return nil, fmt.Errorf("sort: %w", err)
	}
	return rec, nil
}

func (s *Sort) releaseRecs() {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
	s.recRows = 0
}

// OnWatermark holds the watermark until the sorted output has left.
func (s *Sort) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	s.heldWM = max(s.heldWM, wm)
	return nil
}

// Finish emits the sorted rows: columnar when any input came columnar
// (buffered rows are then encoded and sorted with them), rows otherwise.
func (s *Sort) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if s.finished {
		return nil
	}
	s.finished = true
	if len(s.recs) == 0 {
		s.sortRows()
		if err := emitRowChunks(ctx, out, s.schema, s.rows); err != nil {
			return err
		}
	} else {
		if len(s.rows) > 0 {
			rec, err := exec.EncodeRows(s.mem, s.schema, s.rows)
			if err != nil {
				return fmt.Errorf("sort: %w", err)
			}
			s.recs = append(s.recs, rec)
			s.recRows += len(s.rows)
			s.rows = nil
		}
		rec, err := s.sortedRecord()
		s.releaseRecs()
		if err != nil {
			return err
		}
		if rec != nil && rec.NumRows() == 0 {
			rec.Release()
		} else if rec != nil {
			if err := emitRecordChunks(ctx, out, rec); err != nil {
				return err
			}
		}
	}
	if s.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, s.heldWM)
	}
	return nil
}

// Close releases buffered records.
func (s *Sort) Close() {
	s.releaseRecs()
	s.rows = nil
}
