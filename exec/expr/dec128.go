package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// 128-bit decimal arithmetic with overflow detection. decimal128.Num's own
// Add/Mul wrap silently and its Div/Rescale go through math/big; the hot
// cases here (values that fit 64 bits) stay in registers and only the rare
// wide cases fall back to math/big.

type num = decimal128.Num

var (
	pow10Num    [maxPrecision + 1]num
	negPow10Num [maxPrecision + 1]num
	pow10Int    [19]int64
	pow10Float  [23]float64
)

func init() {
	for i := range pow10Num {
		pow10Num[i] = decimal128.GetScaleMultiplier(i)
		negPow10Num[i] = pow10Num[i].Negate()
	}
	p := int64(1)
	for i := range pow10Int {
		pow10Int[i] = p
		p *= 10
	}
	f := 1.0
	for i := range pow10Float {
		pow10Float[i] = f
		f *= 10
	}
}

func less128(a, b num) bool {
	ah, bh := a.HighBits(), b.HighBits()
	return ah < bh || (ah == bh && a.LowBits() < b.LowBits())
}

// fitsInt64 reports whether n is a sign-extended int64.
func fitsInt64(n num) bool { return n.HighBits() == int64(n.LowBits())>>63 }

// decFits reports whether n has at most p digits.
func decFits(n num, p int32) bool {
	return less128(negPow10Num[p], n) && less128(n, pow10Num[p])
}

func decAdd(a, b num) (num, bool) {
	r := a.Add(b)
	return r, (a.HighBits()^r.HighBits())&(b.HighBits()^r.HighBits()) >= 0
}

func decSub(a, b num) (num, bool) {
	r := a.Sub(b)
	return r, (a.HighBits()^b.HighBits())&(a.HighBits()^r.HighBits()) >= 0
}

// decMul multiplies with overflow detection; ok is false when the product
// does not fit 127 bits.
func decMul(a, b num) (num, bool) {
	if fitsInt64(a) && fitsInt64(b) {
		x, y := int64(a.LowBits()), int64(b.LowBits())
		hi, lo := bits.Mul64(uint64(x), uint64(y))
		// Signed high word of the 128-bit product.
		shi := int64(hi) - (x>>63)&y - (y>>63)&x
		return decimal128.New(shi, lo), true
	}
	neg := (a.HighBits() < 0) != (b.HighBits() < 0)
	ua, ub := a.Abs(), b.Abs()
	if ua.HighBits() < 0 || ub.HighBits() < 0 { // the minimum value has no absolute value
		return num{}, false
	}
	if ua.HighBits() != 0 && ub.HighBits() != 0 {
		return num{}, false
	}
	if ua.HighBits() == 0 {
		ua, ub = ub, ua
	}
	// ua may be wide, ub fits 64 bits.
	h1, l1 := bits.Mul64(ua.LowBits(), ub.LowBits())
	h2, l2 := bits.Mul64(uint64(ua.HighBits()), ub.LowBits())
	hi, carry := bits.Add64(h1, l2, 0)
	if h2 != 0 || carry != 0 || hi >= 1<<63 {
		return num{}, false
	}
	r := decimal128.New(int64(hi), l1)
	if neg {
		r = r.Negate()
	}
	return r, true
}

// decRescale moves n from scale from to scale to, rounding HALF_UP (away
// from zero at .5) when the scale shrinks. ok is false on overflow.
func decRescale(n num, from, to int32) (num, bool) {
	switch {
	case to == from:
		return n, true
	case to > from:
		d := to - from
		if d > maxPrecision {
			return n, n.Sign() == 0
		}
		return decMul(n, pow10Num[d])
	}
	d := from - to
	if d > maxPrecision {
		return num{}, true
	}
	if d <= 18 && fitsInt64(n) {
		v, p := int64(n.LowBits()), pow10Int[d]
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
		return decimal128.FromI64(q), true
	}
	return n.ReduceScaleBy(d, true), true
}

// bigToNum converts with a range check: FromBigInt panics past 127 bits.
func bigToNum(b *big.Int) (num, bool) {
	if b.BitLen() > 126 {
		return num{}, false
	}
	return decimal128.FromBigInt(b), true
}

var bigTen = big.NewInt(10)

func bigPow10(e int32) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(e)), nil)
}

