package jsonfmt

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

type kind uint8

const (
	kBool kind = iota
	kInt32
	kInt64
	kFloat32
	kFloat64
	kDecimal
	kString
	kBinary
	kTimestamp
	kDate32
	kStruct
	kList
)

// column writes one Arrow column straight into allocator buffers: a
// validity bitmap, fixed-width values or offsets + bytes, and children for
// ROW and ARRAY. The buffers are sized for the batch up front (var-width
// bytes from the previous batch's average), so the hot path is a store and
// a bit set; finish hands them to Arrow without copying.
type column struct {
	_     [64]byte // see the padding at the end
	name  string
	typ   arrow.DataType
	kind  kind
	unit  arrow.TimeUnit
	prec  int32
	scale int32
	width int // bytes per value, fixed-width kinds

	mem   memory.Allocator
	n     int
	valid *memory.Buffer
	data  *memory.Buffer
	offs  *memory.Buffer
	dlen  int // bytes used in data (var-width)
	avg   int // var-width bytes per value, learned

	// typed views of the buffers' capacity, refreshed after each growth
	bits  []byte
	bytes []byte
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	dec   []decimal128.Num
	off   []int32
	capN  int // values the current buffers hold

	children []*column
	days     dayCache // timestamp: the last day parsed
	byName   map[string]int
	slots    []keySlot // struct: what the k-th key of an object was last time
	seen     []uint32  // struct: per child, the object generation that set it
	gen      uint32

	// checks are the root's declared fields the query does not read (byName
	// maps them to checkSlot(j)): the walk reads each value into its
	// one-value scratch column and drops it, so an unread field is judged
	// by the very checks a read one is, and no column is built for it.
	// checkSeen is seen for them.
	checks    []*column
	checkSeen []uint32

	// Every record writes n, gen and seen. Parallel parts decode with
	// their own columns, allocated together: the padding keeps each
	// part's columns, and seen (padLines), off cache lines another part
	// writes. Without it a 4-byte seen landed in a block of Go's tiny
	// allocator next to another part's, and two threads decoding NDJSON
	// bounced the line between them: loads of seen took 40% of the walk.
	_ [64]byte
}

// padLines is a capacity of at least n uint32s that fills whole 64-byte
// cache lines: an allocation of a multiple of 64 bytes gets a size class
// of its own size, aligned to 64 bytes, shared with no other object.
func padLines(n int) int { return (n + 15) &^ 15 }

func newColumn(f arrow.Field) (*column, error) {
	c := &column{name: f.Name, typ: f.Type, avg: 16}
	switch t := f.Type.(type) {
	case *arrow.BooleanType:
		c.kind = kBool
	case *arrow.Int32Type:
		c.kind, c.width = kInt32, 4
	case *arrow.Int64Type:
		c.kind, c.width = kInt64, 8
	case *arrow.Float32Type:
		c.kind, c.width = kFloat32, 4
	case *arrow.Float64Type:
		c.kind, c.width = kFloat64, 8
	case *arrow.Decimal128Type:
		c.kind, c.width, c.prec, c.scale = kDecimal, 16, t.Precision, t.Scale
	case *arrow.StringType:
		c.kind = kString
	case *arrow.BinaryType:
		c.kind = kBinary
	case *arrow.TimestampType:
		c.kind, c.width, c.unit = kTimestamp, 8, t.Unit
	case *arrow.Date32Type:
		c.kind, c.width = kDate32, 4
	case *arrow.StructType:
		c.kind = kStruct
		c.byName = map[string]int{}
		for i, cf := range t.Fields() {
			ch, err := newColumn(cf)
			if err != nil {
				return nil, fmt.Errorf("%s.%w", f.Name, err)
			}
			c.children = append(c.children, ch)
			if _, dup := c.byName[cf.Name]; !dup {
				c.byName[cf.Name] = i
			}
		}
		c.seen = make([]uint32, len(c.children), padLines(len(c.children)))
	case *arrow.ListType:
		c.kind = kList
		ch, err := newColumn(t.ElemField())
		if err != nil {
			return nil, fmt.Errorf("%s.%w", f.Name, err)
		}
		c.children = []*column{ch}
	default:
		return nil, fmt.Errorf("column '%s': type %s is not supported by the JSON format", f.Name, f.Type)
	}
	return c, nil
}

