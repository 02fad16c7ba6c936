package ops

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// A top-n over an updating result (ORDER BY n DESC LIMIT 3 over a
// streaming GROUP BY) sees rows retracted: a row that leaves its input can
// be one of the visible ranks, and the next best must then move up, so
// the top-n keeps every row its input currently holds (Flink's retractable
// top-n does the same), and emits after each batch the difference from
// the window it last emitted, as the append-only top-n does.
//
// Walking every held row after each batch would cost O(groups) a batch
// (16 ms for 100k groups). Instead t.top is kept as a prefix of all held
// rows in rank order, up to n+offset+reserve long: an arrival that beats
// its last row goes in (the last falls out when it is full), a retraction
// of one of its rows takes it out, and both keep it a prefix. Only when
// retractions shrink it below n+offset while rows are held outside it is
// it rebuilt from every held row. An update of a visible group (-U, then
// +U of a better row) leaves its length unchanged.
const topReserve = 64

// pooled is one distinct row the input holds, with one id per copy (its
// arrival order, which breaks ties as in the append-only top-n).
type pooled struct {
	row exec.Row
	ids []uint64
}

// NewRetractingTopN returns a top-n over a changelog: the input's first
// column is the row kind (+I, -U, +U, -D) and keys index the columns after
// it; out is those columns and a final "op" VARCHAR column.
func NewRetractingTopN(keys []SortKey, limit, offset int64, out *arrow.Schema) *UpdatingTopN {
	t := NewUpdatingTopN(keys, limit, offset, out)
	t.pool = map[string]*pooled{}
	return t
}

// processChangelog applies a batch of changes to the held rows and emits
// what changed in the visible window.
func (t *UpdatingTopN) processChangelog(ctx context.Context, b *exec.Batch, out exec.Emitter) error {
	if t.err != nil {
		return t.err
	}
	if s := b.Schema(); s.NumFields() != t.out.NumFields() || s.Field(0).Type.ID() != arrow.STRING {
		return fmt.Errorf("updating top-n over a changelog: input has %d columns, want the row kind and %d more", s.NumFields(), t.out.NumFields()-1)
	}
	for _, k := range t.keys {
		if k.Col < 0 || k.Col >= t.out.NumFields()-1 {
			return fmt.Errorf("updating top-n: key column %d out of range (%d columns)", k.Col, t.out.NumFields()-1)
		}
	}
	if t.n == 0 {
		return nil
	}
	capacity := t.n + t.offset
	for _, r := range b.Rows() {
		kind, _ := r[0].(string)
		data := r[1:]
		t.buf = t.buf[:0]
		for _, v := range data {
			t.buf = appendExactValue(t.buf, v)
		}
		switch kind {
		case OpInsert, OpUpdateAfter:
			e := t.pool[string(t.buf)]
			if e == nil {
				// A copy: a decoded row shares its batch's backing array.
				e = &pooled{row: append(make(exec.Row, 0, len(data)), data...)}
				t.pool[string(t.buf)] = e
			}
			t.seq++
			e.ids = append(e.ids, t.seq)
			t.held++
			t.arrive(topEntry{row: e.row, seq: t.seq}, capacity+topReserve)
		case OpUpdateBefore, OpDelete:
			e := t.pool[string(t.buf)]
			if e == nil {
				continue // a retraction of a row never held: nothing to remove
			}
			id := e.ids[len(e.ids)-1]
			e.ids = e.ids[:len(e.ids)-1]
			if len(e.ids) == 0 {
				delete(t.pool, string(t.buf))
			}
			t.held--
			t.leave(topEntry{row: e.row, seq: id})
		default:
			return fmt.Errorf("updating top-n: unknown row kind %v", r[0])
		}
	}
	if len(t.top) < capacity && t.held > len(t.top) {
		t.top = t.best(t.top[:0], capacity+topReserve)
		t.rebuilds++
	}
	return t.emitChanges(ctx, out)
}

// rankLess orders held rows: by the keys, ties by arrival.
func (t *UpdatingTopN) rankLess(a, b topEntry) bool {
	if c := t.cmp(a.row, b.row); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

// arrive puts c into the prefix when it belongs there: when every held
// row is in it and there is room, or when c beats its last row.
func (t *UpdatingTopN) arrive(c topEntry, limit int) {
	outside := t.held - 1 - len(t.top) // held rows not in the prefix, before c
	if outside > 0 && (len(t.top) == 0 || !t.rankLess(c, t.top[len(t.top)-1])) {
		return
	}
	i := sort.Search(len(t.top), func(i int) bool { return t.rankLess(c, t.top[i]) })
	t.top = slices.Insert(t.top, i, c)
	if len(t.top) > limit {
		t.top = t.top[:limit]
	}
}

// leave takes c out of the prefix if it is there.
func (t *UpdatingTopN) leave(c topEntry) {
	i := sort.Search(len(t.top), func(i int) bool { return !t.rankLess(t.top[i], c) })
	if i < len(t.top) && t.top[i].seq == c.seq {
		t.top = slices.Delete(t.top, i, i+1)
	}
}

// best fills top with the capacity best held rows, best first (ties by
// arrival).
func (t *UpdatingTopN) best(top []topEntry, capacity int) []topEntry {
	less := t.rankLess
	for _, e := range t.pool {
		for _, id := range e.ids {
			c := topEntry{row: e.row, seq: id}
			if len(top) == capacity && !less(c, top[capacity-1]) {
				continue
			}
			i := sort.Search(len(top), func(i int) bool { return less(c, top[i]) })
			if len(top) == capacity {
				top = top[:capacity-1]
			}
			top = append(top, topEntry{})
			copy(top[i+1:], top[i:])
			top[i] = c
		}
	}
	return top
}

// appendExactValue is appendKeyValue without its float and interval
// normalisation: the pool keys a row bit for bit, as a retraction names
// the row emitted before (identicalRows), so a group's 0 and another's -0
// stay two rows, and so do '1 month' and '30 days'.
func appendExactValue(buf []byte, v any) []byte {
	switch x := v.(type) {
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(x))
	case float32:
		return binary.LittleEndian.AppendUint32(append(buf, tagFloat32), math.Float32bits(x))
	case arrow.MonthDayNanoInterval:
		buf = binary.LittleEndian.AppendUint32(append(buf, tagInterval), uint32(x.Months))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(x.Days))
		return binary.LittleEndian.AppendUint64(buf, uint64(x.Nanoseconds))
	}
	return appendKeyValue(buf, v)
}
