package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// Session windows merge: an event can join two sessions into one, so a
// session's aggregate is only known when the watermark has passed its end.
// The operator therefore keeps the input batches (retained, columnar or
// rows) and, per key, the time and position of each pending event. When the
// watermark passes, each key's events are ordered and cut into sessions
// (a gap of more than Gap between consecutive events); the sessions that
// ended are gathered out of the kept batches with their bounds as two extra
// group columns and folded by one HashAggregate, so the fold is the hash
// aggregate's typed columnar one.

type sessionState struct {
	keys   *keyIndex // nil without group columns: every row is key 0
	ids    []int32
	byKey  map[int32]*keyEvents
	held   map[int32]*heldBatch
	nextID int32
}

type keyEvents struct {
	evs   []sessEvent
	minTS int64
}

type sessEvent struct {
	ts    int64 // µs
	batch int32
	row   int32
}

type heldBatch struct {
	b    *exec.Batch
	live int // pending events still in it
	// fired rows of the current fire, with their session bounds
	rows         []int32
	starts, ends []int64
}

func newSessionState() *sessionState {
	return &sessionState{byKey: map[int32]*keyEvents{}, held: map[int32]*heldBatch{}}
}

func (s *sessionState) open() int { return len(s.byKey) }

func (s *sessionState) release() {
	for id, h := range s.held {
		h.b.Release()
		delete(s.held, id)
	}
	s.byKey = map[int32]*keyEvents{}
	s.keys.release() // the last dictionary of a dictionary-encoded key
}

func (s *sessionState) hold(b *exec.Batch) (int32, *heldBatch) {
	b.Retain()
	id := s.nextID
	s.nextID++
	h := &heldBatch{b: b}
	s.held[id] = h
	return id, h
}

func (s *sessionState) add(key int32, ev sessEvent) {
	ke := s.byKey[key]
	if ke == nil {
		ke = &keyEvents{minTS: ev.ts}
		s.byKey[key] = ke
	}
	ke.evs = append(ke.evs, ev)
	ke.minTS = min(ke.minTS, ev.ts)
}

func (w *WindowAggregate) sessionKeys(in *arrow.Schema) error {
	if w.sess.keys != nil || len(w.groupCols) == 0 {
		return nil
	}
	types := make([]arrow.DataType, len(w.groupCols))
	for i, c := range w.groupCols {
		if c < 0 || c >= in.NumFields() {
			return fmt.Errorf("window aggregate: group column %d out of range (input has %d columns)", c, in.NumFields())
		}
		types[i] = in.Field(c).Type
	}
	w.sess.keys = newKeyIndex(chooseKeyKind(types), true)
	return nil
}

// sessionLate reports whether an event of key at ts is late. As in Flink,
// lateness is judged against the session the event would merge into, not
// its own window [ts, ts+gap): an event whose own window already fired is
// kept when it touches a session of its key still open (one of the key's
// pending events within the gap), and dropped otherwise.
func (w *WindowAggregate) sessionLate(key int32, ts int64) bool {
	gap := w.spec.Gap.Microseconds()
	if !w.fired(ts + gap) {
		return false
	}
	if ke := w.sess.byKey[key]; ke != nil {
		for _, ev := range ke.evs {
			if ev.ts-gap <= ts && ts <= ev.ts+gap {
				return false
			}
		}
	}
	return true
}

// sessionAdd keeps a columnar batch and indexes its events by key.
func (w *WindowAggregate) sessionAdd(b *exec.Batch, col *array.Timestamp, mul, div int64) error {
	rec := b.Record()
	if err := w.sessionKeys(rec.Schema()); err != nil {
		return err
	}
	s := w.sess
	n := int(rec.NumRows())
	var ids []int32
	if s.keys != nil {
		keyCols := make([]arrow.Array, len(w.groupCols))
		for i, c := range w.groupCols {
			keyCols[i] = rec.Column(c)
		}
		var err error
		if s.ids, err = s.keys.idsColumnar(keyCols, n, true, s.ids, nil); err != nil {
			return fmt.Errorf("window aggregate: %w", err)
		}
		ids = s.ids
	}
	vals := col.TimestampValues()
	var id int32 = -1
	var h *heldBatch
	for i, v := range vals {
		if col.IsNull(i) {
			w.nullTS++
			continue
		}
		ts := toMicros(int64(v), mul, div)
		var key int32
		if ids != nil {
			key = ids[i]
		}
		if w.sessionLate(key, ts) {
			w.late++
			continue
		}
		if h == nil {
			id, h = s.hold(b)
		}
		s.add(key, sessEvent{ts: ts, batch: id, row: int32(i)})
		h.live++
	}
	return nil
}

