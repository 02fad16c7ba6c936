package ops

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// UpdatingTopN is ORDER BY ... LIMIT n [OFFSET k] over an unbounded input:
// a continuously updated top-n. After every input batch it emits how the
// visible result (ranks k+1..k+n) changed, as a changelog: -D for each row
// that left it (the row emitted before) and then +I for each row that
// entered it, so applying the changelog gives the current top-n at any
// moment. A row that enters and leaves within one batch emits nothing. The
// output is the input columns then the row kind in a last VARCHAR column
// ("op").
//
// It is row form by construction, like UpdatingAggregate: a changelog row
// carries a kind that a born-columnar result has no column for, and a -D
// must repeat a row emitted earlier. Its input is materialised here.
type UpdatingTopN struct {
	keys   []SortKey
	cmp    func(a, b exec.Row) int
	n      int // visible rows
	offset int // ranks skipped before the visible ones
	out    *arrow.Schema
	err    error

	// top holds the best n+offset rows seen so far, best first; ties keep
	// arrival order (seq), as the bounded Sort does.
	top []topEntry
	seq uint64
	// lastWins: a later arrival wins ties (a deduplication keeping the
	// last row); the default keeps the earlier, as the bounded Sort does.
	lastWins bool
	// prev is the visible window as last emitted; inWindow marks its seqs
	// during a diff.
	prev     []topEntry
	inWindow map[uint64]bool
	// left and entered are the window's changes of one batch.
	left, entered []topEntry

	// pool, for a changelog input (NewRetractingTopN): every row the
	// input holds now (topn_retract.go); buf encodes a row's key.
	pool map[string]*pooled
	buf  []byte
	// held counts the copies in pool; rebuilds the times the ranked
	// prefix (top) was rebuilt from all of them.
	held, rebuilds int
}

type topEntry struct {
	row exec.Row
	seq uint64
}

// NewUpdatingTopN returns a top-n of the first limit rows after skipping
// offset, ordered by keys; out is the input columns and a final "op"
// VARCHAR column.
func NewUpdatingTopN(keys []SortKey, limit, offset int64, out *arrow.Schema) *UpdatingTopN {
	t := &UpdatingTopN{keys: keys, cmp: rowComparator(keys), out: out, inWindow: map[uint64]bool{}}
	switch {
	case out.NumFields() < 1 || out.Field(out.NumFields()-1).Type.ID() != arrow.STRING:
		t.err = fmt.Errorf("updating top-n: the last output column must be the VARCHAR row kind")
	case limit < 0 || offset < 0:
		t.err = fmt.Errorf("updating top-n: LIMIT %d OFFSET %d: both must be non-negative", limit, offset)
	case limit > 1<<24 || offset > 1<<24 || limit+offset > 1<<24:
		// Kept in memory and shifted on insertion: a bound on what a
		// continuously maintained result can hold.
		t.err = fmt.Errorf("updating top-n: LIMIT %d OFFSET %d over an unbounded input keeps too many rows (at most %d)", limit, offset, 1<<24)
	default:
		t.n, t.offset = int(limit), int(offset)
	}
	return t
}

// Kind implements exec.Operator.
func (t *UpdatingTopN) Kind() string { return "updating_topn" }

// Capabilities: rows in, rows out (see the type), each row with its kind.
func (t *UpdatingTopN) Capabilities() exec.Capabilities {
	return exec.Capabilities{ChangelogOutput: true}
}

// Keys are the sort keys, for EXPLAIN.
func (t *UpdatingTopN) Keys() []SortKey { return t.keys }

func (t *UpdatingTopN) check(schema *arrow.Schema) error {
	if t.err != nil {
		return t.err
	}
	if schema.NumFields() != t.out.NumFields()-1 {
		return fmt.Errorf("updating top-n: input has %d columns, the output schema expects %d before the row kind", schema.NumFields(), t.out.NumFields()-1)
	}
	for _, k := range t.keys {
		if k.Col < 0 || k.Col >= schema.NumFields() {
			return fmt.Errorf("updating top-n: key column %d out of range (input has %d columns)", k.Col, schema.NumFields())
		}
	}
	return nil
}

