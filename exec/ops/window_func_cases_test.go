package ops

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// windowRows runs spec over rows on every path (row and columnar input,
// columnar output on and off) at batch sizes 1, 7 and 1024, requires all
// of them to agree, and returns the answer. Results are given types.
func windowRows(t *testing.T, in *arrow.Schema, rows []exec.Row, spec WindowFuncsSpec, types ...arrow.DataType) []exec.Row {
	t.Helper()
	fields := append([]arrow.Field(nil), in.Fields()...)
	for i, typ := range types {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("w%d", i), Type: typ, Nullable: true})
	}
	out := arrow.NewSchema(fields, nil)
	var first []exec.Row
	for _, size := range []int{1, 7, 1024} {
		for _, colIn := range []bool{false, true} {
			for _, colOn := range []bool{false, true} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				res := runOp(t, mem, NewWindowFuncs(spec, out, mem), []input{{in, rows}}, size, colIn, colOn)
				mem.AssertSize(t, 0)
				if first == nil {
					first = res.rows
				} else if ok, why := winRowsEqual(res.rows, first); !ok {
					t.Fatalf("size=%d colIn=%v colOn=%v differs from the row path: %s", size, colIn, colOn, why)
				}
			}
		}
	}
	return first
}

// byKey maps a row's key column to its trailing results.
func byKey(rows []exec.Row, key, from int) map[any][]any {
	m := map[any][]any{}
	for _, r := range rows {
		m[r[key]] = append([]any(nil), r[from:]...)
	}
	return m
}

var (
	i64T = arrow.PrimitiveTypes.Int64
	f64T = arrow.PrimitiveTypes.Float64
)

// empsalary is the table of PostgreSQL's window function tutorial
// (https://www.postgresql.org/docs/current/tutorial-window.html), in its
// insertion order.
var empSchema = arrow.NewSchema([]arrow.Field{
	{Name: "depname", Type: arrow.BinaryTypes.String},
	{Name: "empno", Type: i64T},
	{Name: "salary", Type: i64T},
}, nil)

var empRows = []exec.Row{
	{"develop", int64(11), int64(5200)}, {"develop", int64(7), int64(4200)}, {"develop", int64(9), int64(4500)},
	{"develop", int64(8), int64(6000)}, {"develop", int64(10), int64(5200)}, {"personnel", int64(5), int64(3500)},
	{"personnel", int64(2), int64(3900)}, {"sales", int64(3), int64(4800)}, {"sales", int64(1), int64(5000)},
	{"sales", int64(4), int64(4800)},
}

// checkTails compares each row's values from column from on, printed.
func checkTails(t *testing.T, rows []exec.Row, from int, want string) {
	t.Helper()
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprint(r[from:]))
	}
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

func checkByKey(t *testing.T, got map[any][]any, want map[int64][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for k, w := range want {
		if ok, why := winRowsEqual([]exec.Row{got[k]}, []exec.Row{w}); !ok {
			t.Errorf("key %d: %s", k, why)
		}
	}
}

// The tutorial's avg(salary) OVER (PARTITION BY depname) and
// sum(salary) OVER (ORDER BY salary) / OVER ().
func TestWindowFuncsPostgresTutorial(t *testing.T) {
	rows := windowRows(t, empSchema, empRows, WindowFuncsSpec{PartitionBy: []int{0}, Funcs: []WindowFunc{
		{Func: "avg", Args: []int{2}},
	}}, f64T)
	checkByKey(t, byKey(rows, 1, 3), map[int64][]any{
		11: {5020.0}, 7: {5020.0}, 9: {5020.0}, 8: {5020.0}, 10: {5020.0},
		5: {3700.0}, 2: {3700.0}, 3: {14600.0 / 3}, 1: {14600.0 / 3}, 4: {14600.0 / 3},
	})
	rows = windowRows(t, empSchema, empRows, WindowFuncsSpec{OrderBy: []SortKey{{Col: 2}}, Funcs: []WindowFunc{
		{Func: "sum", Args: []int{2}},
	}}, i64T)
	var sums []any
	for _, r := range rows {
		sums = append(sums, r[2], r[3])
	}
	want := []any{int64(3500), int64(3500), int64(3900), int64(7400), int64(4200), int64(11600), int64(4500), int64(16100),
		int64(4800), int64(25700), int64(4800), int64(25700), int64(5000), int64(30700), int64(5200), int64(41100),
		int64(5200), int64(41100), int64(6000), int64(47100)}
	if fmt.Sprint(sums) != fmt.Sprint(want) {
		t.Errorf("sum OVER (ORDER BY salary): got %v\nwant %v", sums, want)
	}
	rows = windowRows(t, empSchema, empRows, WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{2}}}}, i64T)
	for _, r := range rows {
		if r[3] != int64(47100) {
			t.Errorf("sum OVER (): %v", r)
		}
	}
}