// sessionAddRows is sessionAdd for a row batch.
func (w *WindowAggregate) sessionAddRows(b *exec.Batch, rows []exec.Row, mul, div int64) error {
	if err := w.sessionKeys(b.Schema()); err != nil {
		return err
	}
	s := w.sess
	var id int32 = -1
	var h *heldBatch
	vals := make([]any, len(w.groupCols))
	for i, r := range rows {
		if r[w.timeCol] == nil {
			w.nullTS++
			continue
		}
		v, ok := r[w.timeCol].(arrow.Timestamp)
		if !ok {
			return fmt.Errorf("window aggregate: row %d: time column holds %T", i, r[w.timeCol])
		}
		ts := toMicros(int64(v), mul, div)
		var key int32
		if s.keys != nil {
			for c, g := range w.groupCols {
				vals[c] = r[g]
			}
			k, _, err := s.keys.idRow(vals, true)
			if err != nil {
				return fmt.Errorf("window aggregate: row %d: %w", i, err)
			}
			key = k
		}
		if w.sessionLate(key, ts) {
			w.late++
			continue
		}
		if h == nil {
			id, h = s.hold(b)
		}
		s.add(key, sessEvent{ts: ts, batch: id, row: int32(i)})
		h.live++
	}
	return nil
}

// sessionFire cuts every key's pending events into sessions, and folds and
// removes the sessions whose last millisecond is at or before wm.
func (w *WindowAggregate) sessionFire(ctx context.Context, wm int64, useCol bool) ([]firePart, error) {
	s := w.sess
	gap := w.spec.Gap.Microseconds()
	var touched []int32
	fired := 0
	for key, ke := range s.byKey {
		if windowTime(ke.minTS+gap) > wm {
			continue // even its earliest event's session is still open
		}
		slices.SortFunc(ke.evs, func(a, b sessEvent) int {
			switch {
			case a.ts < b.ts:
				return -1
			case a.ts > b.ts:
				return 1
			}
			return 0
		})
		// Sessions end in order, so the fired ones are a prefix.
		cut := 0
		for i := 0; i < len(ke.evs); {
			start, last := ke.evs[i].ts, ke.evs[i].ts
			j := i + 1
			// Windows [ts, ts+gap) that touch merge, as Flink's do: an
			// event exactly gap after the last one joins its session.
			for j < len(ke.evs) && ke.evs[j].ts <= last+gap {
				last = max(last, ke.evs[j].ts)
				j++
			}
			end := last + gap
			if windowTime(end) > wm {
				break
			}
			for _, ev := range ke.evs[i:j] {
				h := s.held[ev.batch]
				if len(h.rows) == 0 {
					touched = append(touched, ev.batch)
				}
				h.rows = append(h.rows, ev.row)
				h.starts = append(h.starts, start)
				h.ends = append(h.ends, end)
			}
			fired++
			i, cut = j, j
		}
		if cut == len(ke.evs) {
			delete(s.byKey, key)
		} else if cut > 0 {
			ke.evs = append(ke.evs[:0], ke.evs[cut:]...)
			ke.minTS = ke.evs[0].ts
		}
	}
	w.firedPanes += int64(fired)
	if len(touched) == 0 {
		return nil, nil
	}
	slices.Sort(touched)
	// One aggregate over every fired session: group columns, then the
	// session bounds (BIGINT µs) as two more keys.
	// Kept batches may differ in dictionary encoding (a scan's plain
	// pages, a restored checkpoint): the fold reads them all plain.
	h0 := s.held[touched[0]].b
	in := plainSchema(h0.Schema())
	nIn := in.NumFields()
	ext := arrow.NewSchema(append(append([]arrow.Field{}, in.Fields()...),
		arrow.Field{Name: "__session_start", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "__session_end", Type: arrow.PrimitiveTypes.Int64}), nil)
	k := len(w.groupCols)
	aggOutFields := append([]arrow.Field{}, w.pane.Fields()[:k]...)
	aggOutFields = append(aggOutFields, ext.Field(nIn), ext.Field(nIn+1))
	aggOutFields = append(aggOutFields, w.pane.Fields()[k:]...)
	groups := append(append([]int{}, w.groupCols...), nIn, nIn+1)
	agg := NewHashAggregate(groups, w.aggs, arrow.NewSchema(aggOutFields, nil), w.mem)
	defer agg.Close()
	var foldErr error
	for _, id := range touched {
		h := s.held[id]
		if foldErr == nil {
			foldErr = w.foldSessionRows(ctx, agg, ext, h)
		}
		h.live -= len(h.rows)
		h.rows, h.starts, h.ends = h.rows[:0], h.starts[:0], h.ends[:0]
		if h.live == 0 {
			h.b.Release()
			delete(s.held, id)
		}
	}
	if foldErr != nil {
		return nil, fmt.Errorf("window aggregate %s: %w", w.spec, foldErr)
	}
	got, err := finishPane(ctx, agg, useCol)
	if err != nil {
		return nil, fmt.Errorf("window aggregate %s: %w", w.spec, err)
	}
	// Move the bounds out of the key columns: group columns + aggregates,
	// with the window per row.
	for pi := range got {
		p := &got[pi]
		if p.rec != nil {
			starts := append([]int64(nil), p.rec.Column(k).(*array.Int64).Int64Values()...)
			ends := append([]int64(nil), p.rec.Column(k+1).(*array.Int64).Int64Values()...)
			cols := make([]arrow.Array, 0, w.pane.NumFields())
			for c := 0; c < int(p.rec.NumCols()); c++ {
				if c != k && c != k+1 {
					cols = append(cols, p.rec.Column(c))
				}
			}
			rec := array.NewRecordBatch(w.pane, cols, p.rec.NumRows())
			p.rec.Release()
			p.rec, p.starts, p.ends = rec, starts, ends
			continue
		}
		p.starts = make([]int64, len(p.rows))
		p.ends = make([]int64, len(p.rows))
		rows := make([]exec.Row, len(p.rows))
		for i, r := range p.rows {
			p.starts[i], p.ends[i] = r[k].(int64), r[k+1].(int64)
			nr := make(exec.Row, 0, len(r)-2)
			nr = append(append(nr, r[:k]...), r[k+2:]...)
			rows[i] = nr
		}
		p.rows = rows
	}
	return got, nil
}

