package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// NewBinary builds a binary operator: arithmetic + - * / % (over numbers,
// and over dates, timestamps and intervals: datetime_arith.go), string
// concatenation ||, comparisons = <> != < > <= >=, and the logical AND /
// OR. Operands are widened to a
// common type here, once, so every kernel sees two inputs of one type.
func NewBinary(op string, l, r Expr) (Expr, error) {
	switch o := strings.ToUpper(strings.TrimSpace(op)); o {
	case "+", "-", "*", "/", "%":
		if e, ok, err := newTemporalArith(o, l, r); ok {
			return e, err
		}
		return newArith(o, l, r, "")
	case "||":
		return newConcatOp(l, r)
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		return newCompare(o, l, r)
	case "AND", "OR":
		return newLogic(o, l, r)
	}
	return nil, fmt.Errorf("unknown binary operator '%s'", op)
}

// Arith is + - * / % over two operands of one numeric type.
//
// Result types follow Flink: two integers give the wider integer (INT + INT
// is INT) and overflow is an error naming the operation; a FLOAT or DOUBLE
// operand makes it DOUBLE (IEEE: x/0 is Infinity or NaN); a DECIMAL with an
// integer or DECIMAL gives a DECIMAL (integers count as DECIMAL(10,0) or
// DECIMAL(19,0)) with
//
//   - -: s = max(s1,s2), p = max(p1-s1, p2-s2) + s + 1
//   - : s = s1 + s2,    p = p1 + p2
//     /  : s = max(6, s1 + p2 + 1), p = p1 - s1 + s2 + s
//     %  : s = max(s1,s2), p = min(p1-s1, p2-s2) + s
//
// narrowed past 38 digits as Flink does (keep the integer digits, scale no
// lower than 6), rounding HALF_UP; a result that still needs more digits
// is an error. Integer division truncates toward zero (7 / 2 = 3, as
// PostgreSQL, Flink and SQLite). Division or % by zero is NULL for every
// numeric type, as in SQLite and DuckDB (PostgreSQL raises an error): the
// SQLite sqllogictest corpus expects NULL, and one zero in a column then
// does not fail a whole query. % takes the sign of the dividend.
type Arith struct {
	op   byte
	l, r Expr
	t    arrow.DataType
	fn   string // "mod" when written as a function
	dec  decOp
}

func sqlTypeErr(op string, a, b arrow.DataType) error {
	return fmt.Errorf("cannot apply '%s' to %s and %s", op, typeName(a), typeName(b))
}

// arithType is the type rule of + - * / % (and mod): the result type and
// the types the operands are widened to, from the operand types alone.
func arithType(op string, lt, rt arrow.DataType) (t, lc, rc arrow.DataType, err error) {
	if isNull(lt) && isNull(rt) {
		return nil, nil, nil, fmt.Errorf("cannot apply '%s' to NULL and NULL: the type is unknown", op)
	}
	olt, ort := lt, rt
	if isNull(lt) {
		lt = rt
	}
	if isNull(rt) {
		rt = lt
	}
	if !isNumeric(lt) || !isNumeric(rt) {
		return nil, nil, nil, sqlTypeErr(op, olt, ort)
	}
	switch {
	case isInt(lt) && isInt(rt):
		t, _ := CommonType(lt, rt)
		return t, t, t, nil
	case isFloat(lt) || isFloat(rt):
		return tDouble, tDouble, tDouble, nil
	}
	p1, s1 := decParts(lt)
	p2, s2 := decParts(rt)
	var d *arrow.Decimal128Type
	switch op[0] {
	case '+', '-':
		s := max(s1, s2)
		d = adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
	case '*':
		d = adjustDecimal(p1+p2, s1+s2)
	case '/':
		s := max(minAdjustedScale, s1+p2+1)
		d = adjustDecimal(p1-s1+s2+s, s)
	case '%':
		s := max(s1, s2)
		d = adjustDecimal(min(p1-s1, p2-s2)+s, s)
	}
	return d, decType(p1, s1), decType(p2, s2), nil
}