// checkSlot is the byName and keySlot index of checks[j]: below -1, the
// index of a key no column wants.
func checkSlot(j int) int { return -2 - j }

// addChecks makes the struct column c validate fields without building
// them. Their scratch columns use Go memory: they hold one value at a time
// and live as long as the decoder, outside any batch's accounting. A
// VARCHAR takes any JSON value (a non-string as its text), so its check is
// the syntax skip every unknown key gets, unless its presence is checked
// too ('json.fail-on-missing-field').
func (c *column) addChecks(fields []arrow.Field, failOnMissing bool) error {
	for _, f := range fields {
		if _, dup := c.byName[f.Name]; dup {
			continue
		}
		if f.Type.ID() == arrow.STRING && !failOnMissing {
			c.byName[f.Name] = -1
			continue
		}
		ch, err := newColumn(f)
		if err != nil {
			return err
		}
		ch.setMem(memory.NewGoAllocator())
		c.byName[f.Name] = checkSlot(len(c.checks))
		c.checks = append(c.checks, ch)
	}
	c.checkSeen = make([]uint32, len(c.checks), padLines(len(c.checks)))
	return nil
}

// check reads the value at b[i] into the scratch column c and drops it,
// reporting where the value ends (-1: the walk cannot accept it).
func (w *walker) check(b []byte, i int, c *column) int {
	if c.kind == kInt64 {
		// The common unread value, judged by the scan readValue starts
		// with; anything else (null, a fraction, 19+ digits) takes the
		// whole path.
		if _, next := scanInt64(b, i); next >= 0 {
			return next
		}
	}
	i = w.readValue(b, i, c)
	c.truncate(0)
	return i
}

// keySlot is the positional hint of seed 000: the field the k-th key of an
// object matched last time (child -1: a key no column wants), with the key's
// pattern. A hint is only ever taken after its pattern matched the key's
// bytes, so a reordered record cannot file a value under the wrong column.
type keySlot struct {
	child int
	key   keyPat
}

// keyPat matches `"name":` in place: the bytes after the opening quote must
// be the name, the closing quote and the colon. The first 16 bytes compare
// as two masked words; a longer name is then confirmed byte for byte; a
// name JSON would escape never matches (the general path handles it).
type keyPat struct {
	tail []byte
	n    int // len(tail) when it fits two words, else 0
	word [2]uint64
	mask [2]uint64
}

func newKeyPat(name []byte) keyPat {
	if !plainKey(name) {
		return keyPat{}
	}
	p := keyPat{tail: append(append([]byte(nil), name...), '"', ':')}
	// A longer name's words are its first sixteen bytes: a mismatch there
	// is final, a match is confirmed by matchSlow.
	var buf, mask [16]byte
	copy(buf[:], p.tail)
	for k := range min(len(p.tail), 16) {
		mask[k] = 0xff
	}
	if len(p.tail) <= 16 {
		p.n = len(p.tail)
	}
	p.word = [2]uint64{binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])}
	p.mask = [2]uint64{binary.LittleEndian.Uint64(mask[:8]), binary.LittleEndian.Uint64(mask[8:])}
	return p
}

// hit reports whether the two words at the key match the pattern's first
// sixteen bytes; it is the check readObject makes in line for every key of
// every record (a method call would cost as much as the check).
func (p *keyPat) hit(w0, w1 uint64) bool {
	return (w0&p.mask[0]^p.word[0])|(w1&p.mask[1]^p.word[1]) == 0
}

