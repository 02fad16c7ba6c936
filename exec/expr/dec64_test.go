package expr

import (
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// randNarrow is a random int64 unscaled value biased to the limits: 0,
// small, near 10^k for some k, near ±2^63.
func randNarrow(rng *rand.Rand) int64 {
	var v int64
	switch rng.Intn(6) {
	case 0:
		v = int64(rng.Intn(3))
	case 1:
		v = rng.Int63n(1000)
	case 2:
		v = pow10Int[rng.Intn(19)] - int64(rng.Intn(3))
	case 3:
		v = math.MaxInt64 - rng.Int63n(3)
	case 4:
		v = rng.Int63n(pow10Int[rng.Intn(18)+1])
	default:
		v = rng.Int63()
	}
	if rng.Intn(2) == 0 {
		v = -v
	}
	if rng.Intn(50) == 0 {
		v = math.MinInt64
	}
	return v
}

// Every operator over random scales and precisions: wherever the int64
// form claims a result (not wide), it must be decOp's exactly, overflow
// verdict included; and it must claim most of them.
func TestNarrowDecimalAgrees(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	claimed, total := 0, 0
	for trial := 0; trial < 3000; trial++ {
		p1, p2 := int32(rng.Intn(38)+1), int32(rng.Intn(38)+1)
		s1, s2 := int32(rng.Intn(int(p1)+1)), int32(rng.Intn(int(p2)+1))
		op := "+-*/%"[rng.Intn(5)]
		rt, _, _, err := arithType(string(op), decType(p1, s1), decType(p2, s2))
		if err != nil {
			t.Fatal(err)
		}
		res := rt.(*arrow.Decimal128Type)
		dop := decOp{op: op, s1: s1, s2: s2, p: res.Precision, s: res.Scale}
		nd := newNarrowDec(dop)
		for k := 0; k < 200; k++ {
			x, y := randNarrow(rng), randNarrow(rng)
			if (op == '/' || op == '%') && y == 0 {
				continue
			}
			total++
			want, st := dop.apply(num128(x), num128(y))
			if !nd.ok {
				continue
			}
			r, wide, bad := nd.apply(x, y)
			if wide {
				continue
			}
			claimed++
			if bad != (st == opOverflow) {
				t.Fatalf("DECIMAL(%d,%d) %c DECIMAL(%d,%d) -> DECIMAL(%d,%d): %d %c %d: int64 overflow %v, 128-bit status %d",
					p1, s1, op, p2, s2, dop.p, dop.s, x, op, y, bad, st)
			}
			if !bad && num128(r) != want {
				t.Fatalf("DECIMAL(%d,%d) %c DECIMAL(%d,%d) -> DECIMAL(%d,%d): %d %c %d: int64 %d, 128-bit %s",
					p1, s1, op, p2, s2, dop.p, dop.s, x, op, y, r, want.BigInt())
			}
		}
	}
	if claimed*3 < total {
		t.Fatalf("the int64 form decided only %d of %d", claimed, total)
	}
	t.Logf("int64 decided %d of %d", claimed, total)
}

// divRound128 (the quotients past 63 bits) against decDivRound.
func TestDivRound128Agrees(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for k := 0; k < 200000; k++ {
		a, b := randNarrow(rng), randNarrow(rng)
		if b == 0 {
			continue
		}
		e := int32(rng.Intn(19))
		// decDivRound(a, sa, b, sb, s) with sb + s - sa = e.
		want, wok := decDivRound(num128(a), 0, num128(b), 0, e)
		got, gok := divRound128(a, b, e)
		if gok != wok || gok && got != want {
			t.Fatalf("%d * 10^%d / %d: got %s (%v), want %s (%v)", a, e, b, got.BigInt(), gok, want.BigInt(), wok)
		}
		if q, ok := divRound64(a, b, e); ok && num128(q) != want {
			t.Fatalf("%d * 10^%d / %d: int64 %d, want %s", a, e, b, q, want.BigInt())
		}
		if e > 0 {
			// A negative exponent scales the divisor instead.
			want, _ := decDivRound(num128(a), e, num128(b), 0, 0)
			if q, ok := divRound64(a, b, -e); ok && num128(q) != want {
				t.Fatalf("%d / (%d * 10^%d): int64 %d, want %s", a, b, e, q, want.BigInt())
			}
		}
	}
}

// roundDiv64 is decRescale's HALF_UP narrowing.
func TestRoundDiv64Agrees(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for k := 0; k < 100000; k++ {
		v := randNarrow(rng)
		d := int32(rng.Intn(18) + 1)
		want, _ := decRescale(num128(v), d, 0)
		if got := roundDiv64(v, pow10Int[d]); num128(got) != want {
			t.Fatalf("%d / 10^%d: %d, want %s", v, d, got, want.BigInt())
		}
	}
	// Exactly half rounds away from zero.
	for _, c := range []struct{ v, want int64 }{{15, 2}, {-15, -2}, {14, 1}, {-14, -1}, {25, 3}, {-25, -3}} {
		if got := roundDiv64(c.v, 10); got != c.want {
			t.Fatalf("%d / 10 = %d, want %d", c.v, got, c.want)
		}
	}
}
