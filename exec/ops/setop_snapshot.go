package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// setOpStateVersion is the layout of an INTERSECT/EXCEPT's state:
//
//	"clock"   Value: the held watermark and whether the right input ended
//	"rows"    every distinct row seen, in key-id order, decoded, with its
//	          count (the right copies still to take; for EXCEPT, non-zero
//	          once the row must not come out)
//	"pending" the left batches held until the right input ends
//
// A restore inserts the rows into a fresh key index in that order, so each
// gets the id it had.
const setOpStateVersion = 1

var _ exec.Snapshotter = (*SetOp)(nil)

// holdNew keeps the rows of rec that got new key ids (s.newRows), decoded.
func (s *SetOp) holdNew(rec arrow.RecordBatch) error {
	if len(s.newRows) == 0 {
		return nil
	}
	defer func() { s.newRows = s.newRows[:0] }()
	g, err := gatherRecord(s.mem, rec.Schema(), recordColumns(rec), s.newRows)
	if err != nil {
		return fmt.Errorf("%s: %w", s.kind, err)
	}
	defer g.Release()
	p, err := plainRecord(s.mem, s.plain, g)
	if err != nil {
		return fmt.Errorf("%s: %w", s.kind, err)
	}
	s.distinct = append(s.distinct, p)
	return nil
}

// holdNewRows is holdNew for a row batch.
func (s *SetOp) holdNewRows(rows []exec.Row) error {
	if len(s.newRows) == 0 {
		return nil
	}
	defer func() { s.newRows = s.newRows[:0] }()
	kept := make([]exec.Row, len(s.newRows))
	for k, i := range s.newRows {
		kept[k] = rows[i]
	}
	rec, err := exec.EncodeRows(s.mem, s.plain, kept)
	if err != nil {
		return fmt.Errorf("%s: %w", s.kind, err)
	}
	s.distinct = append(s.distinct, rec)
	return nil
}

// rowsSchema is the "rows" part's schema.
func (s *SetOp) rowsSchema() *arrow.Schema {
	fs := append(append([]arrow.Field(nil), s.plain.Fields()...), arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fs, nil)
}

// SnapshotState implements exec.Snapshotter.
func (s *SetOp) SnapshotState(_ context.Context, w exec.StateWriter) error {
	kind := s.Kind()
	if s.err != nil {
		return s.err
	}
	if err := writeHeader(w, kind, setOpStateVersion); err != nil {
		return err
	}
	if err := writeInts(w, "clock", s.heldWM, b2i64(s.rightDone)); err != nil {
		return err
	}
	schema := s.rowsSchema()
	recs := make([]arrow.RecordBatch, 0, len(s.distinct))
	defer func() { releaseRecs(recs) }()
	first := 0
	for _, d := range s.distinct {
		n := int(d.NumRows())
		counts := make([]int64, n)
		if first < len(s.counts) { // counts grow lazily: a missing one is 0
			copy(counts, s.counts[first:min(first+n, len(s.counts))])
		}
		cnt := int64Column(s.mem, counts)
		rec, err := withColumns(schema, append(recordColumns(d), cnt), int64(n))
		cnt.Release()
		if err != nil {
			return fmt.Errorf("%s state: %w", kind, err)
		}
		recs = append(recs, rec)
		first += n
	}
	if first != s.keys.len() {
		return fmt.Errorf("%s state: %d rows held for %d keys", kind, first, s.keys.len())
	}
	if len(recs) > 0 {
		if err := w.Records("rows", schema, recs...); err != nil {
			return err
		}
	}
	if err := writePending(w, s.mem, s.pending); err != nil {
		return fmt.Errorf("%s state: held left batches: %w", kind, err)
	}
	return nil
}

// RestoreState implements exec.Snapshotter.
func (s *SetOp) RestoreState(_ context.Context, r exec.StateReader) error {
	kind := s.Kind()
	if s.err != nil {
		return s.err
	}
	if err := checkHeader(r, kind, setOpStateVersion); err != nil {
		return err
	}
	if s.keys.len() > 0 || len(s.pending) > 0 || s.rightDone {
		return fmt.Errorf("%s state: restored into an operator that has already run", kind)
	}
	v, err := readInts(r, kind, "clock", 2)
	if err != nil {
		return err
	}
	_, rows, _, err := readPart(r, kind, "rows", s.rowsSchema())
	if err != nil {
		return err
	}
	defer releaseRecs(rows)
	for _, rec := range rows {
		if err := s.restoreRows(rec); err != nil {
			return fmt.Errorf("%s state: %w", kind, err)
		}
	}
	_, pending, _, err := readPart(r, kind, "pending", nil)
	if err != nil {
		return err
	}
	for i, rec := range pending {
		if err := s.checkSchema(0, rec.Schema()); err != nil {
			releaseRecs(pending[i:])
			return fmt.Errorf("%s state: held left batches: %w", kind, err)
		}
		s.pending = append(s.pending, pendingProbe{b: exec.NewColumnarBatch(rec), columnar: true})
	}
	s.heldWM, s.rightDone = v[0], v[1] != 0
	return nil
}

// restoreRows inserts one batch of stored rows: their keys get the next ids.
func (s *SetOp) restoreRows(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	nf := s.plain.NumFields()
	cols := recordColumns(rec)
	counts, err := int64sOf(cols[nf], "count")
	if err != nil {
		return err
	}
	first := s.keys.len()
	ids, err := s.keys.idsColumnar(cols[:nf], n, true, nil, nil)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if int(id) != first+i {
			return fmt.Errorf("row %d is there twice", first+i)
		}
	}
	s.counts = append(growTo(s.counts, first)[:first], counts...)
	s.distinct = append(s.distinct, array.NewRecordBatch(s.plain, cols[:nf], int64(n)))
	return nil
}
