package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// When is one WHEN cond THEN value arm of a CASE.
type When struct{ Cond, Then Expr }

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END. The simple form
// compares the operand with each WHEN value by =. The result type is the
// common type of the THEN and ELSE values; no ELSE means NULL.
//
// Columnar: every condition and every branch is evaluated over the whole
// batch and each row takes the first arm whose condition is TRUE. If a
// branch fails (1/x in an arm for x <> 0), the batch is replayed row at a
// time, where only the chosen arm runs, so both paths raise the same
// errors.
type Case struct {
	operand Expr
	whens   []When // conditions as written (for String)
	conds   []Expr // searched-form conditions
	thens   []Expr
	els     Expr // nil: NULL
	t       arrow.DataType
}

// NewCase builds a CASE; operand nil is the searched form, els nil means
// ELSE NULL.
func NewCase(operand Expr, whens []When, els Expr) (Expr, error) {
	if len(whens) == 0 {
		return nil, fmt.Errorf("CASE needs at least one WHEN")
	}
	c := &Case{operand: operand, whens: whens}
	var t arrow.DataType = arrow.Null
	for _, w := range whens {
		var err error
		if t, err = CommonType(t, w.Then.Type()); err != nil {
			return nil, fmt.Errorf("CASE: THEN %s: %w", w.Then, err)
		}
	}
	if els != nil {
		var err error
		if t, err = CommonType(t, els.Type()); err != nil {
			return nil, fmt.Errorf("CASE: ELSE %s: %w", els, err)
		}
	}
	c.t = t
	for _, w := range whens {
		cond := w.Cond
		if operand != nil {
			eq, err := newCompare("=", operand, w.Cond)
			if err != nil {
				return nil, fmt.Errorf("CASE %s WHEN %s: %w", operand, w.Cond, err)
			}
			cond = eq
		} else if !isBool(cond.Type()) && !isNull(cond.Type()) {
			return nil, fmt.Errorf("CASE WHEN %s: condition is %s, not BOOLEAN", cond, typeName(cond.Type()))
		}
		cond, _ = asBool("CASE WHEN", cond)
		then, err := Coerce(w.Then, t)
		if err != nil {
			return nil, fmt.Errorf("CASE: %w", err)
		}
		c.conds = append(c.conds, cond)
		c.thens = append(c.thens, then)
	}
	if els != nil {
		var err error
		if c.els, err = Coerce(els, t); err != nil {
			return nil, fmt.Errorf("CASE: %w", err)
		}
	}
	return c, nil
}

func (c *Case) Type() arrow.DataType { return c.t }

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if c.operand != nil {
		fmt.Fprintf(&b, " %s", c.operand)
	}
	for _, w := range c.whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Then)
	}
	if c.els != nil {
		fmt.Fprintf(&b, " ELSE %s", c.els)
	}
	b.WriteString(" END")
	return b.String()
}

func (c *Case) EvalRow(r exec.Row) (any, error) {
	for i, cond := range c.conds {
		v, err := cond.EvalRow(r)
		if err != nil {
			return nil, err
		}
		if v == true {
			return c.thens[i].EvalRow(r)
		}
	}
	if c.els == nil {
		return nil, nil
	}
	return c.els.EvalRow(r)
}

func (c *Case) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	// choice[i] is the arm row i takes; len(thens) is ELSE.
	choice := make([]int32, n)
	undecided := make([]byte, (n+7)/8)
	fillOnes(undecided, n)
	for k, cond := range c.conds {
		a, err := cond.EvalColumnar(mem, rec)
		if err != nil {
			return rowFallback(mem, c, rec)
		}
		vals, valid := boolAndValid(a)
		for j := range undecided {
			hit := undecided[j] & vals[j] & valid[j]
			undecided[j] &^= hit
			for hit != 0 {
				i := j*8 + bitsTrailingZeros8(hit)
				choice[i] = int32(k)
				hit &= hit - 1
			}
		}
		a.Release()
	}
	for j, by := range undecided {
		for by != 0 {
			choice[j*8+bitsTrailingZeros8(by)] = int32(len(c.thens))
			by &= by - 1
		}
	}
	srcs := make([]arrow.Array, len(c.thens)+1)
	defer func() {
		for _, s := range srcs {
			if s != nil {
				s.Release()
			}
		}
	}()
	arms := append(append([]Expr(nil), c.thens...), c.els)
	for k, e := range arms {
		if e == nil || !chosen(choice, int32(k)) {
			continue
		}
		a, err := e.EvalColumnar(mem, rec)
		if err != nil {
			return rowFallback(mem, c, rec)
		}
		srcs[k] = a
	}
	return gather(mem, c.t, choice, srcs)
}

func chosen(choice []int32, k int32) bool {
	for _, c := range choice {
		if c == k {
			return true
		}
	}
	return false
}