// rank has gaps after ties, dense_rank none; percent_rank and cume_dist
// follow (rank-1)/(n-1) and (rows up to the last peer)/n.
func TestWindowFuncsRankTies(t *testing.T) {
	rows := windowRows(t, empSchema, empRows, WindowFuncsSpec{
		PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 2, Desc: true, NullsFirst: true}},
		Funcs: []WindowFunc{{Func: "rank"}, {Func: "dense_rank"}, {Func: "percent_rank"}, {Func: "cume_dist"}, {Func: "row_number"}},
	}, i64T, i64T, f64T, f64T, i64T)
	checkByKey(t, byKey(rows, 1, 3), map[int64][]any{
		8:  {int64(1), int64(1), 0.0, 0.2, int64(1)},
		11: {int64(2), int64(2), 0.25, 0.6, int64(2)}, // 11 arrived before 10
		10: {int64(2), int64(2), 0.25, 0.6, int64(3)},
		9:  {int64(4), int64(3), 0.75, 0.8, int64(4)},
		7:  {int64(5), int64(4), 1.0, 1.0, int64(5)},
		2:  {int64(1), int64(1), 0.0, 0.5, int64(1)},
		5:  {int64(2), int64(2), 1.0, 1.0, int64(2)},
		1:  {int64(1), int64(1), 0.0, 1.0 / 3, int64(1)},
		3:  {int64(2), int64(2), 0.5, 1.0, int64(2)},
		4:  {int64(2), int64(2), 0.5, 1.0, int64(3)},
	})
}

// lag(salary, 1, 0) and lead(salary, 2, -1): the default where the offset
// leaves the partition.
func TestWindowFuncsLagLeadDefault(t *testing.T) {
	rows := windowRows(t, empSchema, empRows, WindowFuncsSpec{
		PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 1}},
		Funcs: []WindowFunc{
			{Func: "lag", Args: []int{2}, Param: 1, Default: int64(0)},
			{Func: "lead", Args: []int{2}, Param: 2, Default: int64(-1)},
			{Func: "lag", Args: []int{2}, Param: 1}, // default NULL
		},
	}, i64T, i64T, i64T)
	checkByKey(t, byKey(rows, 1, 3), map[int64][]any{
		7: {int64(0), int64(4500), nil}, 8: {int64(4200), int64(5200), int64(4200)},
		9: {int64(6000), int64(5200), int64(6000)}, 10: {int64(4500), int64(-1), int64(4500)},
		11: {int64(5200), int64(-1), int64(5200)},
		2:  {int64(0), int64(-1), nil}, 5: {int64(3900), int64(-1), int64(3900)},
		1: {int64(0), int64(4800), nil}, 3: {int64(5000), int64(-1), int64(5000)}, 4: {int64(4800), int64(-1), int64(4800)},
	})
}

// ntile deals 10 rows into 3 buckets of 4, 3, 3 and into 4 of 3, 3, 2, 2;
// more buckets than rows gives every row its own.
func TestWindowFuncsNtileUneven(t *testing.T) {
	rows := windowRows(t, empSchema, empRows, WindowFuncsSpec{
		OrderBy: []SortKey{{Col: 1}},
		Funcs:   []WindowFunc{{Func: "ntile", Param: 3}, {Func: "ntile", Param: 4}, {Func: "ntile", Param: 100}},
	}, i64T, i64T, i64T)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%v:%v/%v/%v", r[1], r[3], r[4], r[5]))
	}
	want := "1:1/1/1 2:1/1/2 3:1/1/3 4:1/2/4 5:2/2/5 7:2/2/6 8:2/3/7 9:3/3/8 10:3/4/9 11:3/4/10"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// With ORDER BY the default frame ends at the current row's last peer, so
