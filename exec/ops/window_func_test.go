package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var (
	wtDec   = &arrow.Decimal128Type{Precision: 12, Scale: 2}
	wtTS    = &arrow.TimestampType{Unit: arrow.Microsecond}
	wtBig   = &arrow.Decimal128Type{Precision: 38, Scale: 2}
	wtAvgD  = &arrow.Decimal128Type{Precision: 38, Scale: 6}
	wtEpoch = time.Date(2024, 1, 20, 0, 0, 0, 0, time.UTC) // dates run over two month ends
)

// wtSchema is the randomised tests' input.
var wtSchema = arrow.NewSchema([]arrow.Field{
	{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true},    // 0 partition key
	{Name: "q", Type: arrow.BinaryTypes.String, Nullable: true},      // 1 partition key
	{Name: "o", Type: arrow.PrimitiveTypes.Int64, Nullable: true},    // 2 order key, few values
	{Name: "of", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, // 3 order key with NaN, ±Inf
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},    // 4 values
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},  // 5 values (quarters: every sum exact)
	{Name: "d", Type: wtDec, Nullable: true},                         // 6 values, order key
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},      // 7
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}, // 8
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true}, // 9 order key
	{Name: "ts", Type: wtTS, Nullable: true},                         // 10 order key
	{Name: "dv", Type: arrow.PrimitiveTypes.Int64, Nullable: true},   // 11 lag/lead defaults
}, nil)

var wtFloats = []float64{-3, -1.5, -0.5, 0, 0.5, 1, 1.5, 2.5, 4, math.NaN(), math.Inf(1), math.Inf(-1)}

// genWinRows draws n rows with duplicate keys (peers), NULLs at a rate
// chosen per case, and a few extreme integers.
func genWinRows(r *rand.Rand, n int) []exec.Row {
	pCard, qCard, oCard := 1+r.IntN(12), 1+r.IntN(3), 1+r.IntN(8)
	nullRate := r.IntN(4)
	maybe := func(v any) any {
		if nullRate > 0 && r.IntN(10) < nullRate {
			return nil
		}
		return v
	}
	epochDay := wtEpoch.Unix() / 86400
	rows := make([]exec.Row, n)
	for i := range rows {
		o := int64(r.IntN(oCard)) - 2
		if r.IntN(40) == 0 {
			o = []int64{math.MinInt64, math.MaxInt64}[r.IntN(2)]
		}
		rows[i] = exec.Row{
			maybe(int64(r.IntN(pCard))),
			maybe(fmt.Sprintf("q%d", r.IntN(qCard))),
			maybe(o),
			maybe(wtFloats[r.IntN(len(wtFloats))]),
			maybe(int64(r.IntN(41) - 20)),
			maybe(float64(r.IntN(81)-40) / 4),
			maybe(decimal128.FromI64(int64(r.IntN(10001) - 5000))),
			maybe([]string{"", "a", "ab", "b", "zz"}[r.IntN(5)]),
			maybe(r.IntN(3) > 0),
			maybe(arrow.Date32(epochDay + int64(r.IntN(45)))),
			maybe(arrow.Timestamp(wtEpoch.UnixMicro() + int64(r.IntN(40))*36*3600*1e6)),
			maybe(int64(1000 + r.IntN(100))),
		}
	}
	return rows
}

