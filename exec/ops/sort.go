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
// sorted when the input finishes. The order is stable (ties keep arrival
// order, the same on both paths). Rows are sorted by normalised keys
// (sort_key.go) with a radix sort; keys of a type without a normalised
// form fall back to the typed comparators. ORDER BY ... LIMIT is TopN.
type Sort struct {
	keys []SortKey
	mem  memory.Allocator

	schema   *arrow.Schema
	recs     []arrow.RecordBatch // retained columnar input
	recRows  int
	rows     []exec.Row // row input
	heldWM   int64
	finished bool

	// Memory (sort_spill.go).
	resInit  bool
	res      *exec.Reservation
	bufBytes int64 // the buffer's estimate
	dir      *spillDir
	runs     []*spillFile
	spilled  spillStats
}

// NewSort returns ORDER BY keys.
func NewSort(keys []SortKey, mem memory.Allocator) *Sort {
	return &Sort{keys: keys, mem: mem, heldWM: exec.MinWatermark}
}

// Kind implements exec.Operator.
func (s *Sort) Kind() string { return "sort" }

// Capabilities implements exec.Operator: columnar input is sorted by its
// arrays and leaves columnar.
func (s *Sort) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Keys are the sort keys, for EXPLAIN.
func (s *Sort) Keys() []SortKey { return s.keys }

func (s *Sort) check(schema *arrow.Schema) error {
	if s.schema != nil {
		return nil
	}
	if err := checkSortKeys(s.keys, schema); err != nil {
		return err
	}
	s.schema = plainSchema(schema)
	return nil
}

func checkSortKeys(keys []SortKey, schema *arrow.Schema) error {
	for _, k := range keys {
		if k.Col < 0 || k.Col >= schema.NumFields() {
			return fmt.Errorf("sort: key column %d out of range (input has %d columns)", k.Col, schema.NumFields())
		}
	}
	return nil
}

// Process is the row path: buffer the rows.
func (s *Sort) Process(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if err := s.check(b.Schema()); err != nil {
		return err
	}
	rows := b.Rows()
	s.rows = append(s.rows, rows...)
	for _, r := range rows {
		s.bufBytes += rowBytes(r)
	}
	return s.account(ctx)
}

// ProcessColumnar buffers the record (retained).
func (s *Sort) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	if err := s.check(b.Schema()); err != nil {
		return false, err
	}
	// Held decoded: the records are concatenated at the end, and a scan
	// hands out dictionary and plain batches of one column.
	rec, err := plainRecord(s.mem, s.schema, b.Record())
	if err != nil {
		return true, fmt.Errorf("sort: %w", err)
	}
	s.recs = append(s.recs, rec)
	s.recRows += int(rec.NumRows())
	s.bufBytes += recordBytes(rec)
	return true, s.account(ctx)
}

// OnWatermark holds the watermark until the sorted output has left.
func (s *Sort) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	s.heldWM = max(s.heldWM, wm)
	return nil
}

// Finish emits the sorted rows: columnar when any input came columnar
// (buffered rows are then encoded and sorted with them), rows otherwise;
// or, when the buffer went to disk in sorted runs, the runs merged.
func (s *Sort) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if s.finished {
		return nil
	}
	s.finished = true
	if len(s.runs) > 0 {
		if err := s.spillRun(ctx); err != nil {
			return err
		}
		if err := s.mergeRuns(ctx, out); err != nil {
			return err
		}
	} else if err := s.emitSorted(ctx, out); err != nil {
		return err
	}
	if s.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, s.heldWM)
	}
	return nil
}

// emitSorted emits the buffer sorted and empties it.
func (s *Sort) emitSorted(ctx context.Context, out exec.Emitter) error {
	if len(s.recs) == 0 {
		rows, err := sortRows(s.schema, s.keys, s.rows)
		if err != nil {
			return err
		}
		s.rows = nil
		return emitRowChunks(ctx, out, s.schema, rows)
	}
	if len(s.rows) > 0 {
		rec, err := exec.EncodeRows(s.mem, s.schema, s.rows)
		if err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		s.recs = append(s.recs, rec)
		s.recRows += len(s.rows)
		s.rows = nil
	}
	err := s.emitRecords(ctx, out)
	s.releaseRecs()
	return err
}