// gather builds out[i] = srcs[choice[i]][i] (NULL where that source is nil,
// NULL-typed or NULL at i): the merge step of CASE and COALESCE. Fixed-width
// types copy values with typed loops; other types go value by value.
func gather(mem memory.Allocator, t arrow.DataType, choice []int32, srcs []arrow.Array) (arrow.Array, error) {
	n := len(choice)
	for k, s := range srcs {
		if s != nil && s.DataType().ID() == arrow.NULL {
			srcs[k].Release()
			srcs[k] = nil
		}
	}
	vbuf, valid := newBits(mem, n)
	srcValid := make([][]byte, len(srcs))
	for k, s := range srcs {
		if s != nil {
			srcValid[k] = validBits(s)
		}
	}
	for i, k := range choice {
		s := srcs[k]
		if s != nil && (srcValid[k] == nil || bitutil.BitIsSet(srcValid[k], i)) {
			valid[i>>3] |= 1 << (i & 7)
		}
	}
	nulls := n - countBits(valid, n)
	switch t.ID() {
	case arrow.INT32:
		return gatherFixed[int32](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.INT64:
		return gatherFixed[int64](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.FLOAT32:
		return gatherFixed[float32](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.FLOAT64:
		return gatherFixed[float64](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.DECIMAL128:
		return gatherFixed[decimal128.Num](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.TIMESTAMP:
		return gatherFixed[arrow.Timestamp](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.DATE32:
		return gatherFixed[arrow.Date32](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.TIME32:
		return gatherFixed[arrow.Time32](mem, t, choice, srcs, vbuf, nulls), nil
	case arrow.TIME64:
		return gatherFixed[arrow.Time64](mem, t, choice, srcs, vbuf, nulls), nil
	}
	vb := vbuf.Bytes()
	defer vbuf.Release()
	b := array.NewBuilder(mem, t)
	defer b.Release()
	b.Reserve(n)
	if sb, ok := b.(*array.StringBuilder); ok {
		for i, k := range choice {
			if !bitutil.BitIsSet(vb, i) {
				sb.AppendNull()
				continue
			}
			sb.Append(srcs[k].(*array.String).Value(i))
		}
		return sb.NewArray(), nil
	}
	for i, k := range choice {
		var v any
		if bitutil.BitIsSet(vb, i) {
			v = valueAt(srcs[k], i)
		}
		if err := appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

func gatherFixed[T arrow.FixedWidthType](mem memory.Allocator, t arrow.DataType, choice []int32, srcs []arrow.Array, valid *memory.Buffer, nulls int) arrow.Array {
	vals := make([][]T, len(srcs))
	for k, s := range srcs {
		if s != nil {
			vals[k] = values[T](s)
		}
	}
	buf, out := newValues[T](mem, len(choice))
	for i, k := range choice {
		if v := vals[k]; v != nil {
			out[i] = v[i]
		}
	}
	return finish(t, len(choice), valid, nulls, buf)
}

// Coalesce is COALESCE(a, b, ...): the first non-NULL argument. Later
// arguments are evaluated only where needed on the row path; the columnar
// path evaluates all of them and replays row at a time if one fails.
type Coalesce struct {
	args []Expr
	t    arrow.DataType
}

func newCoalesce(args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("coalesce needs at least one argument")
	}
	var t arrow.DataType = arrow.Null
	for _, a := range args {
		var err error
		if t, err = CommonType(t, a.Type()); err != nil {
			return nil, fmt.Errorf("coalesce: %w", err)
		}
	}
	c := &Coalesce{t: t}
	for _, a := range args {
		x, err := Coerce(a, t)
		if err != nil {
			return nil, fmt.Errorf("coalesce: %w", err)
		}
		c.args = append(c.args, x)
	}
	return c, nil
}

func (c *Coalesce) Type() arrow.DataType { return c.t }
func (c *Coalesce) String() string       { return "coalesce(" + joinExprs(c.args) + ")" }

func (c *Coalesce) EvalRow(r exec.Row) (any, error) {
	for _, a := range c.args {
		v, err := a.EvalRow(r)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

func (c *Coalesce) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	choice := make([]int32, n)
	undecided := make([]byte, (n+7)/8)
	fillOnes(undecided, n)
	srcs := make([]arrow.Array, len(c.args))
	defer func() {
		for _, s := range srcs {
			if s != nil {
				s.Release()
			}
		}
	}()
	for k, e := range c.args {
		a, err := e.EvalColumnar(mem, rec)
		if err != nil {
			return rowFallback(mem, c, rec)
		}
		srcs[k] = a
		var valid []byte
		if a.DataType().ID() == arrow.NULL {
			continue
		}
		if valid = validBits(a); valid == nil {
			valid = make([]byte, len(undecided))
			fillOnes(valid, n)
		}
		for j := range undecided {
			hit := undecided[j] & valid[j]
			undecided[j] &^= hit
			for hit != 0 {
				choice[j*8+bitsTrailingZeros8(hit)] = int32(k)
				hit &= hit - 1
			}
		}
	}
	// Rows no argument decided keep choice 0, which is NULL there.
	return gather(mem, c.t, choice, srcs)
}

func joinExprs(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}
