package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Reading at selected positions. When a predicate passes few rows, most
// runs the other columns read are a row or two long, and reading them one
// run at a time (skipTo, fill, span) costs far more per row than the copy.
// readPicked takes every row a page holds at once instead: it finds each
// one's value (through the dictionary when the page has one) and copies
// it, one loop per page. Conversions without a picking loop (BOOLEAN,
// INT96, decimals stored as bytes, fixed-size binary) read run by run.

// pickable reports whether the column has a picking loop.
func (r *colReader) pickable() bool {
	switch r.b.conv {
	case convInt32, convInt64, convInt32ToInt64, convUint32ToInt64, convFloat32, convFloat64, convFloat32To64,
		convDecInt32, convDecInt64, convBytes:
		return true
	}
	return false
}

// readPicked reads the rows of runs into o from row 0, a page at a time.
func (r *colReader) readPicked(o *outCol, runs []rowRun) error {
	if !r.pickable() {
		return r.readRuns(o, 0, runs)
	}
	runs = append(r.runs[:0], runs...) // cut below as pages end
	r.runs = runs
	pos := 0
	for len(runs) > 0 {
		if err := r.skipTo(runs[0].lo); err != nil {
			return err
		}
		for r.rowPos == r.pageRows {
			if err := r.nextPage(); err != nil {
				return err
			}
		}
		first := r.next - int64(r.rowPos) // the page's first row
		end := first + int64(r.pageRows)
		rows := r.picks[:0]
		for len(runs) > 0 && runs[0].lo < end {
			hi := min(runs[0].hi, end)
			for x := runs[0].lo; x < hi; x++ {
				rows = append(rows, int32(x-first))
			}
			if runs[0].hi > end {
				runs[0].lo = end
				break
			}
			runs = runs[1:]
		}
		r.picks = rows
		if err := r.pick(o, pos, rows); err != nil {
			return err
		}
		pos += len(rows)
	}
	return nil
}

// pick copies the current page's rows (ascending, from rowPos on) into o
// from pos, and moves the reader past the last of them.
func (r *colReader) pick(o *outCol, pos int, rows []int32) error {
	// Each row's dense value index, -1 for a null.
	idx := grow(&r.idx, len(rows))
	vi, at := r.valPos, r.rowPos
	for j, x := range rows {
		if r.defs != nil {
			vi += countLevel(r.defs[at:x], r.b.maxDef)
			at = int(x) + 1
			if r.defs[x] != r.b.maxDef {
				idx[j] = -1
				continue
			}
		} else {
			vi += int(x) - at
			at = int(x) + 1
		}
		idx[j] = int32(vi)
		vi++
	}
	if vi > r.dense {
		return fmt.Errorf("page holds %d values but its definition levels need %d", r.dense, vi)
	}
	r.next += int64(at - r.rowPos)
	r.rowPos, r.valPos = at, vi

	// The page's values, or its dictionary's (codes index them).
	vals := r.vals
	var codes []int32
	if r.isDict {
		vals, codes = r.dict, r.vals.Int32()
	}
	switch r.b.conv {
	case convInt32:
		return pickInto(o, pos, o.i32, vals.Int32(), codes, idx, same[int32])
	case convInt64:
		if r.b.mul != 1 || r.b.div != 1 {
			mul, div := r.b.mul, r.b.div
			return pickInto(o, pos, o.i64, vals.Int64(), codes, idx, func(v int64) int64 { return scaleTS(v, mul, div) })
		}
		return pickInto(o, pos, o.i64, vals.Int64(), codes, idx, same[int64])
	case convInt32ToInt64:
		return pickInto(o, pos, o.i64, vals.Int32(), codes, idx, func(v int32) int64 { return int64(v) })
	case convUint32ToInt64:
		return pickInto(o, pos, o.i64, vals.Int32(), codes, idx, func(v int32) int64 { return int64(uint32(v)) })
	case convFloat32:
		return pickInto(o, pos, o.f32, vals.Float(), codes, idx, same[float32])
	case convFloat64:
		return pickInto(o, pos, o.f64, vals.Double(), codes, idx, same[float64])
	case convFloat32To64:
		return pickInto(o, pos, o.f64, vals.Float(), codes, idx, func(v float32) float64 { return float64(v) })
	case convDecInt32:
		return pickInto(o, pos, o.dec, vals.Int32(), codes, idx, func(v int32) decimal128.Num { return decimal128.FromI64(int64(v)) })
	case convDecInt64:
		return pickInto(o, pos, o.dec, vals.Int64(), codes, idx, decimal128.FromI64)
	case convBytes:
		return r.pickBytes(o, pos, codes, idx)
	}
	return fmt.Errorf("internal: no picking loop for conversion %d", r.b.conv)
}

