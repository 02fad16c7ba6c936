package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go/encoding"
)

// Dictionary output (Source.SetDictionaryColumns). A string column that
// the file stores dictionary-encoded can reach the operators as the
// file's own codes and one dictionary per column chunk: the scan copies 4
// bytes per row instead of the string, and a GROUP BY on it can map each
// dictionary entry to a group once rather than hash every row's string.
//
// A batch's column is a dictionary array only when every page its rows
// come from is dictionary-encoded. Writers fall back to PLAIN pages when
// the dictionary grows too big, and a batch that reaches such a page turns
// the codes it already has into strings (outCol.toPlain) and goes on as a
// plain string column; the record's schema says which one a batch holds.

// dictStringType is the type of a dictionary output column.
var dictStringType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// buildDictionary copies a BYTE_ARRAY dictionary page's values into an
// Arrow string array allocated in mem. Every byte of both buffers is
// written (mem may be a recycler).
func buildDictionary(mem memory.Allocator, vals encoding.Values) (*array.String, error) {
	data, offs := vals.ByteArray()
	n := 0
	var start, end uint32
	if len(offs) > 0 {
		n = len(offs) - 1
		start, end = offs[0], offs[n]
	}
	if end < start || int64(end-start) > maxOffset {
		return nil, fmt.Errorf("dictionary page of %d values has malformed or over 2 GiB offsets", n)
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * 4)
	dst := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	dst[0] = 0
	for i := 1; i <= n; i++ {
		if offs[i] < offs[i-1] {
			offBuf.Release()
			return nil, fmt.Errorf("dictionary page offsets decrease at value %d", i)
		}
		dst[i] = int32(offs[i] - start)
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(int(end - start))
	copy(dataBuf.Bytes(), data[start:end])
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offBuf, dataBuf}, nil, 0, 0)
	offBuf.Release()
	dataBuf.Release()
	a := array.NewStringData(d)
	d.Release()
	return a, nil
}

// startsDict reports whether the next batch of this column begins as a
// dictionary array: dictionary output was asked for and the page its first
// row comes from (loaded here when the current one is used up) is
// dictionary-encoded. Only called when rows remain in the chunk.
func (r *colReader) startsDict() (bool, error) {
	if !r.wantDict {
		return false, nil
	}
	for r.rowPos == r.pageRows {
		if err := r.nextPage(); err != nil {
			return false, err
		}
	}
	return r.isDict && r.dictArr != nil, nil
}

// spanCodes copies one span of a dictionary page's codes into a
// dictionary column: code 0 in null rows, every code checked against the
// dictionary so that no consumer ever indexes past it.
func (r *colReader) spanCodes(o *outCol, pos, span int, defs []byte, cnt int) error {
	if o.dict != r.dictArr {
		return fmt.Errorf("internal: batch's dictionary is not the column chunk's")
	}
	src := r.vals.Int32()[r.valPos : r.valPos+cnt]
	n := uint32(o.dict.Len())
	for _, x := range src {
		if uint32(x) >= n {
			return fmt.Errorf("dictionary index %d out of range (dictionary has %d values)", x, n)
		}
	}
	scatter(o.i32[pos:pos+span], src, defs, r.b.maxDef, o, pos)
	return nil
}

// initDict allocates a dictionary column of n rows over dict (retained).
func (o *outCol) initDict(mem memory.Allocator, n int, optional bool, dict *array.String, dataHint int) {
	o.init(mem, dictStringType, n, optional, dataHint)
	dict.Retain()
	o.dict = dict
}

// toPlain turns a dictionary column whose rows [0, pos) are written into a
// string column with the same rows: the codes become strings, the
// validity bitmap stays. On error the buffers stay with o for release.
func (o *outCol) toPlain(pos int) error {
	codes, dict := o.i32[:pos], o.dict
	o.typ = arrow.BinaryTypes.String
	o.initBytes()
	offs, data := dict.ValueOffsets(), dict.ValueBytes()
	for i, x := range codes {
		if o.valid == nil || bitutil.BitIsSet(o.valid, i) {
			v := data[offs[x]:offs[x+1]]
			if int64(o.dataLen)+int64(len(v)) > maxOffset {
				return errTooLarge
			}
			o.appendData(v)
		}
		o.offs[i+1] = int32(o.dataLen)
	}
	o.valBuf.Release()
	o.valBuf, o.i32 = nil, nil
	o.dict.Release()
	o.dict = nil
	return nil
}