// sortRows sorts row-form rows by keys (stably).
func sortRows(schema *arrow.Schema, keys []SortKey, rows []exec.Row) ([]exec.Row, error) {
	if len(rows) < 2 {
		return rows, nil
	}
	nk, ok := newNormKeys(schema, keys)
	if !ok {
		slices.SortStableFunc(rows, rowComparator(keys))
		return rows, nil
	}
	stride := nk.width + entryIdx
	buf := make([]byte, len(rows)*stride)
	long := false
	for i, r := range rows {
		e := buf[i*stride : (i+1)*stride]
		l, err := nk.encodeRow(e, r)
		if err != nil {
			return nil, err
		}
		long = long || l
		setEntryRow(e, stride, int32(i))
	}
	var str func(row int32, col int) []byte
	if long {
		str = func(row int32, col int) []byte {
			b, _ := valueBytes(rows[row][col])
			return b
		}
	}
	radixSort(buf, len(rows), stride, nk, str)
	sorted := make([]exec.Row, len(rows))
	for i := range sorted {
		sorted[i] = rows[entryRow(buf[i*stride:], stride)]
	}
	return sorted, nil
}

// emitRecords sorts every buffered record and emits the rows in order,
// gathered chunk by chunk (so a LIMIT above that stops early saves the
// rest of the gather).
func (s *Sort) emitRecords(ctx context.Context, out exec.Emitter) error {
	if s.recRows == 0 {
		return nil
	}
	src := newRecordRows(s.recs)
	order, err := sortRecords(s.mem, s.schema, s.keys, src)
	if err != nil {
		return err
	}
	g := newOrderedGather(s.mem, s.schema, src)
	defer g.release()
	for start := 0; start < len(order); start += emitChunk {
		rec, err := g.gather(order[start:min(start+emitChunk, len(order))])
		if err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		if err := emitRecord(ctx, out, rec); err != nil {
			return err
		}
	}
	return nil
}

// sortRecords returns the rows of src (numbered across its records) in
// key order, stably.
func sortRecords(mem memory.Allocator, schema *arrow.Schema, keys []SortKey, src *recordRows) ([]int32, error) {
	n := src.len()
	nk, ok := newNormKeys(schema, keys)
	if !ok {
		return src.sortByComparator(mem, schema, keys)
	}
	stride := nk.width + entryIdx
	buf := make([]byte, n*stride)
	long := false
	cols := make([]arrow.Array, schema.NumFields())
	var rows []int32
	for r, rec := range src.recs {
		for c := range cols {
			cols[c] = rec.Column(c)
		}
		base := src.starts[r]
		m := int(rec.NumRows())
		rows = identity(rows, m)
		l, err := nk.encode(buf[base*stride:], stride, cols, rows)
		if err != nil {
			return nil, err
		}
		long = long || l
		for i := 0; i < m; i++ {
			setEntryRow(buf[(base+i)*stride:], stride, int32(base+i))
		}
	}
	var str func(row int32, col int) []byte
	if long {
		str = src.keyString
	}
	radixSort(buf, n, stride, nk, str)
	order := make([]int32, n)
	for i := range order {
		order[i] = entryRow(buf[i*stride:], stride)
	}
	return order, nil
}

func (s *Sort) releaseRecs() {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
	s.recRows = 0
}

// Close releases buffered records, the reservation and any runs.
func (s *Sort) Close() {
	s.releaseRecs()
	s.rows = nil
	s.res.Release()
	if s.dir != nil {
		s.spilled.add(s.dir.stats)
		s.dir.remove()
		s.dir = nil
	}
	s.runs = nil
}

// Report implements exec.Reporter: what spilled, if anything.
func (s *Sort) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: s.spilled.counters()}
}