func newArith(op string, l, r Expr, fn string) (Expr, error) {
	t, lc, rc, err := arithType(op, l.Type(), r.Type())
	if err != nil {
		return nil, err
	}
	a := &Arith{op: op[0], fn: fn, t: t}
	if d, ok := t.(*arrow.Decimal128Type); ok {
		_, s1 := decParts(lc)
		_, s2 := decParts(rc)
		a.dec = decOp{op: a.op, s1: s1, s2: s2, p: d.Precision, s: d.Scale}
	}
	if a.l, err = Coerce(l, lc); err != nil {
		return nil, err
	}
	if a.r, err = Coerce(r, rc); err != nil {
		return nil, err
	}
	return fold(a, a.l, a.r)
}

func (a *Arith) Type() arrow.DataType { return a.t }

func (a *Arith) String() string { return sqlText(a) }

func (a *Arith) writeSQL(b *strings.Builder) {
	if a.fn != "" {
		b.WriteString(a.fn)
		b.WriteByte('(')
		writeSQL(b, a.l)
		b.WriteString(", ")
		writeSQL(b, a.r)
		b.WriteByte(')')
		return
	}
	writeBinary(b, a.l, string(a.op), a.r)
}

func (a *Arith) overflow(x, y any) error {
	return fmt.Errorf("%s overflow in %s: %s %c %s", typeName(a.t), a,
		FormatValue(x, a.l.Type()), a.op, FormatValue(y, a.r.Type()))
}

func (a *Arith) EvalRow(r exec.Row) (any, error) {
	x, err := a.l.EvalRow(r)
	if err != nil {
		return nil, err
	}
	y, err := a.r.EvalRow(r)
	if err != nil || x == nil || y == nil {
		return nil, err
	}
	return a.apply(x, y)
}

// apply is the operation on one pair of non-NULL values: the definition
// the kernels must match.
func (a *Arith) apply(x, y any) (any, error) {
	if (a.op == '/' || a.op == '%') && isZero(y) {
		return nil, nil
	}
	switch a.t.ID() {
	case arrow.INT32:
		r, st := intOp(a.op, x.(int32), y.(int32))
		return r, a.status(st, x, y)
	case arrow.INT64:
		r, st := intOp(a.op, x.(int64), y.(int64))
		return r, a.status(st, x, y)
	case arrow.FLOAT64:
		return floatOp(a.op, x.(float64), y.(float64)), nil
	default:
		r, st := a.dec.apply(x.(decimal128.Num), y.(decimal128.Num))
		return r, a.status(st, x, y)
	}
}

const (
	opOK = iota
	opOverflow
	opDivZero
)

func (a *Arith) status(st int, x, y any) error {
	if st == opOverflow {
		return a.overflow(x, y)
	}
	return nil // opDivZero cannot reach here: apply makes x / 0 NULL first
}

type sint interface{ ~int32 | ~int64 }

func minOf[T sint]() T {
	var z T
	m := int64(math.MinInt64) >> (64 - 8*unsafe.Sizeof(z))
	return T(m)
}

// mulOvf multiplies in 128 bits; the product overflows T unless the high
// word is the sign extension of a value that also fits T.
func mulOvf[T sint](x, y T) (T, bool) {
	hi, lo := bits.Mul64(uint64(int64(x)), uint64(int64(y)))
	shi := int64(hi) - (int64(x)>>63)&int64(y) - (int64(y)>>63)&int64(x)
	r := T(lo)
	return r, shi != int64(lo)>>63 || int64(lo) != int64(r)
}

func intOp[T sint](op byte, x, y T) (T, int) {
	switch op {
	case '+':
		r := x + y
		if (x^r)&(y^r) < 0 {
			return r, opOverflow
		}
		return r, opOK
	case '-':
		r := x - y
		if (x^y)&(x^r) < 0 {
			return r, opOverflow
		}
		return r, opOK
	case '*':
		r, o := mulOvf(x, y)
		if o {
			return r, opOverflow
		}
		return r, opOK
	case '/':
		if y == 0 {
			return 0, opDivZero
		}
		if y == -1 && x == minOf[T]() {
			return 0, opOverflow
		}
		return x / y, opOK
	default:
		if y == 0 {
			return 0, opDivZero
		}
		return x % y, opOK
	}
}

func floatOp(op byte, x, y float64) float64 {
	switch op {
	case '+':
		return x + y
	case '-':
		return x - y
	case '*':
		return x * y
	case '/':
		return x / y
	}
	return math.Mod(x, y)
}

