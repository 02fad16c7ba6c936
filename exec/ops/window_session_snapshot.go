package ops

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// Session windows keep input rows, not aggregates (window_session.go): a
// checkpoint stores the pending rows, gathered out of the kept batches
// (decoded from dictionaries), one batch per kept batch in arrival order,
// rows in their order there. A restore keeps each as a batch again and
// re-indexes its events (key and time are read from the rows), so the
// restored operator cuts and folds the same sessions.

func (w *WindowAggregate) snapshotSessions(sw exec.StateWriter) error {
	s := w.sess
	pending := map[int32][]int32{}
	for _, ke := range s.byKey {
		for _, ev := range ke.evs {
			pending[ev.batch] = append(pending[ev.batch], ev.row)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	var schema *arrow.Schema
	var recs []arrow.RecordBatch
	defer func() { releaseRecs(recs) }()
	for _, id := range slices.Sorted(maps.Keys(pending)) {
		rows := pending[id]
		slices.Sort(rows)
		b := s.held[id].b
		if schema == nil {
			schema = plainSchema(b.Schema())
		}
		rec, err := pendingRows(w, schema, b, rows)
		if err != nil {
			return fmt.Errorf("window aggregate %s state: %w", w.spec, err)
		}
		recs = append(recs, rec)
	}
	return sw.Records("session.events", schema, recs...)
}

// pendingRows gathers rows of a kept batch into a record of schema.
func pendingRows(w *WindowAggregate, schema *arrow.Schema, b *exec.Batch, rows []int32) (arrow.RecordBatch, error) {
	if !b.IsColumnar() {
		all := b.Rows()
		sel := make([]exec.Row, len(rows))
		for i, r := range rows {
			sel[i] = all[r]
		}
		return exec.EncodeRows(w.mem, schema, sel)
	}
	cols, err := plainColumns(w.mem, schema, b.Record())
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	return gatherRecord(w.mem, schema, cols, rows)
}

func (w *WindowAggregate) restoreSessions(r exec.StateReader) error {
	kind := w.Kind()
	if hasPart(r, "panes") {
		return fmt.Errorf("%s state: the snapshot is of TUMBLE or HOP windows, this operator is %s", kind, w.spec)
	}
	schema, recs, ok, err := readPart(r, kind, "session.events", nil)
	if err != nil || !ok {
		return err
	}
	defer releaseRecs(recs)
	mul, div, err := w.timeScale(schema)
	if err != nil {
		return fmt.Errorf("%s state: %w", kind, err)
	}
	if err := w.sessionKeys(schema); err != nil {
		return fmt.Errorf("%s state: %w", kind, err)
	}
	s := w.sess
	for _, rec := range recs {
		n := int(rec.NumRows())
		if n == 0 {
			continue
		}
		var ids []int32
		if s.keys != nil {
			keyCols := make([]arrow.Array, len(w.groupCols))
			for i, c := range w.groupCols {
				keyCols[i] = rec.Column(c)
			}
			if ids, err = s.keys.idsColumnar(keyCols, n, true, nil, nil); err != nil {
				return fmt.Errorf("%s state: %w", kind, err)
			}
		}
		col := rec.Column(w.timeCol).(*array.Timestamp) // timeScale checked the type
		if col.NullN() > 0 {
			return fmt.Errorf("%s state: a pending session row without event time", kind)
		}
		rec.Retain()
		b := exec.NewColumnarBatch(rec)
		id, h := s.hold(b)
		b.Release()
		for i, v := range col.TimestampValues() {
			var key int32
			if ids != nil {
				key = ids[i]
			}
			s.add(key, sessEvent{ts: toMicros(int64(v), mul, div), batch: id, row: int32(i)})
			h.live++
		}
	}
	return nil
}