// last_value returns the peer group's last row (PostgreSQL's manual warns
// about exactly this); a whole-partition frame gives the partition's last.
func TestWindowFuncsLastValueDefaultFrame(t *testing.T) {
	whole := &Frame{Unit: FrameRows, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}}
	rows := windowRows(t, empSchema, empRows, WindowFuncsSpec{
		OrderBy: []SortKey{{Col: 2}},
		Funcs: []WindowFunc{
			{Func: "last_value", Args: []int{1}},
			{Func: "first_value", Args: []int{1}},
			{Func: "last_value", Args: []int{1}, Frame: whole},
			{Func: "nth_value", Args: []int{1}, Param: 6},
		},
	}, i64T, i64T, i64T, i64T)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%v:%v/%v/%v/%v", r[1], r[3], r[4], r[5], r[6]))
	}
	// Salaries ascending; ties (3, 4 at 4800; 11, 10 at 5200) in arrival order.
	want := "5:5/5/8/<nil> 2:2/5/8/<nil> 7:7/5/8/<nil> 9:9/5/8/<nil> 3:4/5/8/4 4:4/5/8/4 1:1/5/8/4 11:10/5/8/4 10:10/5/8/4 8:8/5/8/4"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

var xySchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: i64T, Nullable: true},
	{Name: "y", Type: i64T, Nullable: true},
}, nil)

// PostgreSQL's regression test (window.sql): RANGE 2 PRECEDING AND 2
// FOLLOWING over x with NULLs first: a NULL row's frame is the NULLs, a
// value's frame never holds them.
func TestWindowFuncsRangeNullsPostgres(t *testing.T) {
	in := []exec.Row{{int64(1), int64(1)}, {int64(2), int64(2)}, {int64(3), int64(3)}, {int64(4), int64(4)},
		{int64(5), int64(5)}, {nil, int64(42)}, {nil, int64(43)}}
	f := &Frame{Unit: FrameRange, Start: FrameBound{Kind: OffsetPreceding, Offset: int64(2)}, End: FrameBound{Kind: OffsetFollowing, Offset: int64(2)}}
	run := func(k SortKey) string {
		rows := windowRows(t, xySchema, in, WindowFuncsSpec{OrderBy: []SortKey{k}, Funcs: []WindowFunc{
			{Func: "first_value", Args: []int{1}, Frame: f}, {Func: "last_value", Args: []int{1}, Frame: f},
		}}, i64T, i64T)
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%v:%v-%v", r[1], r[2], r[3]))
		}
		return strings.Join(got, " ")
	}
	if got, want := run(SortKey{Col: 0, NullsFirst: true}), "42:42-43 43:42-43 1:1-3 2:1-4 3:1-5 4:2-5 5:3-5"; got != want {
		t.Errorf("ASC NULLS FIRST: got  %s\nwant %s", got, want)
	}
	if got, want := run(SortKey{Col: 0, Desc: true}), "5:5-3 4:5-2 3:5-1 2:4-1 1:3-1 42:42-43 43:42-43"; got != want {
		t.Errorf("DESC NULLS LAST: got  %s\nwant %s", got, want)
	}
}

