package ops

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// A top-n over an updating result (ORDER BY n DESC LIMIT 3 over a
// streaming GROUP BY) sees rows retracted: a row that leaves its input can
// be one of the visible ranks, and the next best must then move up, so
// the top-n keeps every row its input currently holds, not only the best
// n (Flink's retractable top-n does the same). After each batch it picks
// the best offset+n of them and emits the difference from the window it
// last emitted, as the append-only top-n does.
//
// Choosing the window walks every held row (O(rows) a batch, with an
// insertion into the n+offset best): a GROUP BY's result of some 100k
// groups costs about a millisecond a batch.

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
	for _, r := range b.Rows() {
		kind, _ := r[0].(string)
		data := r[1:]
		t.buf = t.buf[:0]
		for _, v := range data {
			t.buf = appendKeyValue(t.buf, v)
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
		case OpUpdateBefore, OpDelete:
			e := t.pool[string(t.buf)]
			if e == nil {
				continue // a retraction of a row never held: nothing to remove
			}
			e.ids = e.ids[:len(e.ids)-1]
			if len(e.ids) == 0 {
				delete(t.pool, string(t.buf))
			}
		default:
			return fmt.Errorf("updating top-n: unknown row kind %v", r[0])
		}
	}
	t.top = t.best(t.top[:0])
	return t.emitChanges(ctx, out)
}

// best fills top with the offset+n best held rows, best first (ties by
// arrival).
func (t *UpdatingTopN) best(top []topEntry) []topEntry {
	capacity := t.n + t.offset
	less := func(a, b topEntry) bool {
		if c := t.cmp(a.row, b.row); c != 0 {
			return c < 0
		}
		return a.seq < b.seq
	}
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