// foldSessionRows folds one kept batch's fired rows, with their session
// bounds appended, into agg: gathered columnar when the batch is columnar
// kept by the columnar path), as rows otherwise.
func (w *WindowAggregate) foldSessionRows(ctx context.Context, agg *HashAggregate, ext *arrow.Schema, h *heldBatch) error {
	b := h.b
	if b.IsColumnar() {
		rec := b.Record()
		sub, err := gatherRecord(w.mem, rec.Schema(), recordColumns(rec), h.rows)
		if err != nil {
			return err
		}
		defer sub.Release()
		cols, err := plainColumns(w.mem, arrow.NewSchema(ext.Fields()[:ext.NumFields()-2], nil), sub)
		if err != nil {
			return err
		}
		defer releaseAll(cols)
		sb := array.NewInt64Builder(w.mem)
		sb.AppendValues(h.starts, nil)
		sa := sb.NewArray()
		sb.AppendValues(h.ends, nil)
		ea := sb.NewArray()
		sb.Release()
		defer sa.Release()
		defer ea.Release()
		cols = append(cols, sa, ea)
		eb := exec.NewColumnarBatch(array.NewRecordBatch(ext, cols, int64(len(h.rows))))
		defer eb.Release()
		_, err = agg.ProcessColumnar(ctx, 0, eb, nil)
		return err
	}
	src := b.Rows()
	rows := make([]exec.Row, len(h.rows))
	for i, r := range h.rows {
		row := make(exec.Row, 0, len(src[r])+2)
		rows[i] = append(append(row, src[r]...), h.starts[i], h.ends[i])
	}
	eb := exec.NewRowBatch(ext, rows)
	defer eb.Release()
	return agg.Process(ctx, 0, eb, nil)
}