// EXCLUDE CURRENT ROW / GROUP / TIES and a GROUPS frame, by hand: v is
// 1..5 and g groups them as {1,2} {3,4} {5}.
func TestWindowFuncsExcludeAndGroups(t *testing.T) {
	in := []exec.Row{{int64(1), int64(1)}, {int64(1), int64(2)}, {int64(2), int64(3)}, {int64(2), int64(4)}, {int64(3), int64(5)}}
	all := func(ex FrameExclude) *Frame {
		return &Frame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}, Exclude: ex}
	}
	groups := &Frame{Unit: FrameGroups, Start: FrameBound{Kind: OffsetPreceding, Offset: int64(1)}, End: FrameBound{Kind: CurrentRow}}
	rows := windowRows(t, xySchema, in, WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{
		{Func: "sum", Args: []int{1}, Frame: all(ExcludeCurrentRow)},
		{Func: "sum", Args: []int{1}, Frame: all(ExcludeGroup)},
		{Func: "sum", Args: []int{1}, Frame: all(ExcludeTies)},
		{Func: "sum", Args: []int{1}, Frame: groups},
		{Func: "max", Args: []int{1}, Frame: all(ExcludeTies)},
	}}, i64T, i64T, i64T, i64T, i64T)
	checkTails(t, rows, 2, "[14 12 13 3 5] [13 12 14 3 5] [12 8 11 10 5] [11 8 12 10 5] [10 10 15 12 5]")
}

// IGNORE NULLS skips NULL values as if their rows did not exist.
func TestWindowFuncsIgnoreNulls(t *testing.T) {
	in := []exec.Row{{int64(0), int64(1)}, {int64(1), nil}, {int64(2), nil}, {int64(3), int64(4)}, {int64(4), nil}, {int64(5), int64(6)}}
	near := &Frame{Unit: FrameRows, Start: FrameBound{Kind: OffsetPreceding, Offset: int64(1)}, End: FrameBound{Kind: OffsetFollowing, Offset: int64(1)}}
	rows := windowRows(t, xySchema, in, WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{
		{Func: "lag", Args: []int{1}, Param: 1, IgnoreNulls: true},
		{Func: "lead", Args: []int{1}, Param: 1, IgnoreNulls: true},
		{Func: "first_value", Args: []int{1}, Frame: near, IgnoreNulls: true},
		{Func: "last_value", Args: []int{1}, Frame: near, IgnoreNulls: true},
		{Func: "lag", Args: []int{1}, Param: 2, IgnoreNulls: true, Default: int64(-9)},
	}}, i64T, i64T, i64T, i64T, i64T)
	checkTails(t, rows, 2, "[<nil> 4 1 1 -9] [1 4 1 1 -9] [1 4 4 4 -9] [1 6 4 4 -9] [4 6 4 6 1] [4 <nil> 6 6 1]")
}

// A frame's sum is exact: a sliding frame fits BIGINT although the running
// total of the partition does not, and a frame that does not fit fails
// naming the function.
func TestWindowFuncsSumOverflow(t *testing.T) {
	m := int64(math.MaxInt64)
	in := []exec.Row{{int64(0), m}, {int64(1), m}, {int64(2), -m}, {int64(3), -m}}
	cur := &Frame{Unit: FrameRows, Start: FrameBound{Kind: CurrentRow}, End: FrameBound{Kind: CurrentRow}}
	rows := windowRows(t, xySchema, in, WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{
		{Func: "sum", Args: []int{1}, Frame: cur},
		{Func: "avg", Args: []int{1}},
	}}, i64T, f64T)
	checkTails(t, rows, 2, fmt.Sprintf("[%d %v] [%d %v] [%d %v] [%d %v]", m, float64(m), m, float64(m), -m, float64(m)/3, -m, 0.0))
	for _, colIn := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		out := arrow.NewSchema(append(xySchema.Fields(), arrow.Field{Name: "s", Type: i64T, Nullable: true}), nil)
		err := runWindowErr(t, mem, NewWindowFuncs(WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{{Func: "sum", Args: []int{1}}}}, out, mem),
			xySchema, in, colIn)
		if err == nil || !strings.Contains(err.Error(), "sum($1)") || !strings.Contains(err.Error(), "BIGINT out of range") {
			t.Errorf("colIn=%v: err = %v, want a BIGINT overflow naming sum($1)", colIn, err)
		}
		mem.AssertSize(t, 0)
	}
	// DECIMAL(38,2): the largest values overflow 38 digits together.
	dec := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	big := decimal128.GetMaxValue(38)
	dSchema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: i64T}, {Name: "d", Type: dec}}, nil)
	dIn := []exec.Row{{int64(0), big}, {int64(1), big}, {int64(2), big.Negate()}}
	rows = windowRows(t, dSchema, dIn, WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{
		{Func: "sum", Args: []int{1}, Frame: cur},
	}}, dec)
	if rows[2][2] != big.Negate() {
		t.Errorf("single-row frame: %v", rows[2][2])
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	out := arrow.NewSchema(append(dSchema.Fields(), arrow.Field{Name: "s", Type: dec, Nullable: true}), nil)
	err := runWindowErr(t, mem, NewWindowFuncs(WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{{Func: "sum", Args: []int{1}}}}, out, mem), dSchema, dIn, true)
	if err == nil || !strings.Contains(err.Error(), "DECIMAL out of range") {
		t.Errorf("err = %v, want a DECIMAL overflow", err)
	}
	mem.AssertSize(t, 0)
}