// Process inserts the batch's rows that beat the current last kept row and
// emits what changed in the visible window.
func (t *UpdatingTopN) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if t.pool != nil {
		return t.processChangelog(ctx, b, out)
	}
	if err := t.check(b.Schema()); err != nil {
		return err
	}
	capacity := t.n + t.offset
	if t.n == 0 {
		return nil // LIMIT 0: the result is empty forever
	}
	changed := false   // every insertion lands within the kept ranks
	first := t.seq + 1 // the batch's first row
	for _, r := range b.Rows() {
		t.seq++
		if t.insert(r, capacity) {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	t.copyKept(first)
	return t.emitChanges(ctx, out)
}

// insert puts r, arrival t.seq, into the kept ranks (at most capacity)
// when it belongs there, and reports whether it did.
func (t *UpdatingTopN) insert(r exec.Row, capacity int) bool {
	if t.rejects(r, capacity) {
		return false
	}
	beats := t.beats
	full := len(t.top) == capacity
	// First position whose row r beats: r goes after its ties, which
	// arrived earlier (before them when lastWins).
	i := sort.Search(len(t.top), func(i int) bool { return beats(t.cmp(r, t.top[i].row)) })
	if full {
		t.top = t.top[:capacity-1]
	}
	t.top = append(t.top, topEntry{})
	copy(t.top[i+1:], t.top[i:])
	t.top[i] = topEntry{row: r, seq: t.seq}
	return true
}

// beats reports whether a row, compared c with a kept row, goes before
// it: a later arrival loses ties unless lastWins.
func (t *UpdatingTopN) beats(c int) bool { return c < 0 || (c == 0 && t.lastWins) }

// rejects reports whether r stays out of full kept ranks: it does not beat
// the last kept row. It reads only r's sort key columns.
func (t *UpdatingTopN) rejects(r exec.Row, capacity int) bool {
	return len(t.top) == capacity && !t.beats(t.cmp(r, t.top[capacity-1].row))
}

// copyKept copies the kept rows that arrived from seq first on: a decoded
// row shares one backing array with its whole batch, which a kept row
// would otherwise pin. Rows that came and went within the batch are never
// copied.
func (t *UpdatingTopN) copyKept(first uint64) {
	for i, e := range t.top {
		if e.seq >= first {
			t.top[i].row = append(make(exec.Row, 0, len(e.row)), e.row...)
		}
	}
}

// visible is the window of ranks offset+1..offset+n.
func (t *UpdatingTopN) visible() []topEntry {
	if len(t.top) <= t.offset {
		return nil
	}
	return t.top[t.offset:min(len(t.top), t.offset+t.n)]
}

// emitChanges diffs the visible window against the one last emitted, by
// arrival identity: -D for the rows that left, then +I for those that
// entered, each in rank order. A row that left and an identical row that
// entered cancel out (OFFSET can shift equal rows through the window).
func (t *UpdatingTopN) emitChanges(ctx context.Context, out exec.Emitter) error {
	t.diff()
	var rows []exec.Row // handed to the consumer, which may keep them
	for _, e := range t.left {
		if e.row != nil {
			rows = append(rows, append(append(make(exec.Row, 0, len(e.row)+1), e.row...), OpDelete))
		}
	}
	for _, e := range t.entered {
		if e.row != nil {
			rows = append(rows, append(append(make(exec.Row, 0, len(e.row)+1), e.row...), OpInsert))
		}
	}
	if len(rows) == 0 {
		return nil // e.g. rows entered the hidden OFFSET ranks only
	}
	return emitRowChunks(ctx, out, t.out, rows)
}

// diff sets t.left and t.entered to the rows that left and entered the
// visible window since t.prev, in rank order (a cancelled pair's rows
// nil), and makes the window t.prev.
func (t *UpdatingTopN) diff() {
	now := t.visible()
	clear(t.inWindow)
	for _, e := range now {
		t.inWindow[e.seq] = true
	}
	t.left = t.left[:0]
	for _, e := range t.prev {
		if !t.inWindow[e.seq] {
			t.left = append(t.left, e)
		}
		delete(t.inWindow, e.seq) // stayed: not new
	}
	t.entered = t.entered[:0]
	for _, e := range now {
		if t.inWindow[e.seq] {
			t.entered = append(t.entered, e)
		}
	}
	t.prev = append(t.prev[:0], now...)
	t.cancelIdentical()
}

// cancelIdentical clears (row = nil) each pair of a left and an entered
// row with identical values. Both lists are in rank order, so only rows
// with equal keys, a run in each list, need a full comparison.
func (t *UpdatingTopN) cancelIdentical() {
	i, j := 0, 0
	for i < len(t.left) && j < len(t.entered) {
		c := t.cmp(t.left[i].row, t.entered[j].row)
		if c < 0 {
			i++
			continue
		}
		if c > 0 {
			j++
			continue
		}
		ie, je := i, j
		for ie < len(t.left) && t.cmp(t.left[ie].row, t.left[i].row) == 0 {
			ie++
		}
		for je < len(t.entered) && t.cmp(t.entered[je].row, t.entered[j].row) == 0 {
			je++
		}
		for a := i; a < ie; a++ {
			for b := j; b < je; b++ {
				if t.entered[b].row != nil && identicalRows(t.left[a].row, t.entered[b].row) {
					t.left[a].row, t.entered[b].row = nil, nil
					break
				}
			}
		}
		i, j = ie, je
	}
}

// OnWatermark forwards the watermark: every change it covers was emitted
// with the batch that caused it.
func (t *UpdatingTopN) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	return out.EmitWatermark(ctx, wm)
}

// Finish has nothing left to emit: the changelog is complete.
func (t *UpdatingTopN) Finish(context.Context, int, exec.Emitter) error { return t.err }

// Close drops the state.
func (t *UpdatingTopN) Close() {
	t.top, t.prev, t.left, t.entered = nil, nil, nil, nil
	if t.pool != nil {
		t.pool = map[string]*pooled{}
	}
}
