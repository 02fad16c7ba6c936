package ops

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// winSource is the buffered input in window order (partition after
// partition, each in ORDER BY order, ties in arrival order), addressed by
// sorted position. The
// row source (rows in, the authoritative path) and the record source
// (columnar in: the concatenated columns and a sorted index) answer the
// same questions, so every kernel serves both.
type winSource interface {
	len() int
	// partitions lists where each partition starts in sorted order, then
	// len().
	partitions() []int32
	// comparator orders sorted positions by keys (nil without keys).
	comparator(keys []SortKey) func(a, b int) int
	// extract reads input column c in sorted order into typed vectors
	// (cached: several functions read one column).
	extract(c int) (*winCol, error)
	// value is column c's row-form value at sorted position k.
	value(c, k int) any
	// inputColumns builds every input column in sorted order.
	inputColumns(mem memory.Allocator) ([]arrow.Array, error)
	// pickColumn builds column c's values at the sorted positions pick;
	// pickNull gives NULL and pickDefault the row's default.
	pickColumn(mem memory.Allocator, c int, pick []int32, def pickDefaults) (arrow.Array, error)
	release()
}

const (
	pickNull    = -1
	pickDefault = -2
)

// pickDefaults is lag/lead's default: a column (the current row's value)
// or a constant.
type pickDefaults struct {
	col   int // -1: the constant
	value any
}

// winCol is one input column in sorted order: validity and the values in
// the representation the kernels compare and sum (integers, dates,
// timestamps and booleans as int64; floats as float64; decimals; strings
// and binaries as string).
type winCol struct {
	typ    arrow.DataType
	valid  []bool // nil: no NULLs
	ints   []int64
	floats []float64
	decs   []decimal128.Num
	strs   []string

	nnBefore []int32 // see prefixValid
	nnPos    []int32
}

func (c *winCol) isValid(k int) bool { return c.valid == nil || c.valid[k] }

// prefixValid returns nnBefore, where nnBefore[k] is the number of non-NULL
// values before position k (n+1 entries), and nnPos, the positions of the
// non-NULL values: the k-th non-NULL of a range and counts over ranges in
// O(1).
func (c *winCol) prefixValid(n int) ([]int32, []int32) {
	if c.nnBefore != nil {
		return c.nnBefore, c.nnPos
	}
	before := make([]int32, n+1)
	pos := make([]int32, 0, n)
	for k := 0; k < n; k++ {
		before[k] = int32(len(pos))
		if c.isValid(k) {
			pos = append(pos, int32(k))
		}
	}
	before[n] = int32(len(pos))
	c.nnBefore, c.nnPos = before, pos
	return before, pos
}

// compare returns a comparator of two non-NULL positions, in ORDER BY's
// order (cmpFloat puts NaN last, as ORDER BY does).
func (c *winCol) compare() func(a, b int32) int {
	switch {
	case c.ints != nil:
		v := c.ints
		return func(a, b int32) int { return cmpOrdered(v[a], v[b]) }
	case c.floats != nil:
		v := c.floats
		return func(a, b int32) int { return cmpFloat(v[a], v[b]) }
	case c.decs != nil:
		v := c.decs
		return func(a, b int32) int { return v[a].Cmp(v[b]) }
	}
	v := c.strs
	return func(a, b int32) int { return strings.Compare(v[a], v[b]) }
}

// colCat is how a column type's values are kept in a winCol.
type colCat int

const (
	catNone colCat = iota // validity only
	catInt
	catFloat
	catDec
	catStr
)

func catOf(t arrow.DataType) colCat {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.BOOL:
		return catInt
	case arrow.FLOAT32, arrow.FLOAT64:
		return catFloat
	case arrow.DECIMAL128:
		return catDec
	case arrow.STRING, arrow.BINARY:
		return catStr
	}
	return catNone
}

// newWinCol allocates the vectors of n values of t.
func newWinCol(t arrow.DataType, n int) *winCol {
	c := &winCol{typ: t}
	switch catOf(t) {
	case catInt:
		c.ints = make([]int64, n)
	case catFloat:
		c.floats = make([]float64, n)
	case catDec:
		c.decs = make([]decimal128.Num, n)
	case catStr:
		c.strs = make([]string, n)
	}
	return c
}
