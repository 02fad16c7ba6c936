package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// winRowsClose is winRowsEqual with floats compared to a relative 1e-9
// (absolute near zero): the operator's Welford states and the reference's
// exact two-pass sums round differently.
func winRowsClose(a, b []exec.Row) (bool, string) {
	if len(a) != len(b) {
		return false, fmt.Sprintf("%d rows, want %d", len(a), len(b))
	}
	for i := range a {
		for c := range a[i] {
			x, y := a[i][c], b[i][c]
			fx, ok1 := x.(float64)
			fy, ok2 := y.(float64)
			if ok1 && ok2 {
				if fx == fy || (math.IsNaN(fx) && math.IsNaN(fy)) || math.Abs(fx-fy) <= 1e-9*math.Max(1, math.Abs(fy)) {
					continue
				}
			} else if ok, _ := winRowsEqual([]exec.Row{{x}}, []exec.Row{{y}}); ok {
				continue
			}
			return false, fmt.Sprintf("row %d column %d: got %v, want %v\n got row  %v\n want row %v", i, c, x, y, a[i], b[i])
		}
	}
	return true, ""
}

// The variance family over window frames (every frame shape genFrame
// draws: ROWS, RANGE, GROUPS, offsets, EXCLUDE) and bool_and's alias
// every, against the reference's exact two-pass variance, on the row and
// the columnar paths at several batch sizes; the paths agree to the bit.
func TestWindowFuncsStatistics(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	fns := []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop", "variance", "stddev"}
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 0x57a7))
		rows := genWinRows(r, r.IntN(90))
		for _, row := range rows {
			// Finite values only: NaN and infinities make every variance
			// NaN, which says nothing about the frames.
			if f, ok := row[5].(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				row[5] = 0.25
			}
		}
		spec, _ := genSpec(r)
		spec.Funcs = nil
		fields := append([]arrow.Field(nil), wtSchema.Fields()...)
		for i := range 3 {
			f := WindowFunc{Func: fns[r.IntN(len(fns))], Args: []int{[]int{4, 5, 6}[r.IntN(3)]}, Frame: genFrame(r, spec.OrderBy)}
			spec.Funcs = append(spec.Funcs, f)
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("w%d", i), Type: arrow.PrimitiveTypes.Float64, Nullable: true})
		}
		spec.Funcs = append(spec.Funcs, WindowFunc{Func: "every", Args: []int{8}, Frame: genFrame(r, spec.OrderBy)})
		fields = append(fields, arrow.Field{Name: "e", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
		out := arrow.NewSchema(fields, nil)
		want, err := refOver(rows, spec, out)
		if err != nil {
			t.Fatal(err)
		}
		var first []exec.Row
		for _, size := range []int{1, 7, 1024} {
			for _, colIn := range []bool{false, true} {
				name := fmt.Sprintf("seed=%d/size=%d/colIn=%v", seed, size, colIn)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				res := runOp(t, mem, NewWindowFuncs(spec, out, mem), []input{{wtSchema, rows}}, size, colIn, colIn)
				mem.AssertSize(t, 0)
				if ok, why := winRowsClose(res.rows, want); !ok {
					t.Fatalf("%s: %s\n%s", name, why, specString(spec))
				}
				if first == nil {
					first = res.rows
				} else if ok, why := winRowsEqual(res.rows, first); !ok {
					t.Fatalf("%s: differs from the first run: %s", name, why)
				}
			}
		}
	}
}

// A hand-worked frame: ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING over 1, 3,
// 5, 7 gives var_samp 2 (1, 3), 4 (1, 3, 5), 4, 2; stddev_pop over the
// running frame 0, 0.5, ...: 0 then 1 (1, 3) ...
func TestWindowFuncsStatByHand(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := []exec.Row{}
	for i, v := range []int64{1, 3, 5, 7} {
		rows = append(rows, exec.Row{nil, nil, int64(i), nil, v, nil, nil, nil, nil, nil, nil, nil})
	}
	frame := &Frame{Unit: FrameRows, Start: FrameBound{Kind: OffsetPreceding, Offset: int64(1)}, End: FrameBound{Kind: OffsetFollowing, Offset: int64(1)}}
	spec := WindowFuncsSpec{OrderBy: []SortKey{{Col: 2}}, Funcs: []WindowFunc{
		{Func: "var_samp", Args: []int{4}, Frame: frame}, {Func: "var_pop", Args: []int{4}}}}
	out := arrow.NewSchema(append(append([]arrow.Field(nil), wtSchema.Fields()...),
		arrow.Field{Name: "vs", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "vp", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), nil)
	for _, colIn := range []bool{false, true} {
		res := runOp(t, mem, NewWindowFuncs(spec, out, mem), []input{{wtSchema, rows}}, 2, colIn, colIn)
		// Running var_pop over 1, 3, 5, 7: 0, 1, 8/3, 5.
		want := [][2]float64{{2, 0}, {4, 1}, {4, 8.0 / 3}, {2, 5}}
		for i, r := range res.rows {
			if r[12] != want[i][0] || !closeTo(r[13], want[i][1]) {
				t.Errorf("colIn=%v row %d: %v %v, want %v", colIn, i, r[12], r[13], want[i])
			}
		}
	}
}
