package expr

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Logic is AND / OR with SQL three-valued logic: FALSE AND NULL is FALSE,
// TRUE OR NULL is TRUE, otherwise NULL in, NULL out. The row path stops
// at a deciding left operand; the columnar path evaluates both sides and,
// if the right side fails, replays row at a time so a row the left side
// decides never raises the right side's error.
type Logic struct {
	and  bool
	l, r Expr
}

func asBool(op string, e Expr) (Expr, error) {
	switch e.Type().ID() {
	case arrow.BOOL:
		return e, nil
	case arrow.NULL:
		return Coerce(e, arrow.FixedWidthTypes.Boolean)
	}
	return nil, fmt.Errorf("cannot apply %s to %s: %s is not BOOLEAN", op, typeName(e.Type()), e)
}

func newLogic(op string, l, r Expr) (Expr, error) {
	if !isBool(l.Type()) && !isNull(l.Type()) || !isBool(r.Type()) && !isNull(r.Type()) {
		return nil, sqlTypeErr(op, l.Type(), r.Type())
	}
	lb, err := asBool(op, l)
	if err != nil {
		return nil, err
	}
	rb, err := asBool(op, r)
	if err != nil {
		return nil, err
	}
	g := &Logic{and: op == "AND", l: lb, r: rb}
	return fold(g, lb, rb)
}

func (g *Logic) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

func (g *Logic) String() string { return sqlText(g) }

func (g *Logic) writeSQL(b *strings.Builder) {
	op := "OR"
	if g.and {
		op = "AND"
	}
	writeBinary(b, g.l, op, g.r)
}

func (g *Logic) EvalRow(r exec.Row) (any, error) {
	x, err := g.l.EvalRow(r)
	if err != nil {
		return nil, err
	}
	decide := !g.and // OR is decided by TRUE, AND by FALSE
	if x == decide {
		return decide, nil
	}
	y, err := g.r.EvalRow(r)
	if err != nil {
		return nil, err
	}
	if y == decide {
		return decide, nil
	}
	if x == nil || y == nil {
		return nil, nil
	}
	return !decide, nil
}

func (g *Logic) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	la, err := g.l.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	ra, err := g.r.EvalColumnar(mem, rec)
	if err != nil {
		return rowFallback(mem, g, rec)
	}
	defer ra.Release()
	n := int(rec.NumRows())
	lv, lok := boolAndValid(la)
	rv, rok := boolAndValid(ra)
	vbuf, val := newBits(mem, n)
	mbuf, ok := newBits(mem, n)
	for i := range val {
		lt, rt := lv[i]&lok[i], rv[i]&rok[i]   // known TRUE
		lf, rf := ^lv[i]&lok[i], ^rv[i]&rok[i] // known FALSE
		if g.and {
			ok[i] = lok[i]&rok[i] | lf | rf
			val[i] = lt & rt
		} else {
			ok[i] = lok[i]&rok[i] | lt | rt
			val[i] = lt | rt
		}
	}
	return finishBool(mem, n, vbuf, mbuf), nil
}

// boolAndValid returns a BOOLEAN (or NULL-typed) array's aligned value and
// validity bitmaps, materialising all-ones validity when it has no nulls.
func boolAndValid(a arrow.Array) (vals, valid []byte) {
	n := a.Len()
	nb := (n + 7) / 8
	b, ok := a.(*array.Boolean)
	if !ok { // NULL type: every value unknown
		return make([]byte, nb), make([]byte, nb)
	}
	vals = boolBits(b)
	if valid = validBits(a); valid == nil {
		valid = make([]byte, nb)
		for i := range valid {
			valid[i] = 0xff
		}
	}
	return vals, valid
}

// finishBool builds a BOOLEAN array from a value and a validity bitmap,
// dropping the validity when every value is known.
func finishBool(mem memory.Allocator, n int, vals, valid *memory.Buffer) arrow.Array {
	nulls := n - countBits(valid.Bytes(), n)
	return finish(arrow.FixedWidthTypes.Boolean, n, valid, nulls, vals)
}

// Not is NOT e (NOT NULL is NULL).
type Not struct{ e Expr }

// NewNot is NOT e; e must be BOOLEAN (or an untyped NULL).
func NewNot(e Expr) (Expr, error) {
	if !isBool(e.Type()) && !isNull(e.Type()) {
		return nil, fmt.Errorf("cannot apply NOT to %s", typeName(e.Type()))
	}
	b, err := asBool("NOT", e)
	if err != nil {
		return nil, err
	}
	return &Not{e: b}, nil
}

func (x *Not) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (x *Not) String() string       { return sqlText(x) }

func (x *Not) writeSQL(b *strings.Builder) {
	b.WriteString("(NOT ")
	writeSQL(b, x.e)
	b.WriteByte(')')
}