// decOp is DECIMAL arithmetic: inputs at scales s1, s2, result
// DECIMAL(p, s).
type decOp struct {
	op           byte
	s1, s2, p, s int32
}

func (d decOp) apply(x, y num) (num, int) {
	var r num
	ok := true
	switch d.op {
	case '+', '-':
		sc := max(d.s1, d.s2)
		var ok1, ok2 bool
		x, ok1 = decRescale(x, d.s1, sc)
		y, ok2 = decRescale(y, d.s2, sc)
		if !ok1 || !ok2 {
			return num{}, opOverflow
		}
		if d.op == '+' {
			r, ok = decAdd(x, y)
		} else {
			r, ok = decSub(x, y)
		}
		if ok && d.s < sc {
			r, ok = decRescale(r, sc, d.s)
		}
	case '*':
		r, ok = decMul(x, y)
		if d.s < d.s1+d.s2 {
			if ok {
				r, ok = decRescale(r, d.s1+d.s2, d.s)
			} else {
				// The exact product needs more than 128 bits; round it
				// down to the result scale in math/big.
				b := new(big.Int).Mul(x.BigInt(), y.BigInt())
				r, ok = bigToNumRounded(b, d.s1+d.s2-d.s)
			}
		}
	case '/':
		if y.Sign() == 0 {
			return num{}, opDivZero
		}
		r, ok = decDivRound(x, d.s1, y, d.s2, d.s)
	default:
		if y.Sign() == 0 {
			return num{}, opDivZero
		}
		var ok1, ok2 bool
		x, ok1 = decRescale(x, d.s1, d.s)
		y, ok2 = decRescale(y, d.s2, d.s)
		if !ok1 || !ok2 {
			return num{}, opOverflow
		}
		r = decMod(x, y)
	}
	if !ok || !decFits(r, d.p) {
		return num{}, opOverflow
	}
	return r, opOK
}

// bigToNumRounded divides b by 10^drop HALF_UP and converts.
func bigToNumRounded(b *big.Int, drop int32) (num, bool) {
	d := bigPow10(drop)
	q, rem := new(big.Int).QuoRem(b, d, new(big.Int))
	if rem.Abs(rem).Lsh(rem, 1).Cmp(d) >= 0 {
		q.Add(q, big.NewInt(int64(b.Sign())))
	}
	return bigToNum(q)
}

func (a *Arith) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	if a.t.ID() == arrow.DECIMAL128 {
		if out, ok, err := a.mulIntByConst(mem, rec); ok {
			return out, err
		}
	}
	lo, err := evalOperand(mem, a.l, rec)
	if err != nil {
		return nil, err
	}
	defer lo.release()
	ro, err := evalOperand(mem, a.r, rec)
	if err != nil {
		return nil, err
	}
	defer ro.release()
	n := int(rec.NumRows())
	if lo.isNullScalar() || ro.isNullScalar() {
		return nullArray(mem, a.t, n), nil
	}
	if lo.arr == nil && ro.arr == nil {
		v, err := a.apply(lo.scalar, ro.scalar)
		if err != nil {
			return nil, err
		}
		return Lit(v, a.t).EvalColumnar(mem, rec)
	}
	if (a.op == '/' || a.op == '%') && ro.arr == nil && isZero(ro.scalar) {
		return nullArray(mem, a.t, n), nil
	}
	valid, nulls := andValidity(mem, n, lo.arr, ro.arr)
	if a.op == '/' || a.op == '%' {
		valid, nulls = maskZeroDivisors(mem, ro, valid, n)
	}
	var out *memory.Buffer
	bad := false
	switch a.t.ID() {
	case arrow.INT32:
		out, bad = intColumns[int32](mem, a.op, lo, ro, n)
	case arrow.INT64:
		out, bad = intColumns[int64](mem, a.op, lo, ro, n)
	case arrow.FLOAT64:
		out = floatColumns(mem, a.op, lo, ro, n)
	default:
		out, bad = a.decColumns(mem, lo, ro, n)
	}
	if bad {
		// Something overflowed or divided by zero, maybe only under a
		// NULL: find the first real failure in row order.
		if err := a.firstError(lo, ro, valid, n); err != nil {
			out.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
	}
	return finish(a.t, n, valid, nulls, out), nil
}