// runWindowErr feeds rows in one batch and finishes, returning the error.
func runWindowErr(t *testing.T, mem memory.Allocator, op *WindowFuncs, in *arrow.Schema, rows []exec.Row, colIn bool) error {
	t.Helper()
	defer op.Close()
	op.SetColumnarOutput(colIn)
	out := &capture{}
	defer out.rows()
	for _, b := range makeBatches(t, mem, input{in, rows}, 1024, colIn) {
		_, err := exec.Dispatch(context.Background(), op, true, 0, b, out)
		b.Release()
		if err != nil {
			return err
		}
	}
	return op.Finish(context.Background(), 0, out)
}

// Configurations SQL rejects fail with PostgreSQL's reasons.
func TestWindowFuncsErrors(t *testing.T) {
	rng := func(s, e FrameBound) *Frame { return &Frame{Unit: FrameRange, Start: s, End: e} }
	rows := func(s, e FrameBound) *Frame { return &Frame{Unit: FrameRows, Start: s, End: e} }
	p := func(off any) FrameBound { return FrameBound{Kind: OffsetPreceding, Offset: off} }
	cr, uf, up := FrameBound{Kind: CurrentRow}, FrameBound{Kind: UnboundedFollowing}, FrameBound{Kind: UnboundedPreceding}
	for _, tc := range []struct {
		spec WindowFuncsSpec
		typ  arrow.DataType
		want string
	}{
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "ntile", Param: 0}}}, i64T, "ntile must be greater than zero"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "nth_value", Args: []int{1}, Param: 0}}}, i64T, "nth_value must be greater than zero"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "median", Args: []int{1}}}}, i64T, "unknown window function"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}}}}, arrow.BinaryTypes.String, "cannot give"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "count", Args: []int{1}}}}, f64T, "gives int64"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rows(uf, cr)}}}, i64T, "frame start cannot be UNBOUNDED FOLLOWING"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rows(cr, up)}}}, i64T, "frame end cannot be UNBOUNDED PRECEDING"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rows(cr, p(int64(1)))}}}, i64T, "frame starting from current row cannot have preceding rows"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rows(p(int64(-1)), cr)}}}, i64T, "must not be negative"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: &Frame{Unit: FrameGroups, Start: up, End: cr}}}}, i64T, "GROUPS mode requires an ORDER BY"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rng(p(int64(1)), cr)}}}, i64T, "requires exactly one ORDER BY column"},
		{WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rng(p(int64(-2)), cr)}}}, i64T, "invalid preceding or following size"},
		{WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{{Func: "sum", Args: []int{1}, Frame: rng(p(1.5), cr)}}}, i64T, "does not fit an integer key"},
		{WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{{Func: "first_value", Args: []int{1}, IgnoreNulls: true}, {Func: "rank", IgnoreNulls: true}}}, i64T, "IGNORE NULLS applies to"},
		{WindowFuncsSpec{Funcs: []WindowFunc{{Func: "lag", Args: []int{1}, Param: 1, Default: "x"}}}, i64T, "default"},
		{WindowFuncsSpec{PartitionBy: []int{7}, Funcs: []WindowFunc{{Func: "rank"}}}, i64T, "PARTITION BY column 7 out of range"},
	} {
		fields := append([]arrow.Field(nil), xySchema.Fields()...)
		for i := range tc.spec.Funcs {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("w%d", i), Type: tc.typ, Nullable: true})
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		err := runWindowErr(t, mem, NewWindowFuncs(tc.spec, arrow.NewSchema(fields, nil), mem), xySchema, []exec.Row{{int64(1), int64(2)}}, true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", specString(tc.spec), err, tc.want)
		}
		mem.AssertSize(t, 0)
	}
	// A RANGE offset over a VARCHAR key.
	sSchema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "w", Type: i64T}}, nil)
	op := NewWindowFuncs(WindowFuncsSpec{OrderBy: []SortKey{{Col: 0}}, Funcs: []WindowFunc{
		{Func: "count_star", Frame: rng(p(int64(1)), cr)}}}, sSchema, memory.NewGoAllocator())
	if err := op.Finish(context.Background(), 0, &capture{}); err == nil || !strings.Contains(err.Error(), "is not supported (numeric, DATE or TIMESTAMP keys)") {
		t.Errorf("RANGE offset over VARCHAR: %v", err)
	}
}

