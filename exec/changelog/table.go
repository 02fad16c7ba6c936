// Package changelog applies an updating result (a changelog of +I, -U, +U
// and -D rows) to a table, the one way every display of such a result does
// it: the shell's table result mode, the kernel's live table and the test
// runners. Each change costs O(1) (a hash lookup by key and a linked-list
// splice), so a table of a million groups costs what printing the changes
// costs, not a scan of the table per retraction.
package changelog

import (
	"errors"
	"fmt"
	"slices"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
)

// Row kinds, as the first ("op") column of an updating result spells them.
const (
	Insert        = "+I"
	UpdateBefore  = "-U"
	UpdateAfter   = "+U"
	Delete        = "-D"
	kindColumnErr = "changelog: row kind %v is not +I, -U, +U or -D"
)

// ErrNotInTable is returned (wrapped) when a retraction names a row the
// table does not hold. Displays may go on; a test runner fails on it.
var ErrNotInTable = errors.New("retracts a row not in the table")

// entry is one distinct row (or, with an upsert key, one key's row) and how
// many times it is in the table.
type entry struct {
	row   exec.Row
	count int
	hash  uint64
	// shown links display order; recent the order rows were last changed
	// in (oldest first).
	shown, recent link
}

// link is an entry's place in one of a Table's two orders.
type link struct{ prev, next *entry }

// list is one order of entries, doubly linked through the link at gives.
type list struct {
	head, tail *entry
	at         func(*entry) *link
}

// linkAfter links e after after (nil: at the head).
func (l *list) linkAfter(e, after *entry) {
	k := l.at(e)
	k.prev = after
	if after == nil {
		k.next, l.head = l.head, e
	} else {
		k.next, l.at(after).next = l.at(after).next, e
	}
	if k.next != nil {
		l.at(k.next).prev = e
	} else {
		l.tail = e
	}
}

// unlink takes e out of the list (if it is in it).
func (l *list) unlink(e *entry) {
	k := l.at(e)
	if k.prev == nil && l.head != e {
		return // not linked
	}
	if k.prev != nil {
		l.at(k.prev).next = k.next
	} else {
		l.head = k.next
	}
	if k.next != nil {
		l.at(k.next).prev = k.prev
	} else {
		l.tail = k.prev
	}
	*k = link{}
}

// Table is a changelog applied. Display order is stable: rows keep the
// place they were inserted at, and a +U that follows its -U takes the
// retracted row's place, so an updated group does not jump to the end.
// With a rank order (a continuous top-n) rows are kept sorted instead.
//
// A Table is not safe for concurrent use.
type Table struct {
	key    []int                   // upsert key columns; nil: the whole row
	order  func(a, b exec.Row) int // rank order; nil: display order
	index  map[uint64][]*entry     // by hash of the key (or row)
	shown  list                    // display order (unordered tables)
	recent list                    // least to most recently changed
	rank   []*entry                // ordered tables: entries in rank order
	rows   int                     // rows in the table, duplicates counted
	// hole is where the last change (a -U) removed a row: the +U that
	// follows is inserted after holeAt (nil: at the head).
	hole    bool
	holeAt  *entry
	changes int64
	scratch exec.Row
}

// NewTable returns an empty table. key, when the plan knows one (the
// columns that identify a row, as a GROUP BY's keys do), makes a change
// find its row by those columns alone and +I/+U of a present key replace
// its row; nil keys rows by all their columns, duplicates counted. order,
// when not nil, keeps rows sorted by it (ties in arrival order).
func NewTable(key []int, order func(a, b exec.Row) int) *Table {
	return &Table{key: key, order: order, index: map[uint64][]*entry{},
		shown:  list{at: func(e *entry) *link { return &e.shown }},
		recent: list{at: func(e *entry) *link { return &e.recent }}}
}

// Len is the number of rows in the table, duplicates counted.
func (t *Table) Len() int { return t.rows }

// Changes is the number of changes applied (including those that failed).
func (t *Table) Changes() int64 { return t.changes }

// Apply applies one change; row is the row without its kind and is kept by
// the table (the caller must not modify it afterwards). A retraction of a
// row not in the table changes nothing and returns an error wrapping
// ErrNotInTable.
func (t *Table) Apply(kind any, row exec.Row) error {
	t.changes++
	hole, holeAt := t.hole, t.holeAt
	t.hole, t.holeAt = false, nil
	switch kind {
	case Insert, UpdateAfter:
		t.add(row, hole && kind == UpdateAfter, holeAt)
		return nil
	case UpdateBefore, Delete:
		e := t.find(row)
		if e == nil {
			return fmt.Errorf("changelog: %v %v %w", kind, row, ErrNotInTable)
		}
		t.remove(e, kind == UpdateBefore)
		return nil
	default:
		return fmt.Errorf(kindColumnErr, kind)
	}
}

// ApplyBatch applies the first n rows of b, whose column 0 is the row kind.
// It stops at the first error that is not ErrNotInTable and returns it;
// retractions of absent rows are skipped and the first is returned after
// the rest applied, so a display can ignore it and a test can fail on it.
func (t *Table) ApplyBatch(b *exec.Batch, n int) error {
	width := b.Schema().NumFields()
	var absent error
	for i := range n {
		var kind any
		row := make(exec.Row, width-1)
		if b.IsColumnar() {
			rec := b.Record()
			kind = exec.Value(rec.Column(0), i)
			for c := range row {
				row[c] = exec.Value(rec.Column(c+1), i)
			}
		} else {
			r := b.Rows()[i]
			kind = r[0]
			copy(row, r[1:])
		}
		if err := t.Apply(kind, row); err != nil {
			if !errors.Is(err, ErrNotInTable) {
				return err
			}
			if absent == nil {
				absent = err
			}
		}
	}
	return absent
}

