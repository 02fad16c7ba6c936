package parquet

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// colReader walks one column chunk page by page and copies spans of rows
// into a batch's output buffers. It lives for the whole scan: the scratch
// slices (dictionary gathers, conversions) are reused across pages, row
// groups and files.
type colReader struct {
	name string
	b    binding

	// wantDict: dictionary pages become Arrow dictionary arrays (dict.go)
	// over dictArr, the chunk's dictionary built in mem on its first
	// dictionary page and shared by the chunk's batches.
	wantDict bool
	mem      memory.Allocator
	dictArr  *array.String

	pages parquet.Pages
	page  parquet.Page
	// chunk names the column chunk pages reads, so a part of a split scan
	// that takes another range of the same row group seeks in the open
	// chunk (keeping its dictionary) instead of opening it again; next is
	// the row of the chunk the reader is at.
	chunk chunkKey
	next  int64
	skip  int // rows of the next page to skip (a seek to inside a page)
	// pageIdx is the current page's number among the chunk's data pages
	// (-1 before the first); locs are their locations once known (see
	// skipTo), from src.
	pageIdx   int
	src       chunkSource
	locs      []format.PageLocation
	locsTried bool
	// counts, when set, is where the reader adds the pages it reads and
	// jumps over.
	counts *pageCounts

	defs     []byte          // the page's definition levels (nil: no nulls possible)
	vals     encoding.Values // the page's dense non-null values, or its dictionary indexes
	dict     encoding.Values // the dictionary's values when the page is dictionary-encoded
	isDict   bool
	dictLen  int
	dense    int // number of dense values in the page
	pageRows int
	rowPos   int // next row of the page
	valPos   int // next dense value of the page

	// scratch
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	i96  []deprecated.Int96
	decs []decimal128.Num
	// readPicked's: its runs, a page's rows, their value indexes
	runs  []rowRun
	picks []int32
	idx   []int32
}

var errShortChunk = errors.New("column chunk ended before the row group's row count")

// chunkKey is a column chunk of an open file.
type chunkKey struct {
	file        *parquet.File
	group, leaf int
}

// seek moves the reader to row of its chunk, in data page number page,
// which starts at row pageFirst (the chunk's offset index must be loaded):
// parquet-go seeks to the page, the reader skips the rows before row when
// it reads the page. (A page parquet-go slices mid-way loses a BOOLEAN
// page's bit offset.)
func (r *colReader) seek(row, pageFirst int64, page int) error {
	r.dropPage()
	if err := r.pages.SeekToRow(pageFirst); err != nil {
		return err
	}
	r.skip = int(row - pageFirst)
	r.next = row
	r.pageIdx = page - 1
	return nil
}

// dropPage lets go of the current page (the next fill reads another).
func (r *colReader) dropPage() {
	if r.page != nil {
		parquet.Release(r.page)
		r.page = nil
	}
	r.pageRows, r.rowPos, r.valPos = 0, 0, 0
}

// reset points the reader at a new column chunk.
// wantDict says whether the caller asked for dictionary output; it takes
// effect only for BYTE_ARRAY columns.
func (r *colReader) reset(b binding, pages parquet.Pages, wantDict bool, src chunkSource) {
	r.close()
	r.b = b
	r.pages = pages
	r.src = src
	r.wantDict = wantDict && b.conv == convBytes && b.physical == format.ByteArray
}

func (r *colReader) close() {
	if r.page != nil {
		parquet.Release(r.page)
		r.page = nil
	}
	if r.pages != nil {
		r.pages.Close()
		r.pages = nil
	}
	if r.dictArr != nil {
		r.dictArr.Release() // batches still holding it keep their own reference
		r.dictArr = nil
	}
	r.pageRows, r.rowPos, r.valPos = 0, 0, 0
	r.isDict = false
	r.chunk, r.next, r.skip = chunkKey{}, 0, 0
	r.pageIdx, r.src, r.locs, r.locsTried = -1, chunkSource{}, nil, false
}