// Columnar input with columnar output on runs without materialising a
// single batch, and leaves in born-columnar chunks of at most 8192 rows.
func TestWindowFuncsColumnarFires(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sliding := &Frame{Unit: FrameRows, Start: FrameBound{Kind: OffsetPreceding, Offset: int64(10)}, End: FrameBound{Kind: CurrentRow}}
	spec := WindowFuncsSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 4}}, Funcs: []WindowFunc{
		{Func: "row_number"}, {Func: "sum", Args: []int{2}, Frame: sliding}, {Func: "max", Args: []int{1}, Frame: sliding},
		{Func: "lag", Args: []int{1}, Param: 1, Default: "none"}, {Func: "avg", Args: []int{3}},
	}}
	out := arrow.NewSchema(append(SampleSchema.Fields(),
		arrow.Field{Name: "rn", Type: i64T}, arrow.Field{Name: "s", Type: i64T, Nullable: true},
		arrow.Field{Name: "m", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "l", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "a", Type: f64T, Nullable: true}), nil)
	rows := sampleRows(20000, true)
	before := exec.Global.BatchesMaterialized.Load()
	res := runOp(t, mem, NewWindowFuncs(spec, out, mem), []input{{SampleSchema, rows}}, 1024, true, true)
	if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
		t.Errorf("%d batches materialised", d)
	}
	if res.columnarIn != 20 {
		t.Errorf("columnar hook took %d of 20 batches", res.columnarIn)
	}
	if res.outCol != 3 || res.outBatches != 3 {
		t.Errorf("%d of %d output batches columnar, want 3 of 3", res.outCol, res.outBatches)
	}
	// The row path (checked against the reference elsewhere; the O(n^2)
	// reference is too slow for 20000 rows) must agree.
	rowRes := runOp(t, mem, NewWindowFuncs(spec, out, mem), []input{{SampleSchema, rows}}, 1024, false, false)
	if ok, why := winRowsEqual(res.rows, rowRes.rows); !ok {
		t.Error(why)
	}
}

// Row and columnar batches mixed in one input keep their arrival order:
// ties come out as they came in, as on either path alone.
func TestWindowFuncsMixedInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	spec := WindowFuncsSpec{PartitionBy: []int{1}, OrderBy: []SortKey{{Col: 2}}, Funcs: []WindowFunc{
		{Func: "row_number"}, {Func: "first_value", Args: []int{3}}}}
	out := arrow.NewSchema(append(SampleSchema.Fields(), arrow.Field{Name: "rn", Type: i64T}, arrow.Field{Name: "fv", Type: f64T, Nullable: true}), nil)
	rows := sampleRows(500, true)
	for _, colOn := range []bool{false, true} {
		op := NewWindowFuncs(spec, out, mem)
		op.SetColumnarOutput(colOn)
		c := &capture{}
		for i, b := range makeBatches(t, mem, input{SampleSchema, rows}, 37, true) {
			if i%3 == 1 {
				rb := exec.NewRowBatch(SampleSchema, exec.DecodeRows(b.Record()))
				b.Release()
				b = rb
			}
			if _, err := exec.Dispatch(context.Background(), op, true, 0, b, c); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := op.Finish(context.Background(), 0, c); err != nil {
			t.Fatal(err)
		}
		op.Close()
		got, _ := c.rows()
		want, _ := refOver(rows, spec, out)
		if ok, why := winRowsEqual(got, want); !ok {
			t.Errorf("colOn=%v: %s", colOn, why)
		}
	}
}

