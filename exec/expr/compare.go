package expr

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

var cmpOps = map[string]cmpOp{"=": opEq, "<>": opNe, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}
var cmpSyms = [...]string{"=", "<>", "<", "<=", ">", ">="}

// flip is the operator with its operands swapped: a < b is b > a.
func (o cmpOp) flip() cmpOp {
	switch o {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return o
}

// Compare is a comparison over two operands of one type. Numbers compare
// by value after widening (INT with DECIMAL, DECIMAL with DOUBLE),
// strings and bytes bytewise, timestamps and times in the finer unit, and a
// string meeting a TIMESTAMP, DATE, TIME, number or BOOLEAN is cast to that type (a
// string literal is converted once, when the query is bound). NaN is
// unordered, as in Go and Java: every comparison with it but <> is FALSE.
type Compare struct {
	op   cmpOp
	l, r Expr
}

func orderable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128,
		arrow.STRING, arrow.BINARY, arrow.TIMESTAMP, arrow.DATE32, arrow.NULL, arrow.INTERVAL_MONTH_DAY_NANO,
		arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}

// compareType is the type both sides of a comparison are widened to.
func compareType(lt, rt arrow.DataType) (arrow.DataType, bool) {
	if !orderable(lt) || !orderable(rt) {
		return nil, false
	}
	switch {
	case isString(lt) && (isNumeric(rt) || isBool(rt) || isTemporal(rt) || isTime(rt)):
		return rt, true
	case isString(rt) && (isNumeric(lt) || isBool(lt) || isTemporal(lt) || isTime(lt)):
		return lt, true
	}
	t, err := CommonType(lt, rt)
	return t, err == nil
}

func newCompare(op string, l, r Expr) (Expr, error) {
	ct, ok := compareType(l.Type(), r.Type())
	if !ok {
		return nil, sqlTypeErr(op, l.Type(), r.Type())
	}
	if isNull(ct) {
		ct = arrow.FixedWidthTypes.Boolean // NULL = NULL: NULL, any type will do
	}
	c := &Compare{op: cmpOps[op]}
	if lit, ok := r.(*Literal); ok && isDate(l.Type()) && isTimestamp(ct) {
		if o, b, ok := dateBound(c.op, l, lit); ok {
			c.op, c.l, c.r = o, l, b
			return fold(c, c.l, c.r)
		}
	}
	if lit, ok := l.(*Literal); ok && isDate(r.Type()) && isTimestamp(ct) {
		if o, b, ok := dateBound(c.op.flip(), r, lit); ok {
			c.op, c.l, c.r = o, r, b
			return fold(c, c.l, c.r)
		}
	}
	var err error
	if c.l, err = Coerce(l, ct); err != nil {
		return nil, fmt.Errorf("'%s': %w", op, err)
	}
	if c.r, err = Coerce(r, ct); err != nil {
		return nil, fmt.Errorf("'%s': %w", op, err)
	}
	return fold(c, c.l, c.r)
}

func (c *Compare) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

func (c *Compare) String() string { return sqlText(c) }

func (c *Compare) writeSQL(b *strings.Builder) { writeBinary(b, c.l, cmpSyms[c.op], c.r) }

func (c *Compare) EvalRow(r exec.Row) (any, error) {
	x, err := c.l.EvalRow(r)
	if err != nil {
		return nil, err
	}
	y, err := c.r.EvalRow(r)
	if err != nil || x == nil || y == nil {
		return nil, err
	}
	return compareValues(c.op, x, y), nil
}

func ord[T cmp.Ordered](op cmpOp, a, b T) bool {
	switch op {
	case opEq:
		return a == b
	case opNe:
		return a != b
	case opLt:
		return a < b
	case opLe:
		return a <= b
	case opGt:
		return a > b
	}
	return a >= b
}

func threeWay(op cmpOp, c int) bool { return ord(op, c, 0) }

func cmp128(a, b num) int {
	switch {
	case less128(a, b):
		return -1
	case less128(b, a):
		return 1
	}
	return 0
}

