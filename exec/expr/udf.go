package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The UDF API: how an embedder adds a scalar function. Two kinds:
//
//   - row-at-a-time: a typed Go function (RowFunc1, RowFunc2, RowFunc3).
//     The framework builds the output column inside the columnar pipeline:
//     EvalColumnar reads the argument columns with typed accessors, calls
//     the function once per row with typed values and appends the result
//     to a typed builder, so the stage's batch is never materialised into
//     rows. EXPLAIN marks such calls "[row-at-a-time UDF]" (RowAtATime).
//   - vectorised: a Go function over whole Arrow arrays (VectorFunc).
//
// Both are strict (a NULL argument gives NULL without calling the
// function) and both carry a type rule: by default the result type of the
// Go type (string -> VARCHAR, int64 -> BIGINT, ...); Returns sets a fixed
// logical type (for instance JSONType, an extension over the Go type's
// storage) and Rule a result type computed from the argument types. The
// argument types default to the Go types' SQL types; Args overrides them
// (needed for DECIMAL and TIMESTAMP, whose SQL types have parameters).
// Arguments are widened implicitly (an INT passes for BIGINT).
//
// A []byte argument aliases Arrow memory: copy it to keep it.
//
//	expr.Register(expr.RowFunc2("count_char", countChar).Describe("..."))

// UDF is a user-defined function ready to Register.
type UDF struct {
	name     string
	desc     string
	args     []arrow.DataType // nil entry: the Go type has no default SQL type
	goRet    arrow.DataType   // storage the Go function produces (nil: from the rule)
	ret      arrow.DataType   // fixed logical result type
	rule     TypeRule
	rowAt    bool
	kern     func() (rowFn, colFn)
	vec      VectorKernel
	argNames []string // Go type names, for errors
}

// VectorKernel computes a vectorised UDF over whole columns: args are the
// argument columns (constants broadcast), each of n values and of the
// declared argument types; out is the result type the rule chose. It
// returns a new column of n values of out's storage type (the framework
// labels it) that the caller releases. NULL arguments are the kernel's to
// handle: a vectorised UDF sees every row.
type VectorKernel func(mem memory.Allocator, args []arrow.Array, n int, out arrow.DataType) (arrow.Array, error)

// RowFunc1 is a row-at-a-time UDF of one argument.
func RowFunc1[A, R Scalar](name string, fn func(A) (R, error)) *UDF {
	return &UDF{name: name, args: []arrow.DataType{goType[A]()}, goRet: goType[R](), rowAt: true,
		kern: func() (rowFn, colFn) {
			return kernel1(func(a A) (R, bool, error) { r, err := fn(a); return r, err == nil, err })
		}}
}

// RowFunc2 is a row-at-a-time UDF of two arguments.
func RowFunc2[A, B, R Scalar](name string, fn func(A, B) (R, error)) *UDF {
	return &UDF{name: name, args: []arrow.DataType{goType[A](), goType[B]()}, goRet: goType[R](), rowAt: true,
		kern: func() (rowFn, colFn) {
			return kernel2(func(a A, b B) (R, bool, error) { r, err := fn(a, b); return r, err == nil, err })
		}}
}

// RowFunc3 is a row-at-a-time UDF of three arguments.
func RowFunc3[A, B, C, R Scalar](name string, fn func(A, B, C) (R, error)) *UDF {
	return &UDF{name: name, args: []arrow.DataType{goType[A](), goType[B](), goType[C]()}, goRet: goType[R](), rowAt: true,
		kern: func() (rowFn, colFn) {
			return kernel3(func(a A, b B, c C) (R, bool, error) { r, err := fn(a, b, c); return r, err == nil, err })
		}}
}

// VectorFunc is a vectorised UDF over arguments of the given types; rule
// gives its result type (Returns can fix it instead).
func VectorFunc(name string, args []arrow.DataType, rule TypeRule, fn VectorKernel) *UDF {
	return &UDF{name: name, args: args, rule: rule, vec: fn}
}