func (r *colReader) nextPage() error {
	if r.page != nil {
		parquet.Release(r.page)
		r.page = nil
	}
	p, err := r.pages.ReadPage()
	if err != nil {
		if err == io.EOF {
			return errShortChunk
		}
		return err
	}
	r.page = p
	r.pageIdx++
	r.rowPos, r.valPos = 0, 0
	r.pageRows = int(p.NumRows())
	if r.counts != nil {
		r.counts.read.Add(1)
		r.counts.bytes.Add(p.Size())
	}
	r.defs = nil
	if r.b.maxDef > 0 {
		r.defs = p.DefinitionLevels()
		if len(r.defs) != r.pageRows {
			return fmt.Errorf("page has %d definition levels for %d rows", len(r.defs), r.pageRows)
		}
	}
	r.vals = p.Data()
	r.isDict = false
	if d := p.Dictionary(); d != nil {
		r.isDict = true
		r.dict = d.Page().Data()
		r.dictLen = d.Len()
		r.dense = len(r.vals.Int32())
		if r.wantDict && r.dictArr == nil {
			a, err := buildDictionary(r.mem, r.dict)
			if err != nil {
				return err
			}
			r.dictArr = a
		}
	} else {
		r.dense = r.plainLen()
	}
	if r.skip > 0 {
		if r.skip > r.pageRows {
			return fmt.Errorf("seek %d rows into a page of %d", r.skip, r.pageRows)
		}
		r.rowPos, r.valPos = r.skip, r.skip
		if r.defs != nil {
			r.valPos = countLevel(r.defs[:r.skip], r.b.maxDef)
		}
		r.skip = 0
	}
	return nil
}

// plainLen is the number of values in a plain (not dictionary) page.
func (r *colReader) plainLen() int {
	switch r.b.physical {
	case format.Boolean: // bit-packed, no count of its own
		return len(r.vals.Boolean()) * 8
	case format.Int32:
		return len(r.vals.Int32())
	case format.Int64:
		return len(r.vals.Int64())
	case format.Int96:
		return len(r.vals.Int96())
	case format.Float:
		return len(r.vals.Float())
	case format.Double:
		return len(r.vals.Double())
	case format.ByteArray:
		_, offs := r.vals.ByteArray()
		if len(offs) == 0 {
			return 0
		}
		return len(offs) - 1
	case format.FixedLenByteArray:
		data, size := r.vals.FixedLenByteArray()
		if size <= 0 {
			return 0
		}
		return len(data) / size
	}
	return 0
}

// fill copies k rows into o starting at row pos.
func (r *colReader) fill(o *outCol, pos, k int) error {
	for k > 0 {
		if r.rowPos == r.pageRows {
			if err := r.nextPage(); err != nil {
				return err
			}
			continue
		}
		span := min(k, r.pageRows-r.rowPos)
		var defs []byte
		cnt := span
		if r.defs != nil {
			defs = r.defs[r.rowPos : r.rowPos+span]
			cnt = countLevel(defs, r.b.maxDef)
		}
		if r.valPos+cnt > r.dense {
			return fmt.Errorf("page holds %d values but its definition levels need %d", r.dense, r.valPos+cnt)
		}
		if err := r.span(o, pos, span, defs, cnt); err != nil {
			return err
		}
		r.rowPos += span
		r.valPos += cnt
		r.next += int64(span)
		pos += span
		k -= span
	}
	return nil
}

func countLevel(defs []byte, lvl byte) int {
	n := 0
	for _, d := range defs {
		if d == lvl {
			n++
		}
	}
	return n
}