// matchSlow reports whether b[i:] starts with the pattern, byte for byte:
// a name past two words (whose first sixteen bytes matched), or a key too
// close to the end of the record to load two words.
//
//go:noinline
func (p *keyPat) matchSlow(b []byte, i int) bool {
	return p.tail != nil && len(b)-i >= len(p.tail) && string(b[i:i+len(p.tail)]) == string(p.tail)
}

// plainKey reports whether name appears verbatim between JSON quotes.
func plainKey(name []byte) bool {
	for _, c := range name {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return len(name) > 0
}

func (c *column) setMem(mem memory.Allocator) {
	c.mem = mem
	for _, ch := range c.children {
		ch.setMem(mem)
	}
}

// begin starts a batch expected to hold n values.
func (c *column) begin(n int) {
	c.n, c.dlen, c.capN = 0, 0, 0
	c.grow(max(n, 8))
	if c.kind == kStruct {
		for _, ch := range c.children {
			ch.begin(n)
		}
	} else if c.kind == kList {
		c.children[0].begin(n * 2)
	}
}

// grow makes room for at least want values (keeping what is written).
func (c *column) grow(want int) {
	if want <= c.capN {
		return
	}
	if c.capN > 0 {
		want = max(want, c.capN*2)
	}
	c.valid = reserve(c.mem, c.valid, int(bitutil.BytesForBits(int64(want))))
	c.bits = c.valid.Buf()
	switch c.kind {
	case kBool:
		c.data = reserve(c.mem, c.data, int(bitutil.BytesForBits(int64(want))))
		c.bytes = c.data.Buf()
	case kString, kBinary, kList:
		c.offs = reserve(c.mem, c.offs, (want+1)*4)
		c.off = arrow.Int32Traits.CastFromBytes(c.offs.Buf())
		c.off[0] = 0
		if c.kind != kList {
			c.data = reserve(c.mem, c.data, max(want*c.avg, 64))
			c.bytes = c.data.Buf()
		}
	case kStruct:
	default:
		c.data = reserve(c.mem, c.data, want*c.width)
		b := c.data.Buf()
		switch c.kind {
		case kInt32, kDate32:
			c.i32 = arrow.Int32Traits.CastFromBytes(b)
		case kInt64, kTimestamp:
			c.i64 = arrow.Int64Traits.CastFromBytes(b)
		case kFloat32:
			c.f32 = arrow.Float32Traits.CastFromBytes(b)
		case kFloat64:
			c.f64 = arrow.Float64Traits.CastFromBytes(b)
		case kDecimal:
			c.dec = arrow.Decimal128Traits.CastFromBytes(b)
		}
	}
	c.capN = want
}

func reserve(mem memory.Allocator, b *memory.Buffer, size int) *memory.Buffer {
	if b == nil {
		b = memory.NewResizableBuffer(mem)
	}
	b.Reserve(size)
	return b
}

// growBytes makes room for extra more var-width bytes.
func (c *column) growBytes(extra int) {
	if c.dlen+extra <= len(c.bytes) {
		return
	}
	c.data.Reserve(max(c.dlen+extra, 2*len(c.bytes)))
	c.bytes = c.data.Buf()
}

// setValid marks value n present and counts it.
func (c *column) setValid() {
	c.bits[c.n>>3] |= 1 << (c.n & 7)
	c.n++
}

func (c *column) appendNull() {
	if c.n >= c.capN {
		c.grow(c.n + 1)
	}
	n := c.n
	c.bits[n>>3] &^= 1 << (n & 7)
	switch c.kind {
	case kBool:
		c.bytes[n>>3] &^= 1 << (n & 7)
	case kInt32, kDate32:
		c.i32[n] = 0
	case kInt64, kTimestamp:
		c.i64[n] = 0
	case kFloat32:
		c.f32[n] = 0
	case kFloat64:
		c.f64[n] = 0
	case kDecimal:
		c.dec[n] = decimal128.Num{}
	case kString, kBinary:
		c.off[n+1] = int32(c.dlen)
	case kList:
		c.off[n+1] = int32(c.children[0].n)
	case kStruct:
		for _, ch := range c.children {
			ch.appendNull()
		}
	}
	c.n++
}

// appendBytes appends a string or binary value.
func (c *column) appendBytes(v []byte) {
	if c.n >= c.capN {
		c.grow(c.n + 1)
	}
	c.growBytes(len(v))
	c.dlen += copy(c.bytes[c.dlen:], v)
	c.off[c.n+1] = int32(c.dlen)
	c.setValid()
}

// truncate rolls the column back to n values (a rejected record). A
// ROW's or ARRAY's children are cut back even when the column itself holds
// n values already: a walk that failed inside its value has appended to
// them without counting the value.
func (c *column) truncate(n int) {
	if n > c.n {
		return
	}
	c.n = n
	switch c.kind {
	case kString, kBinary:
		c.dlen = int(c.off[n])
	case kList:
		c.children[0].truncate(int(c.off[n]))
	case kStruct:
		for _, ch := range c.children {
			ch.truncate(n)
		}
	}
}

// finish hands the written buffers to an Arrow array and starts over.
func (c *column) finish() arrow.ArrayData {
	n := c.n
	nulls := n - bitutil.CountSetBits(c.bits, 0, n)
	clearPadding(c.bits, n)
	if c.kind == kBool {
		clearPadding(c.bytes, n)
	}
	c.valid.ResizeNoShrink(int(bitutil.BytesForBits(int64(n))))
	var bufs []*memory.Buffer
	var children []arrow.ArrayData
	switch c.kind {
	case kString, kBinary:
		c.offs.ResizeNoShrink((n + 1) * 4)
		c.data.ResizeNoShrink(c.dlen)
		bufs = []*memory.Buffer{c.valid, c.offs, c.data}
		if n > 0 {
			c.avg = max(c.dlen/n+c.dlen/n/4, 1)
		}
	case kList:
		c.offs.ResizeNoShrink((n + 1) * 4)
		bufs = []*memory.Buffer{c.valid, c.offs}
		children = []arrow.ArrayData{c.children[0].finish()}
	case kStruct:
		bufs = []*memory.Buffer{c.valid}
		for _, ch := range c.children {
			children = append(children, ch.finish())
		}
	case kBool:
		c.data.ResizeNoShrink(int(bitutil.BytesForBits(int64(n))))
		bufs = []*memory.Buffer{c.valid, c.data}
	default:
		c.data.ResizeNoShrink(n * c.width)
		bufs = []*memory.Buffer{c.valid, c.data}
	}
	d := array.NewData(c.typ, n, bufs, children, nulls, 0)
	for _, ch := range children {
		ch.Release()
	}
	c.dropBuffers()
	return d
}

// clearPadding zeroes the bits past n in the last byte of a bitmap: the
// buffers may be recycled, and Arrow consumers that work a byte at a time
// should not see stale bits.
func clearPadding(bm []byte, n int) {
	if n%8 != 0 {
		bm[n/8] &= byte(1)<<(n%8) - 1
	}
}

// dropBuffers releases this column's references to its buffers (finish has
// handed them to Arrow, or the batch was abandoned).
func (c *column) dropBuffers() {
	for _, b := range []*memory.Buffer{c.valid, c.data, c.offs} {
		if b != nil {
			b.Release()
		}
	}
	c.valid, c.data, c.offs = nil, nil, nil
	c.bits, c.bytes, c.i32, c.i64, c.f32, c.f64, c.dec, c.off = nil, nil, nil, nil, nil, nil, nil, nil
	c.capN, c.n, c.dlen = 0, 0, 0
}

// abandon drops a half-built batch.
func (c *column) abandon() {
	c.dropBuffers()
	for _, ch := range c.children {
		ch.abandon()
	}
}

// truncateChildren drops what a failed walk of record n appended to c's
// children, leaving n values in each.
func (c *column) truncateChildren(n int) {
	for _, ch := range c.children {
		ch.truncate(n)
	}
}
