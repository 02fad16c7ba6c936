package ops

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A VARCHAR column of a composite key (GROUP BY l_returnflag,
// l_linestatus; SearchPhrase, UserID) packs as a 32-bit id that its
// column's interner gives each distinct string, so the whole key is looked
// up as one or two words instead of being encoded as bytes per row. For a
// dictionary-encoded column the interner is consulted once per dictionary
// entry, not per row. Ids are per key index (a join's build and probe use
// one index), so both paths of one index agree on every key: a string
// gets its id the first time either path inserts it.
//
// A string the interner does not know when nothing may be inserted (a
// join probe) spills: the general table, which never holds a key with
// only non-NULL strings that pack, answers "no such key".

// internCol interns one VARCHAR key column.
type internCol struct {
	t    *bytesTable
	n    int32
	dict dictMemo // ids per entry of a dictionary-encoded column
}

// id is v's id, interning it when insert is set; ok false: v has none
// (not interned and no insert, or the column's 2^31 ids are used up).
func (ic *internCol) id(v string, insert bool) (int32, bool) {
	h := ic.t.hash(v)
	if id := ic.t.find(v, h); id >= 0 {
		return id, true
	}
	if !insert || ic.n == math.MaxInt32 {
		return -1, false
	}
	id := ic.n
	ic.n++
	ic.t.insert(v, h, id)
	return id, true
}

// pack ORs the ids of rows 0..n-1 of arr into dst at c's shift; rows
// without an id are marked in spill (NULL rows are spilled already and
// skipped). It reports whether it spilled a row.
func (ic *internCol) pack(arr arrow.Array, c packCol, n int, dst []uint64, spill []bool, insert bool) (bool, error) {
	spilled := false
	put := func(i int, v string) {
		id, ok := ic.id(v, insert)
		if !ok {
			spill[i], spilled = true, true
			return
		}
		dst[i] |= uint64(uint32(id)) << c.shift
	}
	switch a := arr.(type) {
	case *array.String:
		nulls := a.NullN() > 0
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				continue
			}
			put(i, a.Value(i))
		}
		return spilled, nil
	case *array.Dictionary:
		vals, memo, err := ic.dict.of(a)
		if err != nil {
			return false, err
		}
		codes := codesOf(a)
		nulls := a.NullN() > 0
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				continue
			}
			code := codes.at(i)
			if uint(code) >= uint(len(memo)) {
				return false, fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", code, len(memo))
			}
			if id := memo[code]; id >= 0 {
				dst[i] |= uint64(uint32(id)) << c.shift
				continue
			}
			if vals.IsNull(code) {
				// A NULL dictionary entry under a valid code: the row
				// is a NULL key component, which never packs.
				spill[i], spilled = true, true
				continue
			}
			id, ok := ic.id(vals.Value(code), insert)
			if !ok {
				spill[i], spilled = true, true
				continue
			}
			memo[code] = id
			dst[i] |= uint64(uint32(id)) << c.shift
		}
		return spilled, nil
	}
	return false, fmt.Errorf("key column is %s, expected VARCHAR", arr.DataType())
}

func (ic *internCol) release() { ic.dict.release() }

// dictMemo remembers an id per entry of the last dictionary a VARCHAR key
// column came in (a Parquet scan shares one dictionary across a column
// chunk's batches), so a table is consulted once per entry a row uses,
// not once per row. The dictionary is retained, so its memory cannot come
// back as another dictionary at the same address.
type dictMemo struct {
	dict arrow.ArrayData
	ids  []int32 // per entry: its id, -1 until looked up
}

// of returns a's dictionary values and the memo for that dictionary,
// started afresh (all -1) when it is not the last one seen.
func (m *dictMemo) of(a *array.Dictionary) (*array.String, []int32, error) {
	vals, ok := a.Dictionary().(*array.String)
	if !ok {
		return nil, nil, fmt.Errorf("key column is %s, expected VARCHAR", a.DataType())
	}
	if d := a.Data().Dictionary(); d != m.dict {
		if m.dict != nil {
			m.dict.Release()
		}
		d.Retain()
		m.dict = d
		m.ids = growTo(m.ids[:0], vals.Len())
		for i := range m.ids {
			m.ids[i] = -1
		}
	}
	return vals, m.ids, nil
}

func (m *dictMemo) release() {
	if m.dict != nil {
		m.dict.Release()
		m.dict, m.ids = nil, nil
	}
}

// newInterners returns one interner per packStr column of l (nil for the
// others), or nil when l has none.
func newInterners(l *keyLayout) []*internCol {
	var out []*internCol
	for i, c := range l.cols {
		if c.kind != packStr {
			continue
		}
		if out == nil {
			out = make([]*internCol, len(l.cols))
		}
		out[i] = &internCol{t: newBytesTable()}
	}
	return out
}

// dictCodes reads a dictionary array's codes: straight from the INT32
// indices a scan produces, through GetValueIndex for other index types.
type dictCodes struct {
	a   *array.Dictionary
	raw []int32 // nil: not INT32 indices
}

func codesOf(a *array.Dictionary) dictCodes {
	c := dictCodes{a: a}
	if ix, ok := a.Indices().(*array.Int32); ok {
		c.raw = ix.Int32Values()
	}
	return c
}

func (c dictCodes) at(i int) int {
	if c.raw != nil {
		return int(c.raw[i])
	}
	return c.a.GetValueIndex(i)
}
