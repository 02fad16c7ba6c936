package parquet

import (
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const maxOffset = math.MaxInt32

var errTooLarge = errors.New("string data of one batch exceeds 2 GiB (use a smaller batch size)")

// outCol is one column of the batch being built: Arrow buffers allocated
// for exactly n rows, with typed views the decoders write through.
//
// The buffers come from the scan's recycler, so they hold old bytes (0xFF
// in poison mode), and every byte in a buffer's length must be written:
// the validity and boolean bitmaps are cleared here and readers only set
// bits; fixed-width values get a value or, for a null, a zero (scatter);
// offsets get offs[0] here and one entry per row from the readers; string
// bytes are appended, and the data buffer's length is cut to what was
// appended. TestScanRecycled checks it with every block poisoned.
type outCol struct {
	typ   arrow.DataType
	n     int
	nulls int

	validBuf *memory.Buffer // nil for a required column
	valid    []byte

	valBuf *memory.Buffer // fixed-width values or boolean bits
	i32    []int32
	i64    []int64
	f32    []float32
	f64    []float64
	dec    []decimal128.Num
	bits   []byte

	offBuf  *memory.Buffer // string/binary offsets (n+1)
	offs    []int32
	dataBuf *memory.Buffer // string/binary bytes
	data    []byte         // dataBuf's whole capacity
	dataLen int

	// A dictionary column (typ dictStringType) writes its codes to i32 and
	// holds a reference to the chunk's dictionary; toPlain turns it into a
	// string column midway, which needs the allocator and the size hint.
	dict *array.String
	mem  memory.Allocator
	hint int
}

// init allocates the buffers for n rows of typ. dataHint is the expected
// byte size of a string column (from the previous batch).
func (o *outCol) init(mem memory.Allocator, typ arrow.DataType, n int, optional bool, dataHint int) {
	*o = outCol{typ: typ, n: n, mem: mem, hint: dataHint}
	if optional {
		o.validBuf = memory.NewResizableBuffer(mem)
		o.validBuf.Resize(int(bitutil.BytesForBits(int64(n))))
		o.valid = o.validBuf.Bytes()
		clear(o.valid)
	}
	fixed := func(width int) []byte {
		o.valBuf = memory.NewResizableBuffer(mem)
		o.valBuf.Resize(n * width)
		return o.valBuf.Bytes()
	}
	switch typ.ID() {
	case arrow.BOOL:
		o.valBuf = memory.NewResizableBuffer(mem)
		o.valBuf.Resize(int(bitutil.BytesForBits(int64(n))))
		o.bits = o.valBuf.Bytes()
		clear(o.bits)
	case arrow.INT32, arrow.DATE32, arrow.TIME32, arrow.DICTIONARY: // dictionary: the int32 codes
		o.i32 = arrow.Int32Traits.CastFromBytes(fixed(4))
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		o.i64 = arrow.Int64Traits.CastFromBytes(fixed(8))
	case arrow.FLOAT32:
		o.f32 = arrow.Float32Traits.CastFromBytes(fixed(4))
	case arrow.FLOAT64:
		o.f64 = arrow.Float64Traits.CastFromBytes(fixed(8))
	case arrow.DECIMAL128:
		o.dec = arrow.Decimal128Traits.CastFromBytes(fixed(16))
	case arrow.STRING, arrow.BINARY:
		o.initBytes()
	}
}

// initBytes allocates the offsets and data of a string/binary column.
func (o *outCol) initBytes() {
	o.offBuf = memory.NewResizableBuffer(o.mem)
	o.offBuf.Resize((o.n + 1) * 4)
	o.offs = arrow.Int32Traits.CastFromBytes(o.offBuf.Bytes())
	o.offs[0] = 0
	o.dataBuf = memory.NewResizableBuffer(o.mem)
	if o.hint > 0 {
		o.dataBuf.Reserve(o.hint)
	}
	o.data = o.dataBuf.Buf()
}

func (o *outCol) setValid(pos, n int) {
	if o.valid != nil && n > 0 {
		bitutil.SetBitsTo(o.valid, int64(pos), int64(n), true)
	}
}

func (o *outCol) appendData(v []byte) {
	if need := o.dataLen + len(v); need > len(o.data) {
		o.dataBuf.Reserve(max(need, 2*len(o.data), 4096))
		o.data = o.dataBuf.Buf()
	}
	o.dataLen += copy(o.data[o.dataLen:], v)
}

// finish hands the buffers to a new Arrow array.
func (o *outCol) finish() arrow.Array {
	var validity *memory.Buffer
	if o.nulls > 0 {
		validity = o.validBuf
	}
	var bufs []*memory.Buffer
	if o.offBuf != nil {
		o.dataBuf.ResizeNoShrink(o.dataLen)
		bufs = []*memory.Buffer{validity, o.offBuf, o.dataBuf}
	} else {
		bufs = []*memory.Buffer{validity, o.valBuf}
	}
	var dict *array.Data
	if o.dict != nil {
		dict = o.dict.Data().(*array.Data)
	}
	data := array.NewDataWithDictionary(o.typ, o.n, bufs, o.nulls, 0, dict)
	arr := array.MakeFromData(data)
	data.Release()
	o.release()
	return arr
}

// release drops the builder's references (the array keeps its own).
func (o *outCol) release() {
	for _, b := range []*memory.Buffer{o.validBuf, o.valBuf, o.offBuf, o.dataBuf} {
		if b != nil {
			b.Release()
		}
	}
	if o.dict != nil {
		o.dict.Release()
	}
	*o = outCol{}
}