// genFrame draws a valid frame for the ORDER BY keys.
func genFrame(r *rand.Rand, order []SortKey) *Frame {
	if r.IntN(6) == 0 {
		return nil // the default frame
	}
	f := &Frame{Unit: FrameUnit(r.IntN(3))}
	if f.Unit == FrameGroups && len(order) == 0 {
		f.Unit = FrameRows
	}
	rangeOffsets := f.Unit == FrameRange && len(order) == 1
	var offsets []any
	switch {
	case f.Unit != FrameRange:
		offsets = []any{int64(0), int64(1), int64(2), int64(3), int64(7), int64(math.MaxInt64)}
	case !rangeOffsets:
	default:
		switch order[0].Col {
		case 2:
			offsets = []any{int64(0), int64(1), int64(2), int64(5), int64(math.MaxInt64)}
		case 3:
			offsets = []any{0.0, 0.5, 1.5, 4.0, math.Inf(1)}
		case 6:
			offsets = []any{decimal128.FromI64(0), decimal128.FromI64(150), decimal128.FromI64(2500), decimal128.FromI64(1_000_000)}
		case 9, 10:
			offsets = []any{
				arrow.MonthDayNanoInterval{}, arrow.MonthDayNanoInterval{Days: 1}, arrow.MonthDayNanoInterval{Days: 3},
				arrow.MonthDayNanoInterval{Months: 1}, arrow.MonthDayNanoInterval{Months: 1, Days: 2},
				arrow.MonthDayNanoInterval{Nanoseconds: int64(12 * time.Hour)}, arrow.MonthDayNanoInterval{Days: 2, Nanoseconds: int64(30 * time.Minute)},
			}
		}
	}
	for {
		f.Start.Kind = []BoundKind{UnboundedPreceding, OffsetPreceding, CurrentRow, OffsetFollowing}[r.IntN(4)]
		f.End.Kind = []BoundKind{OffsetPreceding, CurrentRow, OffsetFollowing, UnboundedFollowing}[r.IntN(4)]
		s, e := f.Start.Kind, f.End.Kind
		if (s == CurrentRow && e == OffsetPreceding) || (s == OffsetFollowing && (e == OffsetPreceding || e == CurrentRow)) {
			continue
		}
		if offsets == nil && (isOffset(s) || isOffset(e)) {
			continue
		}
		break
	}
	f.Start.Offset, f.End.Offset = nil, nil
	if isOffset(f.Start.Kind) {
		f.Start.Offset = offsets[r.IntN(len(offsets))]
	}
	if isOffset(f.End.Kind) {
		f.End.Offset = offsets[r.IntN(len(offsets))]
	}
	f.Exclude = []FrameExclude{ExcludeNoOthers, ExcludeNoOthers, ExcludeNoOthers, ExcludeCurrentRow, ExcludeGroup, ExcludeTies}[r.IntN(6)]
	return f
}

// wtSample is a non-NULL value of column c (a lag/lead default).
func wtSample(r *rand.Rand, c int) any {
	for {
		if v := genWinRows(r, 1)[0][c]; v != nil {
			return v
		}
	}
}

// genFunc draws one function with arguments of fitting columns.
func genFunc(r *rand.Rand, order []SortKey) (WindowFunc, arrow.DataType) {
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	argT := func(c int) arrow.DataType { return wtSchema.Field(c).Type }
	anyCol := r.IntN(wtSchema.NumFields())
	switch k := r.IntN(17); k {
	case 0, 1, 2:
		return WindowFunc{Func: []string{"row_number", "rank", "dense_rank"}[k]}, i64
	case 3, 4:
		return WindowFunc{Func: []string{"percent_rank", "cume_dist"}[k-3]}, f64
	case 5:
		return WindowFunc{Func: "ntile", Param: []int64{1, 2, 3, 7, 1000}[r.IntN(5)]}, i64
	case 6, 7:
		f := WindowFunc{Func: []string{"lag", "lead"}[k-6], Args: []int{anyCol},
			Param: []int64{0, 1, 1, 2, 5, -1, -3, math.MaxInt64}[r.IntN(8)], IgnoreNulls: r.IntN(3) == 0}
		switch r.IntN(3) {
		case 1:
			f.Default = wtSample(r, anyCol)
		case 2:
			if argT(anyCol).ID() == arrow.INT64 {
				f.Args = append(f.Args, 11)
			}
		}
		return f, argT(anyCol)
	case 8, 9, 10:
		f := WindowFunc{Func: []string{"first_value", "last_value", "nth_value"}[k-8], Args: []int{anyCol},
			IgnoreNulls: r.IntN(3) == 0, Frame: genFrame(r, order)}
		if f.Func == "nth_value" {
			f.Param = []int64{1, 2, 3, 50}[r.IntN(4)]
		}
		return f, argT(anyCol)
	case 11:
		f := WindowFunc{Func: "count_star", Frame: genFrame(r, order)}
		if r.IntN(2) == 0 {
			f = WindowFunc{Func: "count", Args: []int{anyCol}, Frame: f.Frame}
			f.Distinct = r.IntN(3) == 0 && (f.Frame == nil || f.Frame.Exclude == ExcludeNoOthers)
		}
		return f, i64
	case 12, 13:
		c := []int{4, 5, 6}[r.IntN(3)]
		f := WindowFunc{Func: []string{"sum", "avg"}[k-12], Args: []int{c}, Frame: genFrame(r, order)}
		f.Distinct = c != 5 && r.IntN(3) == 0 && (f.Frame == nil || f.Frame.Exclude == ExcludeNoOthers)
		switch {
		case c == 6 && f.Func == "sum":
			return f, wtBig
		case c == 6:
			return f, wtAvgD
		case c == 4 && f.Func == "sum":
			return f, i64
		}
		return f, f64
	case 14, 15:
		return WindowFunc{Func: []string{"min", "max"}[k-14], Args: []int{anyCol}, Frame: genFrame(r, order), Distinct: r.IntN(5) == 0}, argT(anyCol)
	default:
		return WindowFunc{Func: []string{"bool_and", "bool_or"}[r.IntN(2)], Args: []int{8}, Frame: genFrame(r, order)}, arrow.FixedWidthTypes.Boolean
	}
}