// decDivRound computes a/b (scales sa, sb) at scale s, HALF_UP. The caller
// has checked b != 0. It uses math/big: decimal division is rare enough in
// streaming SQL that the simple exact form wins over a 256-bit kernel.
func decDivRound(a num, sa int32, b num, sb int32, s int32) (num, bool) {
	x, y := a.BigInt(), b.BigInt()
	// a/b = (A / 10^sa) / (B / 10^sb); result R = A*10^(sb+s-sa) / B.
	if e := sb + s - sa; e >= 0 {
		x.Mul(x, bigPow10(e))
	} else {
		y.Mul(y, bigPow10(-e))
	}
	q, r := new(big.Int).QuoRem(x, y, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.CmpAbs(y) >= 0 {
		if x.Sign()*y.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return bigToNum(q)
}

// decMod is a % b with both at scale s (the remainder takes the sign of the
// dividend, as SQL MOD does).
func decMod(a, b num) num {
	r := new(big.Int).Rem(a.BigInt(), b.BigInt())
	n, _ := bigToNum(r) // |r| < |b|: always fits
	return n
}

// decToString renders n with exactly scale fraction digits.
func decToString(n num, scale int32) string {
	if fitsInt64(n) && scale <= 18 {
		v := int64(n.LowBits())
		if scale == 0 {
			return strconv.FormatInt(v, 10)
		}
		neg := v < 0
		u := uint64(v)
		if neg {
			u = -u
		}
		p := uint64(pow10Int[scale])
		frac := strconv.FormatUint(u%p, 10)
		var sb strings.Builder
		if neg {
			sb.WriteByte('-')
		}
		sb.WriteString(strconv.FormatUint(u/p, 10))
		sb.WriteByte('.')
		for i := len(frac); i < int(scale); i++ {
			sb.WriteByte('0')
		}
		sb.WriteString(frac)
		return sb.String()
	}
	return n.ToString(scale)
}

// decToFloat converts exactly-rounded: a value of at most 53 bits with a
// small scale divides exactly in IEEE arithmetic; anything else goes
// through the decimal string, which strconv rounds correctly.
func decToFloat(n num, scale int32) float64 {
	if fitsInt64(n) && scale <= 22 {
		v := int64(n.LowBits())
		if v >= -(1<<53) && v <= 1<<53 {
			return float64(v) / pow10Float[scale]
		}
	}
	f, _ := strconv.ParseFloat(decToString(n, scale), 64)
	return f
}

// parseDecimal reads a decimal string ([+-]digits[.digits][e[+-]exp]) at
// scale s, rounding HALF_UP, and checks that it has at most p digits.
func parseDecimal(str string, p, s int32) (num, error) {
	t := strings.TrimSpace(str)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	exp := int64(0)
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.ParseInt(t[i+1:], 10, 32)
		if err != nil {
			return num{}, fmt.Errorf("invalid decimal %q", str)
		}
		exp = e
		t = t[:i]
	}
	intPart, frac := t, ""
	if i := strings.IndexByte(t, '.'); i >= 0 {
		intPart, frac = t[:i], t[i+1:]
	}
	if intPart == "" && frac == "" {
		return num{}, fmt.Errorf("invalid decimal %q", str)
	}
	digits := intPart + frac
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return num{}, fmt.Errorf("invalid decimal %q", str)
		}
	}
	b, _ := new(big.Int).SetString("0"+digits, 10)
	// value = b * 10^(exp - len(frac)); bring it to scale s.
	shift := exp - int64(len(frac)) + int64(s)
	switch {
	case shift > 2*maxPrecision+2:
		if b.Sign() != 0 {
			return num{}, fmt.Errorf("decimal %q does not fit DECIMAL(%d, %d)", str, p, s)
		}
	case shift >= 0:
		b.Mul(b, bigPow10(int32(shift)))
	case shift < -2*maxPrecision-2:
		b.SetInt64(0)
	default:
		d := bigPow10(int32(-shift))
		q, r := new(big.Int).QuoRem(b, d, new(big.Int))
		if r.Lsh(r, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		b = q
	}
	if neg {
		b.Neg(b)
	}
	n, ok := bigToNum(b)
	if !ok || !decFits(n, p) {
		return num{}, fmt.Errorf("decimal %q does not fit DECIMAL(%d, %d)", str, p, s)
	}
	return n, nil
}

// floatToDec converts through the shortest decimal form of f, so 0.1
// becomes 0.1 and not 0.1000000000000000055511151231257827.
func floatToDec(f float64, p, s int32) (num, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return num{}, fmt.Errorf("%v has no DECIMAL value", f)
	}
	return parseDecimal(strconv.FormatFloat(f, 'g', -1, 64), p, s)
}
