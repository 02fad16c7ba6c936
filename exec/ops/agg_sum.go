package ops

import (
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// accumulator is one aggregate's state for every group, in typed slices
// indexed by group id. Both paths feed the same state.
type accumulator interface {
	// bind checks the input column type (nil for COUNT(*)).
	bind(in arrow.DataType) error
	// grow makes room for groups 0..n-1.
	grow(n int)
	// updateColumnar folds arr[i] into group ids[i]; ids[i] < 0 skips row i.
	updateColumnar(arr arrow.Array, ids []int32) error
	// updateRow folds one row-form value into group g.
	updateRow(v any, g int32) error
	// value is group g's result in row form (nil for NULL).
	value(g int) any
	// build is the result column for groups 0..n-1.
	build(mem memory.Allocator, n int) (arrow.Array, error)
}

// overflowError is an aggregate whose result does not fit its type. Its
// text names the aggregate as written (SUM(price) overflowed BIGINT), so
// the operators pass it on without their own prefix.
type overflowError struct{ msg string }

func (e *overflowError) Error() string { return e.msg }

// aggFailure prefixes err with where it happened, except an overflow,
// which already says which aggregate failed.
func aggFailure(where string, err error) error {
	var o *overflowError
	if errors.As(err, &o) {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// countAcc is COUNT(*) (star) or COUNT(x).
type countAcc struct {
	star   bool
	counts []int64
}

func (c *countAcc) bind(arrow.DataType) error { return nil }
func (c *countAcc) grow(n int)                { c.counts = growTo(c.counts, n) }

func (c *countAcc) updateColumnar(arr arrow.Array, ids []int32) error {
	nulls := !c.star && arr.NullN() > 0
	for i, g := range ids {
		if g >= 0 && (!nulls || arr.IsValid(i)) {
			c.counts[g]++
		}
	}
	return nil
}

func (c *countAcc) updateRow(v any, g int32) error {
	if c.star || v != nil {
		c.counts[g]++
	}
	return nil
}

func (c *countAcc) value(g int) any { return c.counts[g] }

func (c *countAcc) build(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(c.counts[:n], nil)
	return b.NewArray(), nil
}

// sumDomain is the arithmetic a SUM / AVG accumulates in; the planner's
// output type decides it.
type sumDomain int

const (
	domInt sumDomain = iota
	domFloat
	domDecimal
	domAvgInt // AVG over integers: an exact 128-bit sum, divided as DOUBLE
)

// sumAcc is SUM(x) or AVG(x) (avg: divide by the count of non-NULL inputs).
// A BIGINT sum that leaves the int64 range is an error naming the
// aggregate; AVG over integers sums in 128 bits, so it cannot overflow
// before its division.
type sumAcc struct {
	avg    bool
	name   string // the call as written, for the overflow error
	out    arrow.DataType
	dom    sumDomain
	inDec  int32 // scale the decimal sums are kept in (the input's)
	ints   []int64
	his    []int64 // domAvgInt: the high words of the 128-bit sums (ints: low words)
	floats []float64
	decs   []decimal128.Num
	counts []int64 // non-NULL inputs per group; 0 means the result is NULL
}

func newSumAcc(avg bool, out arrow.DataType, name string) (*sumAcc, error) {
	s := &sumAcc{avg: avg, out: out, name: name}
	switch t := out.(type) {
	case *arrow.Int64Type:
		if avg {
			return nil, fmt.Errorf("AVG gives DOUBLE (or DECIMAL over DECIMAL), not a truncated BIGINT")
		}
		s.dom = domInt
	case *arrow.Float64Type:
		s.dom = domFloat
	case *arrow.Decimal128Type:
		s.dom = domDecimal
		s.inDec = t.Scale
	default:
		return nil, fmt.Errorf("output type %s is not supported (BIGINT, DOUBLE or DECIMAL)", out)
	}
	return s, nil
}

func (s *sumAcc) bind(in arrow.DataType) error {
	switch in.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		switch {
		case s.dom == domDecimal:
			s.inDec = 0
		case s.avg && s.dom == domFloat:
			s.dom = domAvgInt
		}
		return nil
	case arrow.FLOAT32, arrow.FLOAT64:
		if s.dom == domFloat {
			return nil
		}
	case arrow.DECIMAL128:
		if s.dom == domDecimal {
			s.inDec = in.(*arrow.Decimal128Type).Scale
			return nil
		}
	}
	return fmt.Errorf("input type %s cannot be summed into %s", in, s.out)
}

func (s *sumAcc) grow(n int) {
	s.counts = growTo(s.counts, n)
	switch s.dom {
	case domInt:
		s.ints = growTo(s.ints, n)
	case domAvgInt:
		s.ints = growTo(s.ints, n)
		s.his = growTo(s.his, n)
	case domFloat:
		s.floats = growTo(s.floats, n)
	default:
		s.decs = growTo(s.decs, n)
	}
}

func (s *sumAcc) updateColumnar(arr arrow.Array, ids []int32) error {
	d := arr.Data()
	switch arr.DataType().ID() {
	case arrow.INT8:
		return sumIntsInto(s, arrow.GetValues[int8](d, 1), arr, ids)
	case arrow.INT16:
		return sumIntsInto(s, arrow.GetValues[int16](d, 1), arr, ids)
	case arrow.INT32:
		return sumIntsInto(s, arrow.GetValues[int32](d, 1), arr, ids)
	case arrow.INT64:
		return sumIntsInto(s, arrow.GetValues[int64](d, 1), arr, ids)
	case arrow.FLOAT32:
		sumFloatsInto(s, arrow.GetValues[float32](d, 1), arr, ids)
		return nil
	case arrow.FLOAT64:
		sumFloatsInto(s, arrow.GetValues[float64](d, 1), arr, ids)
		return nil
	case arrow.DECIMAL128:
		return sumDecsInto(s, arrow.GetValues[decimal128.Num](d, 1), arr, ids)
	}
	return fmt.Errorf("cannot sum a %s column", arr.DataType())
}

func sumIntsInto[T int8 | int16 | int32 | int64](s *sumAcc, vals []T, arr arrow.Array, ids []int32) error {
	nulls := arr.NullN() > 0
	if s.dom == domInt && !nulls {
		// The common case in one tight loop: no NULLs, BIGINT sums (an
		// overflow is a result whose sign differs from both operands').
		ints, counts := s.ints, s.counts
		for i, g := range ids {
			if g < 0 {
				continue
			}
			v := int64(vals[i])
			a := ints[g]
			r := a + v
			if (a^r)&(v^r) < 0 {
				return s.overflow()
			}
			ints[g] = r
			counts[g]++
		}
		return nil
	}
	if s.dom == domAvgInt && !nulls {
		// 128-bit sums: add the value's low word with carry into the
		// high word, which takes the value's sign extension.
		lo, hi, counts := s.ints, s.his, s.counts
		for i, g := range ids {
			if g < 0 {
				continue
			}
			v := int64(vals[i])
			sum, carry := bits.Add64(uint64(lo[g]), uint64(v), 0)
			lo[g] = int64(sum)
			hi[g] += v>>63 + int64(carry)
			counts[g]++
		}
		return nil
	}
	for i, g := range ids {
		if g < 0 || (nulls && arr.IsNull(i)) {
			continue
		}
		if err := s.addInt(g, int64(vals[i])); err != nil {
			return err
		}
	}
	return nil
}

func sumFloatsInto[T float32 | float64](s *sumAcc, vals []T, arr arrow.Array, ids []int32) {
	nulls := arr.NullN() > 0
	for i, g := range ids {
		if g < 0 || (nulls && arr.IsNull(i)) {
			continue
		}
		s.floats[g] += float64(vals[i])
		s.counts[g]++
	}
}

func (s *sumAcc) addInt(g int32, v int64) error {
	switch s.dom {
	case domInt:
		a := s.ints[g]
		r := a + v
		if (v > 0 && r < a) || (v < 0 && r > a) {
			return s.overflow()
		}
		s.ints[g] = r
	case domAvgInt:
		sum, carry := bits.Add64(uint64(s.ints[g]), uint64(v), 0)
		s.ints[g] = int64(sum)
		s.his[g] += v>>63 + int64(carry)
	case domFloat:
		s.floats[g] += float64(v)
	default:
		return s.addDec(g, decimal128.FromI64(v)) // counts the input itself
	}
	s.counts[g]++
	return nil
}

func (s *sumAcc) overflow() error {
	return &overflowError{msg: s.name + " overflowed BIGINT"}
}

func (s *sumAcc) decOverflow() error {
	return &overflowError{msg: s.name + " overflowed DECIMAL(38) (more than 38 digits)"}
}

func (s *sumAcc) addDec(g int32, v decimal128.Num) error {
	r := s.decs[g].Add(v)
	if !r.FitsInPrecision(38) {
		return s.decOverflow()
	}
	s.decs[g] = r
	s.counts[g]++
	return nil
}

// decSafeHi bounds the high word of a 128-bit sum that cannot have more
// than 38 digits: floor(10^38 / 2^64), so |hi * 2^64 + lo| < 10^38
// whenever -decSafeHi <= hi < decSafeHi.
const decSafeHi = 5421010862427522170

// sumDecsInto is addDec over a column. A value that fits 64 bits (every
// DECIMAL(p <= 18) value, and the products of them that TPC-H sums) is
// added with one add-with-carry, and the 38-digit check runs only when
// the sum's high word leaves the range where it cannot fail; other values
// take addDec. The sums and the errors are addDec's exactly.
func sumDecsInto(s *sumAcc, vals []decimal128.Num, arr arrow.Array, ids []int32) error {
	var valid []byte
	off := arr.Data().Offset()
	if arr.NullN() > 0 {
		valid = arr.NullBitmapBytes()
	}
	decs, counts := s.decs, s.counts
	for i, g := range ids {
		if g < 0 || valid != nil && valid[(off+i)>>3]>>((off+i)&7)&1 == 0 {
			continue
		}
		v := vals[i]
		lo, hi := v.LowBits(), v.HighBits()
		if hi != int64(lo)>>63 {
			if err := s.addDec(g, v); err != nil {
				return err
			}
			continue
		}
		acc := decs[g]
		sl, c := bits.Add64(acc.LowBits(), lo, 0)
		sh := acc.HighBits() + hi + int64(c)
		r := decimal128.New(sh, sl)
		if (sh >= decSafeHi || sh < -decSafeHi) && !r.FitsInPrecision(38) {
			return s.decOverflow()
		}
		decs[g] = r
		counts[g]++
	}
	return nil
}

func (s *sumAcc) updateRow(v any, g int32) error {
	switch x := v.(type) {
	case nil:
		return nil
	case int32:
		return s.addInt(g, int64(x))
	case int64:
		return s.addInt(g, x)
	case float32:
		if s.dom != domFloat {
			break
		}
		s.floats[g] += float64(x)
		s.counts[g]++
		return nil
	case float64:
		if s.dom != domFloat {
			break
		}
		s.floats[g] += x
		s.counts[g]++
		return nil
	case decimal128.Num:
		if s.dom != domDecimal {
			break
		}
		return s.addDec(g, x)
	}
	return fmt.Errorf("cannot sum %v (%T) into %s", v, v, s.out)
}

func (s *sumAcc) value(g int) any {
	if s.counts[g] == 0 {
		return nil
	}
	switch s.dom {
	case domInt:
		return s.ints[g]
	case domAvgInt:
		lo, hi := s.ints[g], s.his[g]
		if hi == lo>>63 { // the sum fits int64: exact up to the division
			return float64(lo) / float64(s.counts[g])
		}
		sum := float64(hi)*0x1p64 + float64(uint64(lo)) // hi * 2^64 + lo (unsigned)
		return sum / float64(s.counts[g])
	case domFloat:
		if s.avg {
			return s.floats[g] / float64(s.counts[g])
		}
		return s.floats[g]
	}
	return s.decResult(g)
}

// decResult brings the sum to the output scale (rounding half up) and, for
// AVG, divides by the count with the same rounding.
func (s *sumAcc) decResult(g int) decimal128.Num {
	out := s.out.(*arrow.Decimal128Type).Scale
	v := s.decs[g]
	if out > s.inDec {
		v = v.IncreaseScaleBy(out - s.inDec)
	} else if out < s.inDec {
		v = v.ReduceScaleBy(s.inDec-out, true)
	}
	if !s.avg {
		return v
	}
	c := decimal128.FromI64(s.counts[g])
	q, r := v.Div(c)
	if r.Abs().Add(r.Abs()).GreaterEqual(c) {
		q = q.Add(decimal128.FromI64(int64(v.Sign())))
	}
	return q
}

func (s *sumAcc) build(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewBuilder(mem, s.out)
	defer b.Release()
	b.Reserve(n)
	for g := 0; g < n; g++ {
		if s.counts[g] == 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.UnsafeAppend(s.value(g).(int64))
		case *array.Float64Builder:
			bb.UnsafeAppend(s.value(g).(float64))
		case *array.Decimal128Builder:
			bb.Append(s.decResult(g))
		}
	}
	return b.NewArray(), nil
}

// growTo extends s with zero values to length n. A new slice takes at
// least a 64-byte cache line: the state of a few groups (one without GROUP
// BY) is written every row, and the partial aggregates of parallel
// subtasks allocate theirs together, where Go's allocator would otherwise
// pack two subtasks' few bytes into one line that both threads write.
func growTo[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	if cap(s) >= n {
		return s[:n]
	}
	var zero T
	line := 64 / max(int(unsafe.Sizeof(zero)), 1)
	ns := make([]T, n, max(n, 2*cap(s), line))
	copy(ns, s)
	return ns
}
