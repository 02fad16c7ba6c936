package ops

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// SUM over DECIMAL(38, 0) near the 38-digit limit: a wide first value
// 10^20 short of it, then values that fit 64 bits (the add-with-carry
// path) and cross into the range where the sum's digits are checked.
// Ten of them stay within 38 digits; twenty cross 10^38 and fail with
// the overflow error, on the row path and the columnar path alike. The
// expected sums are computed with math/big.
func TestSumDecimalNearLimit(t *testing.T) {
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	in := arrow.NewSchema([]arrow.Field{{Name: "g", Type: i64}, {Name: "d", Type: dt, Nullable: true}}, nil)
	specs := []AggSpec{{Func: "sum", Col: 1, Type: dt, Text: "sum(d)"}}
	out := aggSchema(in, []int{0}, specs)
	lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	start := new(big.Int).Sub(lim, new(big.Int).Exp(big.NewInt(10), big.NewInt(20), nil))
	const step = 9_000_000_000_000_000_000 // fits int64
	for _, c := range []struct {
		name string
		adds int
		neg  bool
	}{{"fits", 10, false}, {"overflows", 20, false}, {"fits-negative", 10, true}, {"overflows-negative", 20, true}} {
		sign := int64(1)
		if c.neg {
			sign = -1
		}
		first := new(big.Int).Mul(start, big.NewInt(sign))
		rows := []exec.Row{{int64(0), decimal128.FromBigInt(first)}, {int64(0), nil}}
		want := new(big.Int).Set(first)
		for k := 0; k < c.adds; k++ {
			rows = append(rows, exec.Row{int64(0), decimal128.FromI64(sign * step)})
			want.Add(want, big.NewInt(sign*step))
		}
		overflow := new(big.Int).Abs(want).Cmp(lim) >= 0
		for _, size := range []int{1, 4, 1024} {
			for _, col := range []bool{false, true} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				h := NewHashAggregate([]int{0}, specs, out, mem)
				capt := &capture{}
				var err error
				for _, b := range makeBatches(t, mem, input{in, rows}, size, col) {
					if err == nil {
						_, err = exec.Dispatch(context.Background(), h, col, 0, b, capt)
					}
					b.Release()
				}
				if err == nil {
					err = h.Finish(context.Background(), 0, capt)
				}
				switch {
				case overflow:
					if err == nil || !strings.Contains(err.Error(), "sum(d) overflowed DECIMAL(38)") {
						t.Errorf("%s size %d columnar %v: err = %v, want the DECIMAL(38) overflow", c.name, size, col, err)
					}
				case err != nil:
					t.Errorf("%s size %d columnar %v: %v", c.name, size, col, err)
				default:
					got, _ := capt.rows()
					if len(got) != 1 || got[0][1].(decimal128.Num).BigInt().Cmp(want) != 0 {
						t.Errorf("%s size %d columnar %v: got %v, want %s", c.name, size, col, got, want)
					}
				}
				capt.rows() // releases what was captured
				h.Close()
				mem.AssertSize(t, 0)
			}
		}
	}
}