func (a *Arith) firstError(lo, ro operand, valid *memory.Buffer, n int) error {
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	at := func(o operand, i int) any {
		if o.arr == nil {
			return o.scalar
		}
		return valueAt(o.arr, i)
	}
	for i := 0; i < n; i++ {
		if vb != nil && !bitutil.BitIsSet(vb, i) {
			continue
		}
		if _, err := a.apply(at(lo, i), at(ro, i)); err != nil {
			return err
		}
	}
	return nil
}

// intColumns runs one integer operation over the whole batch (intKernel).
// Overflow is reported once (bad); a zero divisor's row is NULL
// (maskZeroDivisors).
func intColumns[T sint](mem memory.Allocator, op byte, lo, ro operand, n int) (*memory.Buffer, bool) {
	x, mx := slice[T](lo)
	y, my := slice[T](ro)
	buf, out := newValues[T](mem, n)
	return buf, intKernel(op, x, mx, y, my, out)
}

// isZero reports whether a non-NULL numeric value is zero.
func isZero(v any) bool {
	switch x := v.(type) {
	case int32:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case float32:
		return x == 0
	case decimal128.Num:
		return x.Sign() == 0
	}
	return false
}

// maskZeroDivisors clears the validity of every row whose divisor (ro, a
// column) is zero: x / 0 is NULL.
func maskZeroDivisors(mem memory.Allocator, ro operand, valid *memory.Buffer, n int) (*memory.Buffer, int) {
	if ro.arr == nil {
		return valid, countNullsIn(valid, n)
	}
	var vb []byte
	set := func(i int) {
		if valid == nil {
			valid, vb = newBits(mem, n)
			bitutil.SetBitsTo(vb, 0, int64(n), true)
		}
		if vb == nil {
			vb = valid.Bytes()
		}
		bitutil.ClearBit(vb, i)
	}
	switch ro.arr.DataType().ID() {
	case arrow.INT32:
		for i, y := range values[int32](ro.arr) {
			if y == 0 {
				set(i)
			}
		}
	case arrow.INT64:
		for i, y := range values[int64](ro.arr) {
			if y == 0 {
				set(i)
			}
		}
	case arrow.FLOAT64:
		for i, y := range values[float64](ro.arr) {
			if y == 0 {
				set(i)
			}
		}
	case arrow.DECIMAL128:
		for i, y := range values[decimal128.Num](ro.arr) {
			if y.Sign() == 0 {
				set(i)
			}
		}
	}
	return valid, countNullsIn(valid, n)
}

func countNullsIn(valid *memory.Buffer, n int) int {
	if valid == nil {
		return 0
	}
	return n - bitutil.CountSetBits(valid.Bytes(), 0, n)
}

func floatColumns(mem memory.Allocator, op byte, lo, ro operand, n int) *memory.Buffer {
	x, mx := slice[float64](lo)
	y, my := slice[float64](ro)
	buf, out := newValues[float64](mem, n)
	floatKernel(op, x, mx, y, my, out)
	return buf
}

func (a *Arith) decColumns(mem memory.Allocator, lo, ro operand, n int) (*memory.Buffer, bool) {
	x, mx := slice[decimal128.Num](lo)
	y, my := slice[decimal128.Num](ro)
	buf, out := newValues[decimal128.Num](mem, n)
	d := a.dec
	bad := false
	if d.op == '*' && d.s == d.s1+d.s2 && d.p == a.l.Type().(*arrow.Decimal128Type).Precision+a.r.Type().(*arrow.Decimal128Type).Precision {
		// Unnarrowed product (the common price * 0.908): two values within
		// their precisions cannot exceed p1+p2 <= 38 digits. Values that fit
		// 64 bits multiply in one instruction pair.
		for i := range out {
			p, q := x[i&mx], y[i&my]
			if fitsInt64(p) && fitsInt64(q) {
				s, t := int64(p.LowBits()), int64(q.LowBits())
				hi, lo := bits.Mul64(uint64(s), uint64(t))
				out[i] = decimal128.New(int64(hi)-(s>>63)&t-(t>>63)&s, lo)
				continue
			}
			r, st := d.apply(p, q)
			out[i] = r
			bad = bad || st != opOK
		}
		return buf, bad
	}
	for i := range out {
		r, st := d.apply(x[i&mx], y[i&my])
		out[i] = r
		bad = bad || st == opOverflow
	}
	return buf, bad
}