func same[T any](v T) T { return v }

// pickInto writes conv(src[k]) for every value index k of idx (through
// codes when the page is dictionary-encoded) to dst from pos: a zero and
// no validity bit for a null (-1).
func pickInto[S, D any](o *outCol, pos int, dst []D, src []S, codes []int32, idx []int32, conv func(S) D) error {
	dst = dst[pos : pos+len(idx)]
	n := uint32(len(src))
	var zero D
	for j, k := range idx {
		if k < 0 {
			dst[j] = zero
			o.nulls++
			continue
		}
		if codes != nil {
			k = codes[k]
		}
		if uint32(k) >= n {
			return fmt.Errorf("value index %d out of range (%d values)", k, n)
		}
		dst[j] = conv(src[k])
		if o.valid != nil {
			o.valid[(pos+j)>>3] |= 1 << uint((pos+j)&7)
		}
	}
	return nil
}

// pickBytes is pick for BYTE_ARRAY columns: strings copied, or, into a
// dictionary column from a dictionary page, the codes.
func (r *colReader) pickBytes(o *outCol, pos int, codes []int32, idx []int32) error {
	if o.dict != nil {
		if r.isDict {
			if o.dict != r.dictArr {
				return fmt.Errorf("internal: batch's dictionary is not the column chunk's")
			}
			return pickCodes(o, pos, codes, idx)
		}
		// A page the writer did not dictionary-encode: this batch goes on
		// as plain strings (see span).
		if err := o.toPlain(pos); err != nil {
			return err
		}
	}
	vals := r.vals
	if r.isDict {
		vals = r.dict
	}
	data, offs := vals.ByteArray()
	n := uint32(max(len(offs)-1, 0))
	for j, k := range idx {
		if k >= 0 {
			if codes != nil {
				k = codes[k]
			}
			if uint32(k) >= n {
				return fmt.Errorf("value index %d out of range (%d values)", k, n)
			}
			v := data[offs[k]:offs[k+1]]
			if int64(o.dataLen)+int64(len(v)) > maxOffset {
				return errTooLarge
			}
			o.appendData(v)
			if o.valid != nil {
				o.valid[(pos+j)>>3] |= 1 << uint((pos+j)&7)
			}
		} else {
			o.nulls++
		}
		o.offs[pos+j+1] = int32(o.dataLen)
	}
	return nil
}

// pickCodes writes the dictionary codes of the values idx into a
// dictionary column from pos: code 0 in null rows, every code checked
// against the dictionary (as spanCodes).
func pickCodes(o *outCol, pos int, codes []int32, idx []int32) error {
	dst := o.i32[pos : pos+len(idx)]
	n := uint32(o.dict.Len())
	for j, k := range idx {
		if k < 0 {
			dst[j] = 0
			o.nulls++
			continue
		}
		c := codes[k]
		if uint32(c) >= n {
			return fmt.Errorf("dictionary index %d out of range (dictionary has %d values)", c, n)
		}
		dst[j] = c
		if o.valid != nil {
			o.valid[(pos+j)>>3] |= 1 << uint((pos+j)&7)
		}
	}
	return nil
}