// compareValues compares two non-NULL values of one type.
func compareValues(op cmpOp, x, y any) bool {
	switch a := x.(type) {
	case int32:
		return ord(op, a, y.(int32))
	case int64:
		return ord(op, a, y.(int64))
	case float32:
		return ord(op, a, y.(float32))
	case float64:
		return ord(op, a, y.(float64))
	case arrow.Timestamp:
		return ord(op, a, y.(arrow.Timestamp))
	case arrow.Date32:
		return ord(op, a, y.(arrow.Date32))
	case arrow.Time64:
		return ord(op, a, y.(arrow.Time64))
	case decimal128.Num:
		return threeWay(op, cmp128(a, y.(decimal128.Num)))
	case string:
		return ord(op, a, y.(string))
	case []byte:
		return threeWay(op, bytes.Compare(a, y.([]byte)))
	case bool:
		return threeWay(op, boolCmp(a, y.(bool)))
	case arrow.MonthDayNanoInterval:
		return threeWay(op, intervalCmp(a, y.(arrow.MonthDayNanoInterval)))
	}
	return false
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

// b2u is a branch-free bool to 0/1.
func b2u(b bool) byte { return *(*byte)(unsafe.Pointer(&b)) }

func (c *Compare) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	if out, handled, err := c.compareDict(mem, rec); handled {
		return out, err
	}
	lo, err := evalOperand(mem, c.l, rec)
	if err != nil {
		return nil, err
	}
	defer lo.release()
	ro, err := evalOperand(mem, c.r, rec)
	if err != nil {
		return nil, err
	}
	defer ro.release()
	n := int(rec.NumRows())
	bt := arrow.FixedWidthTypes.Boolean
	if lo.isNullScalar() || ro.isNullScalar() {
		return nullArray(mem, bt, n), nil
	}
	op := c.op
	if lo.arr == nil && ro.arr == nil {
		return Lit(compareValues(op, lo.scalar, ro.scalar), bt).EvalColumnar(mem, rec)
	}
	if lo.arr == nil { // constant on the left: swap so kernels see column op x
		lo, ro, op = ro, lo, op.flip()
	}
	valid, nulls := andValidity(mem, n, lo.arr, ro.arr)
	buf, out := newBits(mem, n)
	switch lo.arr.DataType().ID() {
	case arrow.INT32:
		cmpOrdered[int32](op, lo, ro, out, n)
	case arrow.INT64:
		cmpOrdered[int64](op, lo, ro, out, n)
	case arrow.FLOAT32:
		cmpOrdered[float32](op, lo, ro, out, n)
	case arrow.FLOAT64:
		cmpOrdered[float64](op, lo, ro, out, n)
	case arrow.TIMESTAMP:
		cmpOrdered[arrow.Timestamp](op, lo, ro, out, n)
	case arrow.DATE32:
		cmpOrdered[arrow.Date32](op, lo, ro, out, n)
	case arrow.TIME64:
		cmpOrdered[arrow.Time64](op, lo, ro, out, n)
	case arrow.DECIMAL128:
		x, mx := slice[decimal128.Num](lo)
		y, my := slice[decimal128.Num](ro)
		if fits64(x, mx, n) && fits64(y, my, n) {
			cmpDec64(op, x, y, mx, my, out, n)
			break
		}
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(threeWay(op, cmp128(x[i&mx], y[i&my]))) << (i & 7)
		}
	case arrow.STRING:
		cmpStrings(op, lo, ro, out, n)
	default: // BOOLEAN, BYTES, TIME(0..3): rare enough for per-value access
		for i := 0; i < n; i++ {
			if lo.arr.IsValid(i) && (ro.arr == nil || ro.arr.IsValid(i)) {
				y := ro.scalar
				if ro.arr != nil {
					y = valueAt(ro.arr, i)
				}
				out[i>>3] |= b2u(compareValues(op, valueAt(lo.arr, i), y)) << (i & 7)
			}
		}
	}
	return finish(bt, n, valid, nulls, buf), nil
}

// fits64 reports whether the first n values of x (one when mask is 0, a
// constant) are int64s sign-extended to 128 bits: every value of a
// DECIMAL(p <= 18) column, checked rather than trusted from the type
// because a file may hold a wider value than its precision says.
func fits64(x []decimal128.Num, mask, n int) bool {
	if mask == 0 {
		n = 1
	}
	for _, v := range x[:n] {
		if v.HighBits() != int64(v.LowBits())>>63 {
			return false
		}
	}
	return true
}

// cmpDec64 is cmpOrdered for DECIMAL values that fit int64 (fits64): the
// low words compared as int64, one loop per operator (TPC-H Q6's
// l_discount BETWEEN 0.05 AND 0.07 took a third of the query's time
// through the 128-bit three-way compare).
func cmpDec64(op cmpOp, x, y []decimal128.Num, mx, my int, out []byte, n int) {
	lo := func(v decimal128.Num) int64 { return int64(v.LowBits()) }
	switch op {
	case opEq:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(lo(x[i&mx]) == lo(y[i&my])) << (i & 7)
		}
	case opNe:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(lo(x[i&mx]) != lo(y[i&my])) << (i & 7)
		}
	case opLt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(lo(x[i&mx]) < lo(y[i&my])) << (i & 7)
		}
	case opLe:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(lo(x[i&mx]) <= lo(y[i&my])) << (i & 7)
		}
	case opGt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(lo(x[i&mx]) > lo(y[i&my])) << (i & 7)
		}
	default:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(lo(x[i&mx]) >= lo(y[i&my])) << (i & 7)
		}
	}
}

type ordered interface {
	~int32 | ~int64 | ~float32 | ~float64
}

// cmpOrdered packs op(x[i], y[i]) into the output bitmap, one loop per
// operator so the comparison is a single instruction in the loop body.
func cmpOrdered[T ordered](op cmpOp, lo, ro operand, out []byte, n int) {
	x, mx := slice[T](lo)
	y, my := slice[T](ro)
	switch op {
	case opEq:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(x[i&mx] == y[i&my]) << (i & 7)
		}
	case opNe:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(x[i&mx] != y[i&my]) << (i & 7)
		}
	case opLt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(x[i&mx] < y[i&my]) << (i & 7)
		}
	case opLe:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(x[i&mx] <= y[i&my]) << (i & 7)
		}
	case opGt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(x[i&mx] > y[i&my]) << (i & 7)
		}
	default:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(x[i&mx] >= y[i&my]) << (i & 7)
		}
	}
}

// cmpStrings compares over the string views Arrow hands out without
// copying (array.String.Value aliases the data buffer).
func cmpStrings(op cmpOp, lo, ro operand, out []byte, n int) {
	x := lo.arr.(*array.String)
	if ro.arr == nil {
		s := ro.scalar.(string)
		if op == opEq || op == opNe {
			want := op == opEq
			for i := 0; i < n; i++ {
				out[i>>3] |= b2u((x.Value(i) == s) == want) << (i & 7)
			}
			return
		}
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(threeWay(op, strings.Compare(x.Value(i), s))) << (i & 7)
		}
		return
	}
	y := ro.arr.(*array.String)
	for i := 0; i < n; i++ {
		out[i>>3] |= b2u(threeWay(op, strings.Compare(x.Value(i), y.Value(i)))) << (i & 7)
	}
}
