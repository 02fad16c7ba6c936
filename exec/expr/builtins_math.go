package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Math built-ins (strict: NULL in, NULL out):
//
//	abs(x)            T -> T over the numeric types; abs of the smallest
//	                  integer is an overflow error
//	mod(a, b)         a % b with the arithmetic type rule (DECIMAL precision
//	                  and scale as for %); mod by zero is NULL (as x % 0)
//	round(x[, d])     HALF_UP (ties away from zero) at d fraction digits
//	                  (default 0; d < 0 rounds to tens, hundreds...). d must
//	                  be a constant: it decides the type. INT/BIGINT/FLOAT/
//	                  DOUBLE keep their type; DECIMAL(p, s) gives
//	                  DECIMAL(p, s) when d >= s, DECIMAL(1+p-s+d, d) when
//	                  0 <= d < s and DECIMAL(1+p-s, 0) when d < 0 (Flink's
//	                  LogicalTypeMerging.findRoundDecimalType). DOUBLE rounds
//	                  its shortest decimal form (as Java's BigDecimal.valueOf),
//	                  so round(2.675, 2) is 2.68
//	floor(x), ceil(x) integers unchanged; DECIMAL(p, s) -> DECIMAL(p-s+1, 0)
//	                  (s > 0); FLOAT and DOUBLE keep their type. ceiling is
//	                  an alias of ceil
//	power(x, y)       DOUBLE; IEEE results (power(-8, 1/3) is NaN)
func init() {
	num := p(kNumeric)
	mustAdd(&funcDef{name: "abs", desc: "absolute value, of the argument's type",
		sigs: []sig{sg("T", num)}, rule: sameAs(0),
		build: func(_ string, args []Expr, _ arrow.DataType) (Expr, error) {
			return fold(&absFunc{e: args[0]}, args[0])
		}})
	mustAdd(&funcDef{name: "mod", desc: "remainder of a / b, with the sign of a",
		sigs: []sig{sg("NUMERIC", num, num)},
		rule: func(ts []arrow.DataType) (arrow.DataType, error) {
			t, _, _, err := arithType("%", ts[0], ts[1])
			return t, err
		},
		build: func(_ string, args []Expr, _ arrow.DataType) (Expr, error) {
			return newArith("%", args[0], args[1], "mod")
		}})
	mustAdd(&funcDef{name: "round", desc: "round HALF_UP to d fraction digits (default 0)",
		sigs: []sig{sgOpt("T (DECIMAL: narrowed to d digits)", 1, num, p(kInt))}, optRule: roundType, build: buildRound})
	for _, n := range []string{"floor", "ceil"} {
		def := &funcDef{name: n, desc: map[string]string{"floor": "largest integer value not greater than x", "ceil": "smallest integer value not less than x"}[n],
			sigs: []sig{sg("T (DECIMAL(p, s) -> DECIMAL(p-s+1, 0))", num)}, rule: floorCeilType, build: buildFloorCeil}
		if n == "ceil" {
			def.aliases = []string{"ceiling"}
		}
		mustAdd(def)
	}
	mustAdd(&funcDef{name: "power", aliases: []string{"pow"}, desc: "x raised to the power y, as DOUBLE",
		sigs: []sig{sg("DOUBLE", num, num)}, rule: fixed(tDouble),
		build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
			return strictCall(name, args, []arrow.DataType{tDouble, tDouble}, t, func([]Expr) (rowFn, colFn) {
				return kernel2(func(x, y float64) (float64, bool, error) { return math.Pow(x, y), true, nil })
			})
		}})
}

func roundDigits(args int, consts []any) (int, error) {
	if args < 2 {
		return 0, nil
	}
	switch d := consts[1].(type) {
	case int32:
		return int(d), nil
	case int64:
		if d < -100 || d > 100 {
			return 0, fmt.Errorf("digits %d out of range", d)
		}
		return int(d), nil
	}
	return 0, fmt.Errorf("the number of digits must be a constant integer")
}

func roundType(ts []arrow.DataType, consts []any) (arrow.DataType, error) {
	d, err := roundDigits(len(ts), consts)
	if err != nil {
		return nil, err
	}
	t := ts[0]
	if isNull(t) {
		return nil, fmt.Errorf("the type of NULL is unknown: CAST it")
	}
	dt, ok := t.(*arrow.Decimal128Type)
	if !ok {
		return t, nil
	}
	p, s := dt.Precision, dt.Scale
	switch {
	case int32(d) >= s:
		return decType(p, s), nil
	case d < 0:
		return decType(min(maxPrecision, 1+p-s), 0), nil
	}
	return decType(min(maxPrecision, 1+p-s+int32(d)), int32(d)), nil
}

