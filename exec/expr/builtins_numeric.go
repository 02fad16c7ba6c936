package expr

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// More math built-ins (strict):
//
//	sqrt(x), exp(x), ln(x), log10(x)   DOUBLE; sqrt of a negative number and
//	log(x)  (base 10, as PostgreSQL    the logarithm of zero or a negative
//	        and DuckDB)                number are errors naming the value,
//	log(b, x) (base b)                 as PostgreSQL and DuckDB
//	sign(x)                            INT: -1, 0 or 1 (DuckDB gives a
//	                                   TINYINT); NaN gives 0
//	pi()                               DOUBLE
//	random()                           DOUBLE in [0, 1), a new value per row
//	                                   (never folded)
//	trunc(x[, d])                      toward zero at d fraction digits
//	                                   (default 0, d constant, may be
//	                                   negative); the type of x (DECIMAL
//	                                   keeps its precision and scale)
//	typeof(x)                          VARCHAR: the SQL type name of x, a
//	                                   constant (DuckDB)
func init() {
	num := p(kNumeric)
	unary := func(name, desc string, f func(float64) (float64, error)) {
		mustAdd(&funcDef{name: name, desc: desc, sigs: []sig{sg("DOUBLE", num)}, rule: fixed(tDouble),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				return strictCall(name, args, []arrow.DataType{tDouble}, t, func([]Expr) (rowFn, colFn) {
					return kernel1(func(x float64) (float64, bool, error) {
						r, err := f(x)
						return r, err == nil, err
					})
				})
			}})
	}
	logOf := func(name string, base func(float64) float64) func(float64) (float64, error) {
		return func(x float64) (float64, error) {
			if x <= 0 {
				return 0, fmt.Errorf("%s: cannot take the logarithm of %s", name, FormatValue(x, tDouble))
			}
			return base(x), nil
		}
	}
	unary("sqrt", "square root", func(x float64) (float64, error) {
		if x < 0 {
			return 0, fmt.Errorf("sqrt: cannot take the square root of the negative number %s", FormatValue(x, tDouble))
		}
		return math.Sqrt(x), nil
	})
	unary("exp", "e raised to x", func(x float64) (float64, error) { return math.Exp(x), nil })
	unary("ln", "natural logarithm", logOf("ln", math.Log))
	unary("log10", "base-10 logarithm", logOf("log10", math.Log10))
	mustAdd(&funcDef{name: "log", desc: "base-10 logarithm of x, or log(b, x) in base b",
		sigs: []sig{sg("DOUBLE", num), sg("DOUBLE", num, num)}, rule: fixed(tDouble),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			if len(args) == 1 {
				f := logOf(name, math.Log10)
				return strictCall(name, args, []arrow.DataType{tDouble}, t, func([]Expr) (rowFn, colFn) {
					return kernel1(func(x float64) (float64, bool, error) {
						r, err := f(x)
						return r, err == nil, err
					})
				})
			}
			return strictCall(name, args, []arrow.DataType{tDouble, tDouble}, t, func([]Expr) (rowFn, colFn) {
				return kernel2(func(b, x float64) (float64, bool, error) {
					if b <= 0 || x <= 0 || b == 1 {
						return 0, false, fmt.Errorf("%s: cannot take the logarithm of %s in base %s", name, FormatValue(x, tDouble), FormatValue(b, tDouble))
					}
					return math.Log(x) / math.Log(b), true, nil
				})
			})
		}})
	mustAdd(&funcDef{name: "sign", desc: "-1, 0 or 1 by the sign of x", sigs: []sig{sg("INT", num)}, rule: fixed(tInt32),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			x := args[0]
			switch x.Type().ID() {
			case arrow.INT32, arrow.INT64:
				return strictCall(name, args, []arrow.DataType{tInt64}, t, func([]Expr) (rowFn, colFn) {
					return kernel1(func(v int64) (int32, bool, error) { return int32(cmp.Compare(v, 0)), true, nil })
				})
			case arrow.DECIMAL128:
				row, col := kernel1(func(v decimal128.Num) (int32, bool, error) { return int32(v.Sign()), true, nil })
				return newCall(name, args, t, row, col)
			}
			return strictCall(name, args, []arrow.DataType{tDouble}, t, func([]Expr) (rowFn, colFn) {
				return kernel1(func(v float64) (int32, bool, error) {
					switch {
					case v > 0:
						return 1, true, nil
					case v < 0:
						return -1, true, nil
					}
					return 0, true, nil
				})
			})
		}})
	mustAdd(&funcDef{name: "pi", desc: "the constant pi", sigs: []sig{{ret: "DOUBLE"}}, rule: fixed(tDouble),
		build: func(name string, _ []Expr, t arrow.DataType) (Expr, error) {
			return &Literal{v: math.Pi, t: t, text: "pi()"}, nil
		}})
	mustAdd(&funcDef{name: "random", desc: "a random DOUBLE in [0, 1), new for every row", sigs: []sig{{ret: "DOUBLE"}}, rule: fixed(tDouble),
		build: func(string, []Expr, arrow.DataType) (Expr, error) { return randomExpr{}, nil }})
	mustAdd(&funcDef{name: "trunc", desc: "x truncated toward zero at d fraction digits (default 0)",
		sigs: []sig{sgOpt("T", 1, num, p(kInt))}, optRule: truncNumType, build: buildTrunc})
	mustAdd(&funcDef{name: "typeof", desc: "the SQL type name of the argument", sigs: []sig{sg("VARCHAR", p(kAny))}, rule: fixed(tString),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return &Literal{v: typeName(args[0].Type()), t: t, text: name + "(" + args[0].String() + ")"}, nil
		}})
}