// Describe sets the one-line description \df shows.
func (u *UDF) Describe(desc string) *UDF { u.desc = desc; return u }

// Args sets the SQL argument types.
func (u *UDF) Args(types ...arrow.DataType) *UDF { u.args = types; return u }

// Returns fixes the logical result type. For a row-at-a-time UDF it must
// be the Go result type's SQL type or an extension type over it.
func (u *UDF) Returns(t arrow.DataType) *UDF { u.ret = t; return u }

// Rule sets a type rule: the result type from the argument types.
func (u *UDF) Rule(r TypeRule) *UDF { u.rule = r; return u }

// Register adds u to the function registry, next to the built-ins. A name
// already taken (by a built-in or another UDF) is an error.
func Register(u *UDF) error {
	if u.name == "" || strings.ContainsAny(u.name, " ()") {
		return fmt.Errorf("UDF name %q is not a valid function name", u.name)
	}
	if len(u.args) != 0 && u.vec == nil && u.kern == nil {
		return fmt.Errorf("UDF %s has no function", u.name)
	}
	params := make([]param, len(u.args))
	for i, t := range u.args {
		if t == nil {
			return fmt.Errorf("UDF %s: argument %d needs its SQL type (Args): DECIMAL and TIMESTAMP have parameters", u.name, i+1)
		}
		params[i] = pt(t)
	}
	rule := u.rule
	switch {
	case u.ret != nil:
		rule = fixed(u.ret)
	case rule == nil && u.goRet != nil:
		rule = fixed(u.goRet)
	case rule == nil:
		return fmt.Errorf("UDF %s: its result type needs Returns or Rule", u.name)
	}
	if u.ret != nil && u.goRet != nil && !arrow.TypeEqual(StorageType(u.ret), u.goRet) {
		return fmt.Errorf("UDF %s: result type %s is not stored as the Go function's %s", u.name, typeName(u.ret), typeName(u.goRet))
	}
	ret := "?"
	if u.ret != nil {
		ret = typeName(u.ret)
	} else if u.goRet != nil && u.rule == nil {
		ret = typeName(u.goRet)
	}
	desc := u.desc
	if desc == "" {
		desc = "user-defined function"
	}
	d := &funcDef{name: u.name, desc: desc, sigs: []sig{sg(ret, params...)}, rule: rule, udf: true, rowAtATime: u.rowAt}
	d.build = func(name string, args []Expr, out arrow.DataType) (Expr, error) {
		if u.goRet != nil && !arrow.TypeEqual(StorageType(out), u.goRet) {
			return nil, fmt.Errorf("type rule gave %s, but the Go function returns %s", typeName(out), typeName(u.goRet))
		}
		cargs := make([]Expr, len(args))
		for i, a := range args {
			c, err := Coerce(a, u.args[i])
			if err != nil {
				return nil, fmt.Errorf("%s: argument %d: %w", name, i+1, err)
			}
			cargs[i] = c
		}
		if u.vec != nil {
			return &vectorCall{name: name, args: cargs, t: out, fn: u.vec}, nil
		}
		row, col := u.kern()
		// Not folded over constant arguments: a UDF may be impure, and
		// the call stays visible in EXPLAIN.
		return &call{name: name, args: cargs, t: out, rowAtATime: true, row: row, col: col}, nil
	}
	return funcs.add(d)
}

// MustRegister is Register for built-ins and program start-up: it panics
// on error.
func MustRegister(u *UDF) {
	if err := Register(u); err != nil {
		panic(err)
	}
}

// vectorCall is a call of a vectorised UDF. The columnar path hands the
// kernel whole columns; the row path runs the same kernel over one-row
// columns, so both paths run the embedder's one definition.
type vectorCall struct {
	name string
	args []Expr
	t    arrow.DataType
	fn   VectorKernel
}

func (v *vectorCall) Type() arrow.DataType { return v.t }
func (v *vectorCall) String() string       { return v.name + "(" + joinExprs(v.args) + ")" }