// genSpec draws a window and its functions, and the output schema.
func genSpec(r *rand.Rand) (WindowFuncsSpec, *arrow.Schema) {
	var spec WindowFuncsSpec
	spec.PartitionBy = [][]int{nil, {0}, {1}, {0, 1}}[r.IntN(4)]
	cands := []int{2, 3, 6, 7, 9, 10, 8}
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	for _, c := range cands[:r.IntN(3)] {
		spec.OrderBy = append(spec.OrderBy, SortKey{Col: c, Desc: r.IntN(2) == 0, NullsFirst: r.IntN(2) == 0})
	}
	fields := append([]arrow.Field(nil), wtSchema.Fields()...)
	for i := range 2 + r.IntN(6) {
		f, t := genFunc(r, spec.OrderBy)
		spec.Funcs = append(spec.Funcs, f)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("w%d", i), Type: t, Nullable: true})
	}
	return spec, arrow.NewSchema(fields, nil)
}

func specString(spec WindowFuncsSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "PARTITION BY %v ORDER BY %+v:", spec.PartitionBy, spec.OrderBy)
	for _, f := range spec.Funcs {
		fmt.Fprintf(&b, "\n  %s", f)
		if f.Default != nil {
			fmt.Fprintf(&b, " default %v", f.Default)
		}
		if f.Frame != nil {
			fmt.Fprintf(&b, " OVER %s", f.Frame)
		}
	}
	return b.String()
}

// runWindowCase runs spec over rows on every path and batch size against
// the reference answer.
func runWindowCase(t *testing.T, name string, rows []exec.Row, spec WindowFuncsSpec, out *arrow.Schema) {
	t.Helper()
	want, err := refOver(rows, spec, out)
	if err != nil {
		t.Fatalf("%s: reference: %v\n%s", name, err, specString(spec))
	}
	for _, size := range []int{1, 7, 1024} {
		for _, colIn := range []bool{false, true} {
			for _, colOn := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/size=%d/colIn=%v/colOn=%v", name, size, colIn, colOn), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					op := NewWindowFuncs(spec, out, mem)
					res := runOp(t, mem, op, []input{{wtSchema, rows}}, size, colIn, colOn)
					if ok, why := winRowsEqual(res.rows, want); !ok {
						t.Fatalf("%s\n%s", why, specString(spec))
					}
					if colOn && res.outCol != res.outBatches {
						t.Errorf("%d of %d output batches columnar with columnar output on", res.outCol, res.outBatches)
					}
					if !colOn && res.outCol != 0 {
						t.Errorf("%d output batches columnar with columnar output off", res.outCol)
					}
				})
			}
		}
	}
}

// TestWindowFuncsRandom checks random windows, frames and functions over
// random inputs (many partitions, peers, NULLs in keys and values) against
// the reference, on the row and the columnar paths, at batch sizes 1, 7
// and 1024.
func TestWindowFuncsRandom(t *testing.T) {
	cases := 150
	if testing.Short() {
		cases = 30
	}
	for seed := range uint64(cases) {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		n := r.IntN(120)
		if seed%10 == 9 {
			n = 300 + r.IntN(400)
		}
		rows := genWinRows(r, n)
		spec, out := genSpec(r)
		runWindowCase(t, fmt.Sprintf("seed=%d/n=%d", seed, n), rows, spec, out)
	}
}