// randomExpr is random(): not a constant, so never folded.
type randomExpr struct{}

func (randomExpr) Type() arrow.DataType          { return tDouble }
func (randomExpr) String() string                { return "random()" }
func (randomExpr) EvalRow(exec.Row) (any, error) { return rand.Float64(), nil }
func (randomExpr) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	buf, out := newValues[float64](mem, n)
	for i := range out {
		out[i] = rand.Float64()
	}
	return finish(tDouble, n, nil, 0, buf), nil
}

func truncNumType(ts []arrow.DataType, consts []any) (arrow.DataType, error) {
	if _, err := roundDigits(len(ts), consts); err != nil {
		return nil, err
	}
	if isNull(ts[0]) {
		return nil, fmt.Errorf("the type of NULL is unknown: CAST it")
	}
	return ts[0], nil
}

func buildTrunc(name string, args []Expr, t arrow.DataType) (Expr, error) {
	var consts []any
	if len(args) > 1 {
		consts = []any{nil, args[1].(*Literal).v}
	}
	d, _ := roundDigits(len(args), consts)
	x := args[0]
	text := name + "(" + joinExprs(args) + ")"
	var row rowFn
	var col colFn
	switch x.Type().ID() {
	case arrow.INT32:
		row, col = kernel1(func(v int32) (int32, bool, error) { return int32(truncInt(int64(v), d)), true, nil })
	case arrow.INT64:
		row, col = kernel1(func(v int64) (int64, bool, error) { return truncInt(v, d), true, nil })
	case arrow.FLOAT32:
		row, col = kernel1(func(v float32) (float32, bool, error) { return float32(truncFloat(float64(v), d)), true, nil })
	case arrow.FLOAT64:
		row, col = kernel1(func(v float64) (float64, bool, error) { return truncFloat(v, d), true, nil })
	case arrow.DECIMAL128:
		s := x.Type().(*arrow.Decimal128Type).Scale
		row, col = kernel1(func(v decimal128.Num) (decimal128.Num, bool, error) { return truncDec(v, s, int32(d)), true, nil })
	default:
		return nil, fmt.Errorf("%s: cannot apply to %s", name, typeName(x.Type()))
	}
	e, err := newCall(name, []Expr{x}, t, row, col)
	return setText(e, text), err
}

// truncInt zeroes the digits below 10^-d (d < 0).
func truncInt(v int64, d int) int64 {
	if d >= 0 {
		return v
	}
	if -d > 18 {
		return 0
	}
	m := pow10Int[-d]
	return v / m * m
}

// truncFloat truncates toward zero at d digits of the shortest decimal
// form (as round does), so trunc(2.675, 2) is 2.67 and trunc(0.3, 1) 0.3.
func truncFloat(v float64, d int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	if d == 0 {
		return math.Trunc(v)
	}
	r := roundFloat(v, d, 64)
	if math.Abs(r) > math.Abs(v) { // rounded away from zero: step back one unit
		step := math.Pow(10, float64(-d))
		if v < 0 {
			r += step
		} else {
			r -= step
		}
		r = roundFloat(r, d, 64)
	}
	return r
}

// truncDec zeroes the digits of v (at scale s) below 10^-d, keeping s.
func truncDec(v num, s, d int32) num {
	if d >= s {
		return v
	}
	drop := s - d
	if drop > maxPrecision {
		return num{}
	}
	p := bigPow10(drop)
	q := new(big.Int).Quo(v.BigInt(), p)
	r, _ := bigToNum(q.Mul(q, p))
	return r
}

// TryCast is TRY_CAST(e AS to): CAST, but NULL where CAST fails on a
// value. A type pair CAST cannot convert at all is still refused when the
// query is planned.
type TryCast struct {
	e  Expr
	to arrow.DataType
}

// NewTryCast is TRY_CAST(e AS to).
func NewTryCast(e Expr, to arrow.DataType) (Expr, error) {
	if !canCast(e.Type(), to) {
		return nil, fmt.Errorf("cannot cast %s to %s", typeName(e.Type()), typeName(to))
	}
	return fold(&TryCast{e: e, to: to}, e)
}

func (c *TryCast) Type() arrow.DataType { return c.to }
func (c *TryCast) String() string {
	return fmt.Sprintf("TRY_CAST(%s AS %s)", c.e, typeName(c.to))
}

func (c *TryCast) EvalRow(r exec.Row) (any, error) {
	v, err := c.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	out, err := castValue(v, c.e.Type(), c.to)
	if err != nil {
		return nil, nil
	}
	return out, nil
}

func (c *TryCast) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	in, err := c.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	if out, err := castArray(mem, in, c.e.Type(), c.to); err == nil {
		return out, nil
	}
	// Some value failed: convert one at a time, NULL where CAST would fail.
	from := c.e.Type()
	b := array.NewBuilder(mem, c.to)
	defer b.Release()
	b.Reserve(in.Len())
	for i := 0; i < in.Len(); i++ {
		v := valueAt(in, i)
		if v != nil {
			if v, err = castValue(v, from, c.to); err != nil {
				v = nil
			}
		}
		if err := appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}