func (v *vectorCall) EvalRow(r exec.Row) (any, error) {
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, len(v.args))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, a := range v.args {
		x, err := a.EvalRow(r)
		if err != nil {
			return nil, err
		}
		b := array.NewBuilder(mem, a.Type())
		err = appendValue(b, x)
		cols[i] = b.NewArray()
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	out, err := v.run(mem, cols, 1)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return valueAt(out, 0), nil
}

func (v *vectorCall) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(v.args))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, a := range v.args {
		c, err := a.EvalColumnar(mem, rec)
		if err != nil {
			return nil, err
		}
		if c.DataType().ID() == arrow.NULL && a.Type().ID() != arrow.NULL {
			// A kernel sees its declared types, NULLs included.
			nc := nullArray(mem, a.Type(), n)
			c.Release()
			c = nc
		}
		cols[i] = c
	}
	return v.run(mem, cols, n)
}

func (v *vectorCall) run(mem memory.Allocator, cols []arrow.Array, n int) (arrow.Array, error) {
	out, err := v.fn(mem, cols, n, v.t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.name, err)
	}
	if out.Len() != n {
		out.Release()
		return nil, fmt.Errorf("%s: returned %d values for %d rows", v.name, out.Len(), n)
	}
	if !arrow.TypeEqual(out.DataType(), v.t) && !arrow.TypeEqual(out.DataType(), StorageType(v.t)) {
		got := out.DataType()
		out.Release()
		return nil, fmt.Errorf("%s: returned a %s column, its type rule says %s", v.name, typeName(got), typeName(v.t))
	}
	return label(mem, v.t, out)
}

// RowAtATime lists the row-at-a-time UDF calls in an expression tree, for
// EXPLAIN: each entry is the call as String renders it.
func RowAtATime(e Expr) []string {
	var out []string
	walk(e, func(x Expr) {
		if c, ok := x.(*call); ok && c.rowAtATime {
			out = append(out, c.String())
		}
	})
	return out
}

// walk visits e and the expressions under it, for the node types that
// hold function calls.
func walk(e Expr, f func(Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch x := e.(type) {
	case *call:
		for _, a := range x.args {
			walk(a, f)
		}
	case *vectorCall:
		for _, a := range x.args {
			walk(a, f)
		}
	case *renamed:
		walk(x.Expr, f)
	case *Cast:
		walk(x.e, f)
	case *Arith:
		walk(x.l, f)
		walk(x.r, f)
	case *Compare:
		walk(x.l, f)
		walk(x.r, f)
	case *Logic:
		walk(x.l, f)
		walk(x.r, f)
	case *Not:
		walk(x.e, f)
	case *IsNull:
		walk(x.e, f)
	case *Neg:
		walk(x.e, f)
	case *Case:
		walk(x.operand, f)
		for i := range x.conds {
			walk(x.conds[i], f)
			walk(x.thens[i], f)
		}
		walk(x.els, f)
	case *Coalesce:
		for _, a := range x.args {
			walk(a, f)
		}
	case *caseFunc:
		walk(x.e, f)
	case *lengthFunc:
		walk(x.e, f)
	case *substrFunc:
		walk(x.s, f)
		for _, a := range x.args {
			walk(a, f)
		}
	case *concatFunc:
		for _, a := range x.args {
			walk(a, f)
		}
	case *absFunc:
		walk(x.e, f)
	case *Like:
		walk(x.e, f)
	case *In:
		walk(x.e, f)
	case *FieldRef:
		walk(x.In, f)
	}
}

// countChar is Nexmark's count_char UDF: how many times the character c
// occurs in s (c must be one character).
func countChar(s, c string) (int64, error) {
	if len([]rune(c)) != 1 {
		return 0, fmt.Errorf("count_char: the second argument must be one character, got %s", sqlLiteral(c, tString))
	}
	return int64(strings.Count(s, c)), nil
}

// count_char is registered through the public UDF API, as an embedder
// would: it is the proof that the API carries a real function end to end.
func init() {
	MustRegister(RowFunc2("count_char", countChar).Describe("occurrences of the character c in s (Nexmark)"))
}