func buildRound(name string, args []Expr, t arrow.DataType) (Expr, error) {
	d, _ := roundDigits(len(args), func() []any {
		if len(args) < 2 {
			return nil
		}
		return []any{nil, args[1].(*Literal).v}
	}())
	x := args[0]
	mk := func(row rowFn, col colFn) (Expr, error) {
		e, err := newCall(name, []Expr{x}, t, row, col)
		if c, ok := e.(*call); ok && len(args) > 1 {
			c.str = func() string { return fmt.Sprintf("%s(%s, %s)", name, x, args[1]) }
		}
		return e, err
	}
	switch x.Type().ID() {
	case arrow.INT32:
		return mk(kernel1(func(v int32) (int32, bool, error) {
			r, ok := roundInt(int64(v), d)
			if !ok || r != int64(int32(r)) {
				return 0, false, fmt.Errorf("INT overflow in %s(%d, %d)", name, v, d)
			}
			return int32(r), true, nil
		}))
	case arrow.INT64:
		return mk(kernel1(func(v int64) (int64, bool, error) {
			r, ok := roundInt(v, d)
			if !ok {
				return 0, false, fmt.Errorf("BIGINT overflow in %s(%d, %d)", name, v, d)
			}
			return r, true, nil
		}))
	case arrow.FLOAT32:
		return mk(kernel1(func(v float32) (float32, bool, error) { return float32(roundFloat(float64(v), d, 32)), true, nil }))
	case arrow.FLOAT64:
		return mk(kernel1(func(v float64) (float64, bool, error) { return roundFloat(v, d, 64), true, nil }))
	case arrow.DECIMAL128:
		from := x.Type().(*arrow.Decimal128Type).Scale
		out := t.(*arrow.Decimal128Type)
		return mk(kernel1(func(v decimal128.Num) (decimal128.Num, bool, error) {
			r, ok := roundDec(v, from, int32(d), out)
			if !ok {
				return r, false, fmt.Errorf("%s overflow in %s(%s, %d)", typeName(out), name, decToString(v, from), d)
			}
			return r, true, nil
		}))
	}
	return nil, fmt.Errorf("%s: cannot round %s", name, typeName(x.Type()))
}

// roundInt rounds HALF_UP to 10^-d when d < 0; ok is false on overflow.
func roundInt(v int64, d int) (int64, bool) {
	if d >= 0 {
		return v, true
	}
	if -d > 18 {
		return 0, true
	}
	m := pow10Int[-d]
	q, r := v/m, v%m
	if r < 0 {
		r = -r
	}
	if 2*r >= m {
		if v < 0 {
			q--
		} else {
			q++
		}
	}
	if q > math.MaxInt64/m || q < math.MinInt64/m {
		return 0, false
	}
	return q * m, true
}

// roundFloat rounds the shortest decimal form of v HALF_UP at d digits.
func roundFloat(v float64, d int, bits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	s := strconv.FormatFloat(v, 'e', -1, bits)
	neg := s[0] == '-'
	s = strings.TrimPrefix(s, "-")
	mant, expS, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	keep := exp + d + 1 // digits whose weight is at least 10^-d
	if keep >= len(digits) {
		return v
	}
	if keep < 0 {
		return 0
	}
	var q uint64
	if keep > 0 {
		q, _ = strconv.ParseUint(digits[:keep], 10, 64)
	}
	if digits[keep] >= '5' {
		q++
	}
	out := strconv.FormatUint(q, 10) + "e" + strconv.Itoa(-d)
	if neg {
		out = "-" + out
	}
	f, _ := strconv.ParseFloat(out, bits)
	return f
}

// roundDec rounds v (at scale from) HALF_UP at d digits and returns it at
// the output type's scale.
func roundDec(v num, from, d int32, out *arrow.Decimal128Type) (num, bool) {
	if d >= from {
		return v, true
	}
	r, ok := decRescale(v, from, d)
	if !ok {
		return r, false
	}
	if r, ok = decRescale(r, d, out.Scale); !ok {
		return r, false
	}
	return r, decFits(r, out.Precision)
}

func floorCeilType(ts []arrow.DataType) (arrow.DataType, error) {
	if d, ok := ts[0].(*arrow.Decimal128Type); ok && d.Scale > 0 {
		return decType(min(maxPrecision, d.Precision-d.Scale+1), 0), nil
	}
	if isNull(ts[0]) {
		return nil, fmt.Errorf("the type of NULL is unknown: CAST it")
	}
	return ts[0], nil
}

func buildFloorCeil(name string, args []Expr, t arrow.DataType) (Expr, error) {
	x := args[0]
	up := name != "floor"
	switch x.Type().ID() {
	case arrow.INT32, arrow.INT64:
		return x, nil
	}
	f := math.Floor
	if up {
		f = math.Ceil
	}
	switch x.Type().ID() {
	case arrow.FLOAT32:
		row, col := kernel1(func(v float32) (float32, bool, error) { return float32(f(float64(v))), true, nil })
		return newCall(name, args, t, row, col)
	case arrow.FLOAT64:
		row, col := kernel1(func(v float64) (float64, bool, error) { return f(v), true, nil })
		return newCall(name, args, t, row, col)
	case arrow.DECIMAL128:
		s := x.Type().(*arrow.Decimal128Type).Scale
		if s == 0 {
			return x, nil
		}
		row, col := kernel1(func(v decimal128.Num) (decimal128.Num, bool, error) { return floorCeilDec(v, s, up), true, nil })
		return newCall(name, args, t, row, col)
	}
	return nil, fmt.Errorf("%s: cannot apply to %s", name, typeName(x.Type()))
}

// floorCeilDec is the integer below (or above) v at scale s, at scale 0.
func floorCeilDec(v num, s int32, up bool) num {
	if fitsInt64(v) && s <= 18 {
		x, m := int64(v.LowBits()), pow10Int[s]
		q, r := x/m, x%m
		if r < 0 && !up {
			q--
		} else if r > 0 && up {
			q++
		}
		return decimal128.FromI64(q)
	}
	q, r := new(big.Int).QuoRem(v.BigInt(), bigPow10(s), new(big.Int))
	if r.Sign() < 0 && !up {
		q.Sub(q, big.NewInt(1))
	} else if r.Sign() > 0 && up {
		q.Add(q, big.NewInt(1))
	}
	n, _ := bigToNum(q)
	return n
}
