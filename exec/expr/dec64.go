package expr

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// DECIMAL arithmetic on int64 unscaled values: the narrow twin of
// dec128.go, used by the fused evaluator (fused_dec.go) while every value
// of a chunk fits 63 bits, which is every DECIMAL(p <= 18) value and, in
// practice, most results of arithmetic over them whatever their declared
// precision (price * (1 - discount) is DECIMAL(31, 4) but holds 12-digit
// values). Each function reports ok=false where the exact result needs
// more than int64; the caller then computes that chunk in 128 bits with
// dec128.go, the definition these must match bit for bit.

// abs64 is |v| as unsigned, defined for math.MinInt64 too.
func abs64(v int64) uint64 {
	m := uint64(v >> 63)
	return (uint64(v) ^ m) - m
}

// scaleUp64 is v * 10^d for 0 <= d <= 18.
func scaleUp64(v int64, d int32) (int64, bool) {
	r, o := mulOvf(v, pow10Int[d])
	return r, !o
}

// roundDiv64 is v / p rounded HALF_UP (away from zero at .5), p = 10^d with
// 1 <= d <= 18: decRescale's narrowing step on a value that fits 64 bits.
func roundDiv64(v, p int64) int64 {
	q, r := v/p, v%p
	if r < 0 {
		r = -r
	}
	if 2*r >= p {
		if v < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// divRound64 is round_half_up(a * 10^e / b) for b != 0 and -18 <= e <= 18:
// decDivRound for narrow operands, with the 128-bit dividend of a * 10^e
// divided by one bits.Div64. ok=false when the quotient needs more than 63
// bits (divRound128 computes it).
func divRound64(a, b int64, e int32) (int64, bool) {
	ua, ub := abs64(a), abs64(b)
	var q, r uint64
	if e >= 0 {
		hi, lo := bits.Mul64(ua, uint64(pow10Int[e]))
		if hi >= ub {
			return 0, false
		}
		q, r = bits.Div64(hi, lo, ub)
	} else {
		hi, y := bits.Mul64(ub, uint64(pow10Int[-e]))
		if hi != 0 {
			// |b| * 10^-e >= 2^64 > 2 |a|: the quotient rounds to 0.
			return 0, true
		}
		ub = y
		q, r = ua/ub, ua%ub
	}
	if r >= ub-r { // 2r >= divisor, without overflowing 2r
		q++
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	if (a < 0) != (b < 0) {
		return -int64(q), true
	}
	return int64(q), true
}

// divRound128 is divRound64 when the quotient needs more than 63 bits
// (0 <= e <= 18): a long division of the 128-bit dividend by two
// bits.Div64 steps. ok is decDivRound's range check (at most 126 bits);
// the caller checks the precision.
func divRound128(a, b int64, e int32) (num, bool) {
	ua, ub := abs64(a), abs64(b)
	hi, lo := bits.Mul64(ua, uint64(pow10Int[e]))
	qhi, rhi := hi/ub, hi%ub
	qlo, r := bits.Div64(rhi, lo, ub)
	if r >= ub-r {
		var c uint64
		qlo, c = bits.Add64(qlo, 1, 0)
		qhi += c
	}
	n := decimal128.New(int64(qhi), qlo)
	if (a < 0) != (b < 0) {
		n = n.Negate()
	}
	return n, qhi < 1<<62
}

// narrowDec is decOp prepared for int64 operands: the scale multipliers
// and the rounding divisor as constants. ok is false when an exponent
// leaves int64's 18 digits, and the operation always runs in 128 bits.
type narrowDec struct {
	op     byte
	ux, uy int64 // + - %: multipliers bringing x and y to the common scale
	down   int64 // + - *: 10^d to round the result down by (0: none)
	e      int32 // /: the dividend's scale-up exponent (decDivRound's)
	lim    int64 // 10^p when p <= 18 (results must stay below), else 0
	ok     bool
}

func newNarrowDec(d decOp) narrowDec {
	n := narrowDec{op: d.op}
	within := func(e int32) bool { return e >= 0 && e <= 18 }
	n.ok = true
	switch d.op {
	case '+', '-':
		sc := max(d.s1, d.s2)
		n.ok = within(sc-d.s1) && within(sc-d.s2) && within(sc-d.s)
		if n.ok {
			n.ux, n.uy = pow10Int[sc-d.s1], pow10Int[sc-d.s2]
			if d.s < sc {
				n.down = pow10Int[sc-d.s]
			}
		}
	case '*':
		n.ok = within(d.s1 + d.s2 - d.s)
		if n.ok && d.s < d.s1+d.s2 {
			n.down = pow10Int[d.s1+d.s2-d.s]
		}
	case '/':
		n.e = d.s2 + d.s - d.s1
		n.ok = n.e >= -18 && n.e <= 18
	default:
		n.ok = within(d.s-d.s1) && within(d.s-d.s2)
		if n.ok {
			n.ux, n.uy = pow10Int[d.s-d.s1], pow10Int[d.s-d.s2]
		}
	}
	if d.p <= 18 {
		n.lim = pow10Int[d.p]
	}
	return n
}

// fits reports whether r has at most p digits (decFits for int64).
func (n narrowDec) fits(r int64) bool {
	return n.lim == 0 || (r < n.lim && r > -n.lim)
}

// apply is decOp.apply on int64 operands (y != 0 for / and %). wide: the
// exact result needs more than int64, compute it in 128 bits; bad: the
// result overflows the type (an error the 128-bit path reports).
func (n narrowDec) apply(x, y int64) (r int64, wide, bad bool) {
	switch n.op {
	case '+', '-':
		a, o1 := mulOvf(x, n.ux)
		b, o2 := mulOvf(y, n.uy)
		if n.op == '+' {
			r = a + b
			wide = (a^r)&(b^r) < 0
		} else {
			r = a - b
			wide = (a^b)&(a^r) < 0
		}
		if wide = wide || o1 || o2; wide {
			return 0, true, false
		}
		if n.down != 0 {
			r = roundDiv64(r, n.down)
		}
	case '*':
		var o bool
		if r, o = mulOvf(x, y); o {
			return 0, true, false
		}
		if n.down != 0 {
			r = roundDiv64(r, n.down)
		}
	case '/':
		var ok bool
		if r, ok = divRound64(x, y, n.e); !ok {
			return 0, true, false
		}
	default:
		a, o1 := mulOvf(x, n.ux)
		b, o2 := mulOvf(y, n.uy)
		if o1 || o2 {
			return 0, true, false
		}
		r = a % b
	}
	return r, false, !n.fits(r)
}