// span copies one span of rows (all in the current page) into o.
func (r *colReader) span(o *outCol, pos, span int, defs []byte, cnt int) error {
	switch r.b.conv {
	case convBool:
		return r.spanBool(o, pos, span, defs)
	case convBytes:
		if o.dict != nil {
			if r.isDict {
				return r.spanCodes(o, pos, span, defs, cnt)
			}
			// A page the writer did not dictionary-encode (its dictionary
			// grew too big): this batch goes on as plain strings.
			if err := o.toPlain(pos); err != nil {
				return err
			}
		}
		return r.spanBytes(o, pos, span, defs, cnt)
	case convFixedBytes:
		return r.spanFixedBytes(o, pos, span, defs, cnt)
	case convInt32:
		src, err := r.denseI32(cnt)
		if err != nil {
			return err
		}
		scatter(o.i32[pos:pos+span], src, defs, r.b.maxDef, o, pos)
	case convInt64:
		src, err := r.denseI64(cnt)
		if err != nil {
			return err
		}
		if r.b.mul != 1 || r.b.div != 1 {
			src = r.scaled(src)
		}
		scatter(o.i64[pos:pos+span], src, defs, r.b.maxDef, o, pos)
	case convInt32ToInt64, convUint32ToInt64:
		src, err := r.denseI32(cnt)
		if err != nil {
			return err
		}
		tmp := grow(&r.i64, cnt)
		if r.b.conv == convUint32ToInt64 {
			for i, v := range src {
				tmp[i] = int64(uint32(v))
			}
		} else {
			for i, v := range src {
				tmp[i] = int64(v)
			}
		}
		scatter(o.i64[pos:pos+span], tmp, defs, r.b.maxDef, o, pos)
	case convFloat32:
		src, err := r.denseF32(cnt)
		if err != nil {
			return err
		}
		scatter(o.f32[pos:pos+span], src, defs, r.b.maxDef, o, pos)
	case convFloat32To64:
		src, err := r.denseF32(cnt)
		if err != nil {
			return err
		}
		tmp := grow(&r.f64, cnt)
		for i, v := range src {
			tmp[i] = float64(v)
		}
		scatter(o.f64[pos:pos+span], tmp, defs, r.b.maxDef, o, pos)
	case convFloat64:
		src, err := r.denseF64(cnt)
		if err != nil {
			return err
		}
		scatter(o.f64[pos:pos+span], src, defs, r.b.maxDef, o, pos)
	case convInt96:
		src, err := r.denseI96(cnt)
		if err != nil {
			return err
		}
		tmp := grow(&r.i64, cnt)
		for i, v := range src {
			tmp[i] = scaleTS(int96Nanos(v), r.b.mul, r.b.div)
		}
		scatter(o.i64[pos:pos+span], tmp, defs, r.b.maxDef, o, pos)
	case convDecInt32:
		src, err := r.denseI32(cnt)
		if err != nil {
			return err
		}
		tmp := grow(&r.decs, cnt)
		for i, v := range src {
			tmp[i] = decimal128.FromI64(int64(v))
		}
		scatter(o.dec[pos:pos+span], tmp, defs, r.b.maxDef, o, pos)
	case convDecInt64:
		src, err := r.denseI64(cnt)
		if err != nil {
			return err
		}
		tmp := grow(&r.decs, cnt)
		for i, v := range src {
			tmp[i] = decimal128.FromI64(v)
		}
		scatter(o.dec[pos:pos+span], tmp, defs, r.b.maxDef, o, pos)
	case convDecFixed, convDecBytes:
		tmp := grow(&r.decs, cnt)
		for i := 0; i < cnt; i++ {
			raw, err := r.bytesAt(r.valPos + i)
			if err != nil {
				return err
			}
			n, ok := decFromBE(raw)
			if !ok {
				return fmt.Errorf("decimal value of %d bytes does not fit 128 bits", len(raw))
			}
			tmp[i] = n
		}
		scatter(o.dec[pos:pos+span], tmp, defs, r.b.maxDef, o, pos)
	default:
		return fmt.Errorf("internal: no decoder for conversion %d", r.b.conv)
	}
	return nil
}

// scatter writes the dense values src to dst (one slot per row), leaving a
// zero in null slots, and sets o's validity bits for rows [pos, pos+len(dst)).
func scatter[T any](dst, src []T, defs []byte, maxDef byte, o *outCol, pos int) {
	if defs == nil {
		copy(dst, src)
		o.setValid(pos, len(dst))
		return
	}
	if len(src) == len(dst) {
		copy(dst, src)
		o.setValid(pos, len(dst))
		return
	}
	var zero T
	j := 0
	for i, d := range defs {
		if d == maxDef {
			dst[i] = src[j]
			j++
			o.valid[(pos+i)>>3] |= 1 << uint((pos+i)&7)
		} else {
			dst[i] = zero
			o.nulls++
		}
	}
}

// grow returns (*s)[:n], reallocating the scratch when it is too small.
func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n, n+n/4)
	}
	return (*s)[:n]
}

func gather[T any](dst, dict []T, idx []int32) error {
	n := uint32(len(dict))
	for i, x := range idx {
		if uint32(x) >= n {
			return fmt.Errorf("dictionary index %d out of range (dictionary has %d values)", x, n)
		}
		dst[i] = dict[x]
	}
	return nil
}

