package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// In is e [NOT] IN (list) with SQL semantics: TRUE on a match, else NULL
// if e or any list item is NULL, else FALSE (NOT IN negates, NULL stays
// NULL). A list of constants becomes a hash set probed by a typed loop;
// any other list is evaluated as the equivalent OR of equalities, which
// has exactly these semantics under three-valued logic.
type In struct {
	e      Expr
	list   []Expr
	negate bool
	t      arrow.DataType // the common type e and the items are widened to

	set     map[any]struct{} // constant list: the non-NULL items
	hasNull bool             // constant list contains NULL
	// The constant list's items typed, for the columnar probes of the
	// common types (a probe of set boxes every value and hashes its type).
	strs memberSet[string]
	i64s memberSet[int64]
	i32s memberSet[int32]
	ors  Expr // non-constant list: e = i1 OR e = i2 ...
}

// NewIn is e IN (list), or e NOT IN (list) when negate.
func NewIn(e Expr, list []Expr, negate bool) (Expr, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("IN needs at least one value")
	}
	t := e.Type()
	for _, it := range list {
		ct, ok := compareType(t, it.Type())
		if !ok {
			return nil, fmt.Errorf("IN: cannot compare %s with %s (%s)", typeName(e.Type()), typeName(it.Type()), it)
		}
		t = ct
	}
	if isNull(t) {
		t = arrow.FixedWidthTypes.Boolean
	}
	x := &In{negate: negate, t: t}
	var err error
	if x.e, err = Coerce(e, t); err != nil {
		return nil, fmt.Errorf("IN: %w", err)
	}
	constant := true
	for _, it := range list {
		c, err := Coerce(it, t)
		if err != nil {
			return nil, fmt.Errorf("IN: %w", err)
		}
		x.list = append(x.list, c)
		if _, ok := c.(*Literal); !ok {
			constant = false
		}
	}
	// Floats stay on the comparison path: a set would treat NaN unlike =;
	// so do intervals, whose = normalises ('1 month' = '30 days').
	if constant && !isFloat(t) && !isInterval(t) && t.ID() != arrow.BINARY {
		x.set = make(map[any]struct{}, len(list))
		for _, c := range x.list {
			if v := c.(*Literal).v; v == nil {
				x.hasNull = true
			} else {
				x.set[v] = struct{}{}
			}
		}
		x.strs, x.i64s, x.i32s = membersOf[string](x.set), membersOf[int64](x.set), membersOf[int32](x.set)
		return x, nil
	}
	var ors Expr
	for _, c := range x.list {
		eq, err := newCompare("=", x.e, c)
		if err != nil {
			return nil, err
		}
		if ors == nil {
			ors = eq
		} else if ors, err = newLogic("OR", ors, eq); err != nil {
			return nil, err
		}
	}
	x.ors = ors
	return x, nil
}

func (x *In) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

func (x *In) String() string {
	items := make([]string, len(x.list))
	for i, it := range x.list {
		items[i] = it.String()
	}
	not := ""
	if x.negate {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sIN (%s))", x.e, not, strings.Join(items, ", "))
}

func (x *In) EvalRow(r exec.Row) (any, error) {
	v, err := x.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	var res any = false
	if x.set != nil {
		if _, ok := x.set[v]; ok {
			res = true
		} else if x.hasNull {
			res = nil
		}
	} else {
		for _, it := range x.list {
			w, err := it.EvalRow(r)
			if err != nil {
				return nil, err
			}
			if w == nil {
				res = nil
			} else if compareValues(opEq, v, w) {
				res = true
				break
			}
		}
	}
	if b, ok := res.(bool); ok && x.negate {
		return !b, nil
	}
	return res, nil
}