// Watermarks are held until the output has left; an empty input emits
// nothing but the watermark.
func TestWindowFuncsWatermarkAndEmpty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := arrow.NewSchema(append(xySchema.Fields(), arrow.Field{Name: "rn", Type: i64T}), nil)
	spec := WindowFuncsSpec{Funcs: []WindowFunc{{Func: "row_number"}}}
	ctx := context.Background()
	for _, n := range []int{0, 3} {
		op := NewWindowFuncs(spec, out, mem)
		c := &capture{}
		for _, b := range makeBatches(t, mem, input{xySchema, []exec.Row{{int64(1), nil}, {nil, nil}, {int64(2), int64(3)}}[:n]}, 2, true) {
			if _, err := exec.Dispatch(ctx, op, true, 0, b, c); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := op.OnWatermark(ctx, 77, c); err != nil {
			t.Fatal(err)
		}
		if len(c.wms) != 0 || len(c.batches) != 0 {
			t.Fatalf("n=%d: emitted before Finish", n)
		}
		if err := op.Finish(ctx, 0, c); err != nil {
			t.Fatal(err)
		}
		op.Close()
		got, _ := c.rows()
		if len(got) != n || len(c.wms) != 1 || c.wms[0] != 77 {
			t.Errorf("n=%d: %d rows, watermarks %v", n, len(got), c.wms)
		}
	}
}

// A dictionary-encoded VARCHAR column (as a Parquet scan hands it out) is
// decoded on arrival: the output carries the declared type.
func TestWindowFuncsDictionaryInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := sampleRows(300, true)
	dict := testDict(mem, []string{"s3", "s1", "<null>", "s0", "s2", "s1"})
	defer dict.Release()
	out := arrow.NewSchema(append(SampleSchema.Fields(), arrow.Field{Name: "m", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "r", Type: i64T}), nil)
	spec := WindowFuncsSpec{PartitionBy: []int{1}, OrderBy: []SortKey{{Col: 2}}, Funcs: []WindowFunc{
		{Func: "max", Args: []int{1}}, {Func: "rank"}}}
	op := NewWindowFuncs(spec, out, mem)
	op.SetColumnarOutput(true)
	c := &capture{}
	for start := 0; start < len(rows); start += 100 {
		part := rows[start : start+100]
		rec, err := exec.EncodeRows(mem, SampleSchema, part)
		if err != nil {
			t.Fatal(err)
		}
		cols := recordColumns(rec)
		codes := dictColumn(t, mem, dict, part, 1)
		cols[1] = array.NewDictionaryArray(dictStrType, codes, dict)
		codes.Release()
		fields := append([]arrow.Field(nil), SampleSchema.Fields()...)
		fields[1].Type = dictStrType
		drec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(part)))
		cols[1].Release()
		rec.Release()
		b := exec.NewColumnarBatch(drec)
		if _, err := exec.Dispatch(context.Background(), op, true, 0, b, c); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := op.Finish(context.Background(), 0, c); err != nil {
		t.Fatal(err)
	}
	op.Close()
	for _, b := range c.batches {
		if !arrow.TypeEqual(b.Record().Column(1).DataType(), arrow.BinaryTypes.String) {
			t.Errorf("column s is %s", b.Record().Column(1).DataType())
		}
	}
	got, _ := c.rows()
	want, _ := refOver(rows, spec, out)
	if ok, why := winRowsEqual(got, want); !ok {
		t.Error(why)
	}
}