func (r *colReader) indexes(cnt int) []int32 { return r.vals.Int32()[r.valPos : r.valPos+cnt] }

func (r *colReader) denseI32(cnt int) ([]int32, error) {
	if !r.isDict {
		return r.vals.Int32()[r.valPos : r.valPos+cnt], nil
	}
	tmp := grow(&r.i32, cnt)
	return tmp, gather(tmp, r.dict.Int32(), r.indexes(cnt))
}

func (r *colReader) denseI64(cnt int) ([]int64, error) {
	if !r.isDict {
		return r.vals.Int64()[r.valPos : r.valPos+cnt], nil
	}
	tmp := grow(&r.i64, cnt)
	return tmp, gather(tmp, r.dict.Int64(), r.indexes(cnt))
}

func (r *colReader) denseF32(cnt int) ([]float32, error) {
	if !r.isDict {
		return r.vals.Float()[r.valPos : r.valPos+cnt], nil
	}
	tmp := grow(&r.f32, cnt)
	return tmp, gather(tmp, r.dict.Float(), r.indexes(cnt))
}

func (r *colReader) denseF64(cnt int) ([]float64, error) {
	if !r.isDict {
		return r.vals.Double()[r.valPos : r.valPos+cnt], nil
	}
	tmp := grow(&r.f64, cnt)
	return tmp, gather(tmp, r.dict.Double(), r.indexes(cnt))
}

func (r *colReader) denseI96(cnt int) ([]deprecated.Int96, error) {
	if !r.isDict {
		return r.vals.Int96()[r.valPos : r.valPos+cnt], nil
	}
	tmp := grow(&r.i96, cnt)
	return tmp, gather(tmp, r.dict.Int96(), r.indexes(cnt))
}

// bytesAt is the i-th dense value of a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY
// page, through the dictionary when there is one.
func (r *colReader) bytesAt(i int) ([]byte, error) {
	vals := r.vals
	if r.isDict {
		x := r.vals.Int32()[i]
		if uint32(x) >= uint32(r.dictLen) {
			return nil, fmt.Errorf("dictionary index %d out of range (dictionary has %d values)", x, r.dictLen)
		}
		i = int(x)
		vals = r.dict
	}
	if r.b.physical == format.FixedLenByteArray {
		data, size := vals.FixedLenByteArray()
		return data[i*size : (i+1)*size], nil
	}
	data, offs := vals.ByteArray()
	return data[offs[i]:offs[i+1]], nil
}

func (r *colReader) spanBool(o *outCol, pos, span int, defs []byte) error {
	var bits []byte
	if r.isDict {
		bits = r.dict.Boolean()
	} else {
		bits = r.vals.Boolean()
	}
	j := r.valPos
	for i := 0; i < span; i++ {
		if defs != nil && defs[i] != r.b.maxDef {
			o.nulls++
			continue
		}
		k := j
		if r.isDict {
			x := r.vals.Int32()[j]
			if uint32(x) >= uint32(r.dictLen) {
				return fmt.Errorf("dictionary index %d out of range (dictionary has %d values)", x, r.dictLen)
			}
			k = int(x)
		}
		j++
		if bits[k>>3]&(1<<uint(k&7)) != 0 {
			o.bits[(pos+i)>>3] |= 1 << uint((pos+i)&7)
		}
		if o.valid != nil {
			o.valid[(pos+i)>>3] |= 1 << uint((pos+i)&7)
		}
	}
	return nil
}