// Rows returns up to n rows from the top of the table, in display (or
// rank) order; n < 0 returns them all.
func (t *Table) Rows(n int) []exec.Row {
	if n < 0 || n > t.rows {
		n = t.rows
	}
	out := make([]exec.Row, 0, n)
	if t.order != nil {
		for _, e := range t.rank {
			for range e.count {
				if len(out) == n {
					return out
				}
				out = append(out, e.row)
			}
		}
		return out
	}
	for e := t.shown.head; e != nil && len(out) < n; e = e.shown.next {
		for range min(e.count, n-len(out)) {
			out = append(out, e.row)
		}
	}
	return out
}

// LastChanged returns up to n rows, those inserted or updated last, the
// most recent last.
func (t *Table) LastChanged(n int) []exec.Row {
	n = min(n, t.rows)
	out := make([]exec.Row, n)
	i := n
	for e := t.recent.tail; e != nil && i > 0; e = e.recent.prev {
		for range min(e.count, i) {
			i--
			out[i] = e.row
		}
	}
	return out
}

// add inserts row: at the hole a -U left when atHole, else at the end (or
// at its rank).
func (t *Table) add(row exec.Row, atHole bool, holeAt *entry) {
	h := t.hash(row)
	if e := t.lookup(h, row); e != nil {
		t.touch(e)
		if t.key == nil {
			e.count++ // a duplicate row
			t.rows++
			return
		}
		// An upsert: the key's new row, in its place (or at its new rank).
		if t.order != nil {
			t.unrank(e)
			e.row = row
			t.insertRanked(e)
		} else {
			e.row = row
		}
		return
	}
	e := &entry{row: row, count: 1, hash: h}
	t.index[h] = append(t.index[h], e)
	t.rows++
	t.touch(e)
	switch {
	case t.order != nil:
		t.insertRanked(e)
	case atHole:
		t.shown.linkAfter(e, holeAt)
	default:
		t.shown.linkAfter(e, t.shown.tail)
	}
}

// insertRanked puts e at its rank, after its equals so ties keep arrival
// order.
func (t *Table) insertRanked(e *entry) {
	t.rank = slices.Insert(t.rank, t.rankOf(e.row, true), e)
}

// rankOf is where row goes in rank order: after its equals when after,
// else before them (at the first).
func (t *Table) rankOf(row exec.Row, after bool) int {
	at, _ := slices.BinarySearchFunc(t.rank, row, func(x *entry, v exec.Row) int {
		if c := t.order(x.row, v); c < 0 || after && c == 0 {
			return -1
		}
		return 1
	})
	return at
}

// unrank takes e out of rank order: a binary search to its first equal,
// then a walk over the ties.
func (t *Table) unrank(e *entry) {
	for i := t.rankOf(e.row, false); i < len(t.rank); i++ {
		if t.rank[i] == e {
			t.rank = slices.Delete(t.rank, i, i+1)
			return
		}
	}
	// Not found by rank (an order that is not a total preorder on these
	// rows): fall back to a scan.
	t.rank = slices.DeleteFunc(t.rank, func(x *entry) bool { return x == e })
}

// remove takes one occurrence of e's row out; hole records its place for
// a +U to follow.
func (t *Table) remove(e *entry, hole bool) {
	t.rows--
	e.count--
	if e.count > 0 {
		// A duplicate remains: an update of one of them goes next to it.
		t.hole, t.holeAt = hole, e
		return
	}
	bucket := t.index[e.hash]
	i := slices.Index(bucket, e)
	bucket = slices.Delete(bucket, i, i+1)
	if len(bucket) == 0 {
		delete(t.index, e.hash)
	} else {
		t.index[e.hash] = bucket
	}
	t.recent.unlink(e)
	if t.order != nil {
		t.unrank(e)
		return
	}
	t.hole, t.holeAt = hole, e.shown.prev
	t.shown.unlink(e)
}

// touch makes e the most recently changed entry.
func (t *Table) touch(e *entry) {
	if t.recent.tail == e {
		return
	}
	t.recent.unlink(e)
	t.recent.linkAfter(e, t.recent.tail)
}

// find is the entry a retraction names.
func (t *Table) find(row exec.Row) *entry { return t.lookup(t.hash(row), row) }

func (t *Table) lookup(h uint64, row exec.Row) *entry {
	for _, e := range t.index[h] {
		if t.same(e.row, row) {
			return e
		}
	}
	return nil
}

// same reports whether a and b are the same table row: identical keys
// (or whole rows), as ops.SameRow judges a retraction.
func (t *Table) same(a, b exec.Row) bool {
	if t.key == nil {
		return ops.SameRow(a, b)
	}
	for _, c := range t.key {
		if !ops.SameRow(exec.Row{a[c]}, exec.Row{b[c]}) {
			return false
		}
	}
	return true
}

func (t *Table) hash(row exec.Row) uint64 {
	if t.key == nil {
		return hashRow(row)
	}
	t.scratch = t.scratch[:0]
	for _, c := range t.key {
		t.scratch = append(t.scratch, row[c])
	}
	return hashRow(t.scratch)
}