func (x *In) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	if x.set == nil {
		a, err := x.ors.EvalColumnar(mem, rec)
		if err != nil || !x.negate {
			return a, err
		}
		defer a.Release()
		return (&Not{e: x.ors}).negateArray(mem, a), nil
	}
	if out, handled, err := x.inDict(mem, rec); handled {
		return out, err
	}
	a, err := x.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := a.Len()
	if a.DataType().ID() == arrow.NULL {
		return nullArray(mem, arrow.FixedWidthTypes.Boolean, n), nil
	}
	hit := func(i int) bool { _, ok := x.set[valueAt(a, i)]; return ok }
	// Typed probes for the common key types; the map's keys are the same
	// row-form values, so a probe with a typed key finds the same entries.
	switch arr := a.(type) {
	case *array.Int32:
		vals := arr.Int32Values()
		hit = func(i int) bool { return x.i32s.has(vals[i]) }
	case *array.Int64:
		vals := arr.Int64Values()
		hit = func(i int) bool { return x.i64s.has(vals[i]) }
	case *array.String:
		hit = func(i int) bool { return x.strs.has(arr.Value(i)) }
	case *array.Date32:
		vals := arr.Date32Values()
		hit = func(i int) bool { _, ok := x.set[vals[i]]; return ok }
	case *array.Timestamp:
		vals := arr.TimestampValues()
		hit = func(i int) bool { _, ok := x.set[vals[i]]; return ok }
	case *array.Decimal128:
		vals := arr.Values()
		hit = func(i int) bool { _, ok := x.set[vals[i]]; return ok }
	}
	inValid := validBits(a)
	vbuf, val := newBits(mem, n)
	mbuf, ok := newBits(mem, n)
	for i := 0; i < n; i++ {
		if inValid != nil && inValid[i>>3]&(1<<(i&7)) == 0 {
			continue
		}
		switch {
		case hit(i):
			val[i>>3] |= b2u(!x.negate) << (i & 7)
			ok[i>>3] |= 1 << (i & 7)
		case !x.hasNull:
			val[i>>3] |= b2u(x.negate) << (i & 7)
			ok[i>>3] |= 1 << (i & 7)
		}
	}
	return finishBool(mem, n, vbuf, mbuf), nil
}

// negateArray is NOT over an evaluated BOOLEAN array.
func (x *Not) negateArray(mem memory.Allocator, a arrow.Array) arrow.Array {
	n := a.Len()
	vals, valid := boolAndValid(a)
	vbuf, out := newBits(mem, n)
	mbuf, ok := newBits(mem, n)
	for i := range out {
		out[i] = ^vals[i] & valid[i]
		ok[i] = valid[i]
	}
	return finishBool(mem, n, vbuf, mbuf)
}

// Between is e [NOT] BETWEEN lo AND hi, evaluated as e >= lo AND e <= hi
// (so its NULL semantics are those of AND).
type Between struct {
	e, lo, hi Expr
	negate    bool
	expr      Expr
}

// NewBetween is e BETWEEN lo AND hi, or NOT BETWEEN when negate.
func NewBetween(e, lo, hi Expr, negate bool) (Expr, error) {
	ge, err := newCompare(">=", e, lo)
	if err != nil {
		return nil, fmt.Errorf("BETWEEN: %w", err)
	}
	le, err := newCompare("<=", e, hi)
	if err != nil {
		return nil, fmt.Errorf("BETWEEN: %w", err)
	}
	and, err := newLogic("AND", ge, le)
	if err != nil {
		return nil, err
	}
	b := &Between{e: e, lo: lo, hi: hi, negate: negate, expr: and}
	if negate {
		b.expr = &Not{e: and}
	}
	return b, nil
}

func (b *Between) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

func (b *Between) String() string {
	not := ""
	if b.negate {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sBETWEEN %s AND %s)", b.e, not, b.lo, b.hi)
}

func (b *Between) EvalRow(r exec.Row) (any, error) { return b.expr.EvalRow(r) }

func (b *Between) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	return b.expr.EvalColumnar(mem, rec)
}

// memberSet is a constant IN list's items of one Go type: a short list is
// searched in order (a few compares beat hashing), a long one hashed.
type memberSet[T comparable] struct {
	small []T
	m     map[T]struct{}
}

// membersOf is the items of set that are Ts.
func membersOf[T comparable](set map[any]struct{}) memberSet[T] {
	var s memberSet[T]
	for v := range set {
		if t, ok := v.(T); ok {
			s.small = append(s.small, t)
		}
	}
	if len(s.small) > 8 {
		s.m = make(map[T]struct{}, len(s.small))
		for _, v := range s.small {
			s.m[v] = struct{}{}
		}
		s.small = nil
	}
	return s
}

func (s *memberSet[T]) has(v T) bool {
	if s.m != nil {
		_, ok := s.m[v]
		return ok
	}
	for _, w := range s.small {
		if w == v {
			return true
		}
	}
	return false
}