// spanBytes appends string/binary values. A plain page's values are
// contiguous, so a span without nulls is one copy of the bytes and a rebase
// of the offsets; dictionary pages copy value by value.
func (r *colReader) spanBytes(o *outCol, pos, span int, defs []byte, cnt int) error {
	if !r.isDict && cnt == span {
		data, offs := r.vals.ByteArray()
		start, end := offs[r.valPos], offs[r.valPos+cnt]
		base := int64(o.dataLen) - int64(start)
		if int64(o.dataLen)+int64(end-start) > maxOffset {
			return errTooLarge
		}
		o.appendData(data[start:end])
		dst := o.offs[pos+1 : pos+1+span]
		src := offs[r.valPos+1 : r.valPos+1+cnt]
		for i, x := range src {
			dst[i] = int32(int64(x) + base)
		}
		o.setValid(pos, span)
		return nil
	}
	var data []byte
	var offs []uint32
	if r.isDict {
		data, offs = r.dict.ByteArray()
	} else {
		data, offs = r.vals.ByteArray()
	}
	j := r.valPos
	for i := 0; i < span; i++ {
		if defs != nil && defs[i] != r.b.maxDef {
			o.nulls++
			o.offs[pos+i+1] = int32(o.dataLen)
			continue
		}
		var v []byte
		if r.isDict {
			x := r.vals.Int32()[j]
			if uint32(x) >= uint32(r.dictLen) {
				return fmt.Errorf("dictionary index %d out of range (dictionary has %d values)", x, r.dictLen)
			}
			v = data[offs[x]:offs[x+1]]
		} else {
			v = data[offs[j]:offs[j+1]]
		}
		j++
		if int64(o.dataLen)+int64(len(v)) > maxOffset {
			return errTooLarge
		}
		o.appendData(v)
		o.offs[pos+i+1] = int32(o.dataLen)
		if o.valid != nil {
			o.valid[(pos+i)>>3] |= 1 << uint((pos+i)&7)
		}
	}
	return nil
}

func (r *colReader) spanFixedBytes(o *outCol, pos, span int, defs []byte, cnt int) error {
	j := r.valPos
	for i := 0; i < span; i++ {
		if defs != nil && defs[i] != r.b.maxDef {
			o.nulls++
			o.offs[pos+i+1] = int32(o.dataLen)
			continue
		}
		v, err := r.bytesAt(j)
		if err != nil {
			return err
		}
		j++
		if int64(o.dataLen)+int64(len(v)) > maxOffset {
			return errTooLarge
		}
		o.appendData(v)
		o.offs[pos+i+1] = int32(o.dataLen)
		if o.valid != nil {
			o.valid[(pos+i)>>3] |= 1 << uint((pos+i)&7)
		}
	}
	return nil
}

func (r *colReader) scaled(src []int64) []int64 {
	tmp := grow(&r.i64, len(src))
	for i, v := range src {
		tmp[i] = scaleTS(v, r.b.mul, r.b.div)
	}
	return tmp
}

// scaleTS converts a timestamp between units. Dividing floors, so that a
// value before the epoch lands on the earlier tick (as DuckDB and Arrow do).
func scaleTS(v, mul, div int64) int64 {
	if div != 1 {
		q := v / div
		if v%div != 0 && v < 0 {
			q--
		}
		return q
	}
	return v * mul
}

// int96Nanos decodes a legacy INT96 timestamp: nanoseconds of the day in
// the low 8 bytes, the Julian day in the high 4.
func int96Nanos(v deprecated.Int96) int64 {
	const julianUnixEpoch = 2440588
	nanos := int64(uint64(v[0]) | uint64(v[1])<<32)
	return (int64(v[2])-julianUnixEpoch)*86400*1e9 + nanos
}

// decFromBE decodes a big-endian two's-complement integer of up to 16
// bytes (the Parquet DECIMAL byte form).
func decFromBE(b []byte) (decimal128.Num, bool) {
	if len(b) > 16 {
		// Longer forms are fine when the extra bytes only repeat the sign.
		ext := byte(0)
		if b[0]&0x80 != 0 {
			ext = 0xff
		}
		for _, x := range b[:len(b)-16] {
			if x != ext {
				return decimal128.Num{}, false
			}
		}
		b = b[len(b)-16:]
		if b[0]&0x80 != ext&0x80 {
			return decimal128.Num{}, false
		}
	}
	var buf [16]byte
	if len(b) > 0 && b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(b):], b)
	hi := int64(uint64(buf[0])<<56 | uint64(buf[1])<<48 | uint64(buf[2])<<40 | uint64(buf[3])<<32 |
		uint64(buf[4])<<24 | uint64(buf[5])<<16 | uint64(buf[6])<<8 | uint64(buf[7]))
	lo := uint64(buf[8])<<56 | uint64(buf[9])<<48 | uint64(buf[10])<<40 | uint64(buf[11])<<32 |
		uint64(buf[12])<<24 | uint64(buf[13])<<16 | uint64(buf[14])<<8 | uint64(buf[15])
	return decimal128.New(hi, lo), true
}
