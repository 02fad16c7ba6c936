package ops

import (
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// i192 is a 192-bit two's-complement integer. Window sums over BIGINT and
// DECIMAL(38) values are differences of prefix sums; a prefix may exceed
// 128 bits (a partition of large decimals) while the frame's sum fits, and
// 192 bits hold any prefix of fewer than 2^31 rows exactly, so the
// difference is the frame's exact sum and overflow is decided on that, not
// on the order the rows were added in. RANGE bounds (key ± offset) are
// computed in it too, so they cannot overflow either.
type i192 struct{ lo, mid, hi uint64 }

const nanosPerDay = 86400 * 1_000_000_000

func i192From64(v int64) i192 {
	s := uint64(v >> 63)
	return i192{uint64(v), s, s}
}

func i192FromDec(n decimal128.Num) i192 {
	hi := n.HighBits()
	return i192{n.LowBits(), uint64(hi), uint64(hi >> 63)}
}

func (a i192) add(b i192) i192 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	mid, c := bits.Add64(a.mid, b.mid, c)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return i192{lo, mid, hi}
}

func (a i192) sub(b i192) i192 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	mid, c := bits.Sub64(a.mid, b.mid, c)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return i192{lo, mid, hi}
}

func (a i192) neg() i192 { return i192{}.sub(a) }

func (a i192) isNeg() bool { return int64(a.hi) < 0 }

func (a i192) sign() int {
	switch {
	case a.isNeg():
		return -1
	case a == i192{}:
		return 0
	}
	return 1
}

func (a i192) cmp(b i192) int {
	if a.hi != b.hi {
		if int64(a.hi) < int64(b.hi) {
			return -1
		}
		return 1
	}
	if a.mid != b.mid {
		if a.mid < b.mid {
			return -1
		}
		return 1
	}
	switch {
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// int64 is a as a BIGINT, and whether it fits.
func (a i192) int64() (int64, bool) {
	v := int64(a.lo)
	s := uint64(v >> 63)
	return v, a.mid == s && a.hi == s
}

// dec is a as an unscaled decimal of at most prec digits, and whether it
// fits.
func (a i192) dec(prec int32) (decimal128.Num, bool) {
	if a.hi != uint64(int64(a.mid)>>63) {
		return decimal128.Num{}, false
	}
	n := decimal128.New(int64(a.mid), a.lo)
	return n, n.FitsInPrecision(prec)
}

// mulSmall multiplies by m >= 0 (the result must fit: the callers' values
// are bounded far below 2^191).
func (a i192) mulSmall(m uint64) i192 {
	neg := a.isNeg()
	if neg {
		a = a.neg()
	}
	h0, lo := bits.Mul64(a.lo, m)
	h1, mid := bits.Mul64(a.mid, m)
	mid, c := bits.Add64(mid, h0, 0)
	hi := a.hi*m + h1 + c
	r := i192{lo, mid, hi}
	if neg {
		r = r.neg()
	}
	return r
}

// mulPow10 multiplies by 10^e, e >= 0.
func (a i192) mulPow10(e int32) i192 {
	for ; e > 0; e -= 18 {
		a = a.mulSmall(pow10u(min(e, 18)))
	}
	return a
}

// quoRound divides by d > 0, rounding half away from zero (as DECIMAL
// rescaling and AVG do in the hash aggregate).
func (a i192) quoRound(d uint64) i192 {
	neg := a.isNeg()
	if neg {
		a = a.neg()
	}
	qh, r := bits.Div64(0, a.hi, d)
	qm, r := bits.Div64(r, a.mid, d)
	ql, r := bits.Div64(r, a.lo, d)
	q := i192{ql, qm, qh}
	if r >= d-r { // 2r >= d without overflow
		q = q.add(i192{lo: 1})
	}
	if neg {
		q = q.neg()
	}
	return q
}

// divPow10Round divides by 10^e (e >= 0), rounding half away from zero once.
func (a i192) divPow10Round(e int32) i192 {
	if e == 0 {
		return a
	}
	if e <= 19 {
		return a.quoRound(pow10u(e))
	}
	// 10^e exceeds a word: truncate by 10^(e-19) first, keeping whether
	// anything was dropped, so the final rounding sees it. A DECIMAL(38)
	// value divided by more than 10^38 rounds to 0 or ±1 anyway.
	neg := a.isNeg()
	if neg {
		a = a.neg()
	}
	for k := e - 19; k > 0; k -= 19 {
		a, _ = a.quoRem(pow10u(min(k, 19)))
	}
	q := a.quoRound(pow10u(19))
	if neg {
		q = q.neg()
	}
	return q
}

// quoRem divides a >= 0 by d > 0.
func (a i192) quoRem(d uint64) (i192, uint64) {
	qh, r := bits.Div64(0, a.hi, d)
	qm, r := bits.Div64(r, a.mid, d)
	ql, r := bits.Div64(r, a.lo, d)
	return i192{ql, qm, qh}, r
}

func pow10u(e int32) uint64 {
	p := uint64(1)
	for ; e > 0; e-- {
		p *= 10
	}
	return p
}

// float64 is a rounded to the nearest float64 (as Go converts an int64).
func (a i192) float64() float64 {
	if v, ok := a.int64(); ok {
		return float64(v)
	}
	f, _ := new(big.Float).SetInt(a.big()).Float64()
	return f
}

func (a i192) big() *big.Int {
	neg := a.isNeg()
	if neg {
		a = a.neg()
	}
	z := new(big.Int).SetUint64(a.hi)
	z.Lsh(z, 64).Or(z, new(big.Int).SetUint64(a.mid))
	z.Lsh(z, 64).Or(z, new(big.Int).SetUint64(a.lo))
	if neg {
		z.Neg(z)
	}
	return z
}