func (x *Not) EvalRow(r exec.Row) (any, error) {
	v, err := x.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	return !v.(bool), nil
}

func (x *Not) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := x.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return x.negateArray(mem, a), nil
}

// IsNull is e IS [NOT] NULL; it is never NULL itself.
type IsNull struct {
	e      Expr
	negate bool
}

// NewIsNull is e IS NULL, or e IS NOT NULL when negate.
func NewIsNull(e Expr, negate bool) Expr { return &IsNull{e: e, negate: negate} }

func (x *IsNull) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

func (x *IsNull) String() string { return sqlText(x) }

func (x *IsNull) writeSQL(b *strings.Builder) {
	b.WriteByte('(')
	writeSQL(b, x.e)
	if x.negate {
		b.WriteString(" IS NOT NULL)")
	} else {
		b.WriteString(" IS NULL)")
	}
}

func (x *IsNull) EvalRow(r exec.Row) (any, error) {
	v, err := x.e.EvalRow(r)
	if err != nil {
		return nil, err
	}
	return (v == nil) != x.negate, nil
}

func (x *IsNull) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := x.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := a.Len()
	vbuf, out := newBits(mem, n)
	switch valid := validBits(a); {
	case a.DataType().ID() == arrow.NULL:
		if !x.negate {
			fillOnes(out, n)
		}
	case valid == nil:
		if x.negate {
			fillOnes(out, n)
		}
	case x.negate:
		copy(out, valid)
	default:
		for i := range out {
			out[i] = ^valid[i]
		}
	}
	return finish(arrow.FixedWidthTypes.Boolean, n, nil, 0, vbuf), nil
}

func fillOnes(b []byte, n int) {
	for i := range b {
		b[i] = 0xff
	}
	if r := n % 8; r != 0 && len(b) > 0 {
		b[len(b)-1] = byte(1)<<r - 1
	}
}

// Neg is unary minus; negating the smallest integer is an overflow error.
type Neg struct{ e Expr }

// NewNeg is -e for a numeric e.
func NewNeg(e Expr) (Expr, error) {
	if isInterval(e.Type()) {
		return newIntervalNeg(e)
	}
	if !isNumeric(e.Type()) {
		return nil, fmt.Errorf("cannot apply unary '-' to %s", typeName(e.Type()))
	}
	if l, ok := e.(*Literal); ok {
		v, err := negValue(l.v, l.t)
		if err != nil {
			return nil, err
		}
		return &Literal{v: v, t: l.t, text: fmt.Sprintf("-%s", l)}, nil
	}
	return &Neg{e: e}, nil
}

func (x *Neg) Type() arrow.DataType { return x.e.Type() }
func (x *Neg) String() string       { return fmt.Sprintf("(- %s)", x.e) }

func negValue(v any, t arrow.DataType) (any, error) {
	switch a := v.(type) {
	case nil:
		return nil, nil
	case int32:
		if a == math.MinInt32 {
			return nil, fmt.Errorf("INT overflow in unary '-': -(%d)", a)
		}
		return -a, nil
	case int64:
		if a == math.MinInt64 {
			return nil, fmt.Errorf("BIGINT overflow in unary '-': -(%d)", a)
		}
		return -a, nil
	case float32:
		return -a, nil
	case float64:
		return -a, nil
	case decimal128.Num:
		return a.Negate(), nil
	}
	return nil, fmt.Errorf("cannot apply unary '-' to %s", typeName(t))
}

func (x *Neg) EvalRow(r exec.Row) (any, error) {
	v, err := x.e.EvalRow(r)
	if err != nil {
		return nil, err
	}
	return negValue(v, x.e.Type())
}

func (x *Neg) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := x.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	var out arrow.Array
	ok := true
	t := x.e.Type()
	switch t.ID() {
	case arrow.INT32:
		out, ok = convert(mem, a, t, func(v int32) (int32, bool) { return -v, v != math.MinInt32 })
	case arrow.INT64:
		out, ok = convert(mem, a, t, func(v int64) (int64, bool) { return -v, v != math.MinInt64 })
	case arrow.FLOAT32:
		out, ok = convert(mem, a, t, func(v float32) (float32, bool) { return -v, true })
	case arrow.FLOAT64:
		out, ok = convert(mem, a, t, func(v float64) (float64, bool) { return -v, true })
	case arrow.DECIMAL128:
		out, ok = convert(mem, a, t, func(v decimal128.Num) (decimal128.Num, bool) { return v.Negate(), true })
	default:
		ok = false
	}
	if ok {
		return out, nil
	}
	return mapValues(mem, a, t, func(v any) (any, error) { return negValue(v, t) })
}
