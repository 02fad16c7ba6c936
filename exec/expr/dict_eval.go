package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A predicate of one dictionary-encoded VARCHAR column and constants
// (SearchPhrase <> '', l_shipmode IN ('AIR', 'AIR REG')) is decided once
// per dictionary entry and then read per row by code, instead of decoding
// the column into plain strings first (ColRef's columnar path does that,
// and ClickBench q12's filter spent most of its time there).

// rawDict is the dictionary-encoded VARCHAR column e reads, when e is a
// column reference to one.
func rawDict(e Expr, rec arrow.RecordBatch) (*array.Dictionary, *array.String, bool) {
	c, ok := e.(*ColRef)
	if !ok || c.Index < 0 || c.Index >= int(rec.NumCols()) || c.T.ID() == arrow.DICTIONARY {
		return nil, nil, false
	}
	d, ok := rec.Column(c.Index).(*array.Dictionary)
	if !ok {
		return nil, nil, false
	}
	vals, ok := d.Dictionary().(*array.String)
	return d, vals, ok
}

// byEntry builds the BOOLEAN result of a predicate decided per dictionary
// entry: truth[e] for entry e, NULL where the row or its entry is NULL
// (known[e] false).
func byEntry(mem memory.Allocator, d *array.Dictionary, truth, known []bool) (arrow.Array, error) {
	n := d.Len()
	vbuf, val := newBits(mem, n)
	mbuf, ok := newBits(mem, n)
	codes, fast := d.Indices().(*array.Int32)
	var raw []int32
	if fast {
		raw = codes.Int32Values()
	}
	nulls := d.NullN() > 0
	for i := 0; i < n; i++ {
		if nulls && d.IsNull(i) {
			continue
		}
		var e int
		if fast {
			e = int(raw[i])
		} else {
			e = d.GetValueIndex(i)
		}
		if uint(e) >= uint(len(truth)) {
			vbuf.Release()
			mbuf.Release()
			return nil, fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", e, len(truth))
		}
		if known[e] {
			ok[i>>3] |= 1 << (i & 7)
			val[i>>3] |= b2u(truth[e]) << (i & 7)
		}
	}
	return finishBool(mem, n, vbuf, mbuf), nil
}

// compareDict is column op constant over a dictionary-encoded VARCHAR
// column, decided per entry; handled false for any other shape.
func (c *Compare) compareDict(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, bool, error) {
	col, other, op := c.l, c.r, c.op
	if _, isCol := col.(*ColRef); !isCol {
		col, other, op = c.r, c.l, c.op.flip()
	}
	lit, isLit := other.(*Literal)
	if !isLit {
		return nil, false, nil
	}
	s, isStr := lit.v.(string)
	if !isStr {
		return nil, false, nil
	}
	d, vals, isDict := rawDict(col, rec)
	if !isDict {
		return nil, false, nil
	}
	truth, known := make([]bool, vals.Len()), make([]bool, vals.Len())
	for e := range truth {
		if vals.IsValid(e) {
			known[e], truth[e] = true, compareValues(op, vals.Value(e), s)
		}
	}
	out, err := byEntry(mem, d, truth, known)
	return out, true, err
}

// inDict is a constant IN list over a dictionary-encoded VARCHAR column,
// decided per entry; handled false for any other shape.
func (x *In) inDict(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, bool, error) {
	d, vals, isDict := rawDict(x.e, rec)
	if !isDict {
		return nil, false, nil
	}
	truth, known := make([]bool, vals.Len()), make([]bool, vals.Len())
	for e := range truth {
		if !vals.IsValid(e) {
			continue
		}
		switch {
		case x.strs.has(vals.Value(e)):
			known[e], truth[e] = true, !x.negate
		case !x.hasNull:
			known[e], truth[e] = true, x.negate
		}
	}
	out, err := byEntry(mem, d, truth, known)
	return out, true, err
}