// TestWindowFuncsRangeOffsets sweeps RANGE frames with offsets over every
// key type (BIGINT with extreme values, DOUBLE with NaN and ±Inf, DECIMAL,
// DATE and TIMESTAMP with month intervals around month ends), both
// directions and NULL placements, every offset on both ends.
func TestWindowFuncsRangeOffsets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := genWinRows(r, 160)
	// Dates and times crowd the ends of months, where adding a month
	// clamps (2024-01-31 + 1 month = 2024-02-29).
	days := []int{-22, -21, -20, -19, 7, 8, 9, 10, 11, 37, 38, 39, 40, 41, 70, 71, 72}
	for _, row := range rows {
		d := days[r.IntN(len(days))]
		if row[9] != nil {
			row[9] = arrow.Date32(wtEpoch.Unix()/86400 + int64(d))
		}
		if row[10] != nil {
			row[10] = arrow.Timestamp(wtEpoch.AddDate(0, 0, d).UnixMicro() + int64(r.IntN(4))*6*3600*1e6)
		}
	}
	offsets := map[int][]any{
		2:  {int64(0), int64(1), int64(3), int64(math.MaxInt64)},
		3:  {0.0, 0.5, 2.5, math.Inf(1)},
		6:  {decimal128.FromI64(0), decimal128.FromI64(99), decimal128.FromI64(2500), decimal128.FromI64(1_000_000)},
		9:  {arrow.MonthDayNanoInterval{}, arrow.MonthDayNanoInterval{Days: 1}, arrow.MonthDayNanoInterval{Months: 1}, arrow.MonthDayNanoInterval{Months: 1, Days: 1}, arrow.MonthDayNanoInterval{Nanoseconds: int64(36 * time.Hour)}},
		10: {arrow.MonthDayNanoInterval{Nanoseconds: int64(6 * time.Hour)}, arrow.MonthDayNanoInterval{Days: 1}, arrow.MonthDayNanoInterval{Months: 1}, arrow.MonthDayNanoInterval{Months: 2, Nanoseconds: 1}},
	}
	for _, col := range []int{2, 3, 6, 9, 10} {
		for _, desc := range []bool{false, true} {
			for _, nullsFirst := range []bool{false, true} {
				order := []SortKey{{Col: col, Desc: desc, NullsFirst: nullsFirst}}
				spec := WindowFuncsSpec{PartitionBy: []int{1}, OrderBy: order}
				fields := append([]arrow.Field(nil), wtSchema.Fields()...)
				for _, off := range offsets[col] {
					for _, b := range [][2]FrameBound{
						{{Kind: OffsetPreceding, Offset: off}, {Kind: OffsetFollowing, Offset: off}},
						{{Kind: OffsetPreceding, Offset: off}, {Kind: OffsetPreceding, Offset: off}},
						{{Kind: OffsetFollowing, Offset: off}, {Kind: UnboundedFollowing}},
						{{Kind: UnboundedPreceding}, {Kind: OffsetFollowing, Offset: off}},
					} {
						f := &Frame{Unit: FrameRange, Start: b[0], End: b[1]}
						spec.Funcs = append(spec.Funcs,
							WindowFunc{Func: "count_star", Frame: f},
							WindowFunc{Func: "first_value", Args: []int{4}, Frame: f})
						fields = append(fields,
							arrow.Field{Name: fmt.Sprintf("n%d", len(fields)), Type: arrow.PrimitiveTypes.Int64},
							arrow.Field{Name: fmt.Sprintf("v%d", len(fields)), Type: arrow.PrimitiveTypes.Int64, Nullable: true})
					}
				}
				name := fmt.Sprintf("%s/desc=%v/nullsFirst=%v", wtSchema.Field(col).Name, desc, nullsFirst)
				runWindowCase(t, name, rows, spec, arrow.NewSchema(fields, nil))
			}
		}
	}
}
