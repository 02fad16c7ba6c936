package ops

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// budgeted runs op under a memory budget: the harness passes
// context.Background(), and the budget travels in the context.
type budgeted struct {
	op     exec.Operator
	budget *exec.MemoryBudget
	closed func(exec.Operator)
}

func (b *budgeted) ctx(ctx context.Context) context.Context {
	return exec.WithMemoryBudget(ctx, b.budget)
}
func (b *budgeted) Kind() string                    { return b.op.Kind() }
func (b *budgeted) Capabilities() exec.Capabilities { return b.op.Capabilities() }
func (b *budgeted) Process(ctx context.Context, in int, x *exec.Batch, out exec.Emitter) error {
	return b.op.Process(b.ctx(ctx), in, x, out)
}
func (b *budgeted) ProcessColumnar(ctx context.Context, in int, x *exec.Batch, out exec.Emitter) (bool, error) {
	return b.op.(exec.ColumnarOperator).ProcessColumnar(b.ctx(ctx), in, x, out)
}
func (b *budgeted) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	return b.op.OnWatermark(b.ctx(ctx), wm, out)
}
func (b *budgeted) Finish(ctx context.Context, in int, out exec.Emitter) error {
	return b.op.Finish(b.ctx(ctx), in, out)
}
func (b *budgeted) SetColumnarOutput(on bool) {
	if s, ok := b.op.(exec.ColumnarOutputSetter); ok {
		s.SetColumnarOutput(on)
	}
}
func (b *budgeted) Close() {
	b.op.Close()
	if b.closed != nil {
		b.closed(b.op)
	}
}

// randomRows are n rows of SampleSchema over about distinct keys in k and
// s, with NULLs in every column when nulls is set.
func randomRows(seed int64, n, distinct int, nulls bool) []exec.Row {
	r := rand.New(rand.NewSource(seed))
	rows := make([]exec.Row, n)
	for i := range rows {
		k := r.Intn(distinct)
		row := exec.Row{int64(k), fmt.Sprintf("key-%d-%s", k%(distinct/2+1), strings.Repeat("x", k%7)),
			int64(r.Intn(1000) - 500), float64(r.Intn(1 << 20)), arrow.Timestamp(r.Int63n(1 << 40))}
		if nulls {
			for c := 0; c < 4; c++ {
				if r.Intn(11) == 0 {
					row[c] = nil
				}
			}
		}
		rows[i] = row
	}
	return rows
}

// spillReport reads an operator's spill counters.
func spillReport(op exec.Operator) map[string]int64 {
	out := map[string]int64{}
	if r, ok := op.(exec.Reporter); ok {
		for _, c := range r.Report().Counters {
			out[c.Name] = c.Value
		}
	}
	return out
}

// TestHashAggregateSpills: under a budget far below what the groups take,
// GROUP BY spills (and spills again inside partitions) and gives the
// reference answer on every harness variant; the spill directory is empty
// afterwards.
func TestHashAggregateSpills(t *testing.T) {
	for _, tc := range []struct {
		groups   []int
		distinct int
		limit    int64
	}{
		{[]int{0}, 1500, 64 << 10},
		{[]int{1}, 1500, 300 << 10},
		{[]int{0, 1}, 1500, 300 << 10},
		{[]int{1}, 3500, 200 << 10}, // partitions spill again
	} {
		if testing.Short() && len(tc.groups) == 1 && tc.distinct < 3000 {
			continue // -short (the -race run): the two-key and the deep case
		}
		dir := t.TempDir()
		// DISTINCT sets of the groups kept in memory may still grow after
		// the freeze: TestHashAggregateSpillsDistinct.
		aggs := sampleAggs[:len(sampleAggs)-2]
		out := aggSchema(SampleSchema, tc.groups, aggs)
		var spills, deep []int64
		runCase(t, opCase{
			name: fmt.Sprintf("group%v/distinct=%d", tc.groups, tc.distinct),
			newOp: func(mem memory.Allocator) exec.Operator {
				return &budgeted{op: NewHashAggregate(tc.groups, aggs, out, mem).AllowSpill(),
					budget: exec.NewMemoryBudget(tc.limit, dir),
					closed: func(op exec.Operator) {
						r := spillReport(op)
						spills = append(spills, r["spill files"])
						deep = append(deep, r["spill partitions"])
					}}
			},
			inputs: func(nulls bool) []input {
				return []input{{SampleSchema, randomRows(int64(tc.distinct), 4*tc.distinct, tc.distinct, nulls)}}
			},
			want: func(ins []input) []exec.Row { return refAgg(ins[0].rows, tc.groups, aggs) },
		})
		for i, n := range spills {
			if n == 0 {
				t.Errorf("group%v: run %d did not spill", tc.groups, i)
			}
		}
		if tc.distinct > 3000 {
			for i, p := range deep {
				if p <= spillFanout {
					t.Errorf("group%v: run %d: %d partitions, want partitions spilled again", tc.groups, i, p)
				}
			}
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("group%v: spill dir not empty: %v", tc.groups, ents)
		}
	}
}

// runBudgeted feeds rows to op under budget in batches of 512, columnar
// or not, and finishes it.
func runBudgeted(ctx context.Context, t *testing.T, mem memory.Allocator, op exec.Operator, budget *exec.MemoryBudget,
	in input, columnar bool) ([]exec.Row, error) {
	t.Helper()
	ctx = exec.WithMemoryBudget(ctx, budget)
	out := &capture{}
	defer out.rows()
	batches := makeBatches(t, mem, in, 512, columnar)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for _, b := range batches {
		if _, err := exec.Dispatch(ctx, op, true, 0, b, out); err != nil {
			return nil, err
		}
	}
	if err := op.Finish(ctx, 0, out); err != nil {
		return nil, err
	}
	rows, _ := out.rows()
	return rows, nil
}

// TestHashAggregateOverLimitFailsClearly: where spilling cannot help (the
// DISTINCT sets of groups kept in memory grow after the freeze; one group
// whose DISTINCT set grows)
// the error names GROUP BY and the limit, and nothing is left on disk.
func TestHashAggregateOverLimitFailsClearly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []int
		aggs   []AggSpec
		limit  int64
		want   string
	}{
		{"distinct-after-freeze", []int{0}, []AggSpec{{Func: "count", Distinct: true, Col: 1, Type: i64}}, 64 << 10, "DISTINCT"},
		{"distinct-one-group", nil, []AggSpec{{Func: "count", Distinct: true, Col: 1, Type: i64}}, 64 << 10, "one group"},
	} {
		for _, columnar := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/columnar=%v", tc.name, columnar), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				dir := t.TempDir()
				op := NewHashAggregate(tc.groups, tc.aggs, aggSchema(SampleSchema, tc.groups, tc.aggs), mem).AllowSpill()
				_, err := runBudgeted(context.Background(), t, mem, op, exec.NewMemoryBudget(tc.limit, dir),
					input{SampleSchema, distinctRows(40000)}, columnar)
				op.Close()
				var lim *exec.MemoryLimitError
				wantOp := "GROUP BY"
				if len(tc.groups) == 0 {
					wantOp = "aggregate"
				}
				if !errors.As(err, &lim) || lim.Op != wantOp || lim.Limit != tc.limit {
					t.Fatalf("err = %v, want a GROUP BY memory limit error", err)
				}
				if !strings.Contains(err.Error(), "execution.memory-limit") || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q does not name the setting and %q", err, tc.want)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("spill dir not empty: %v", ents)
				}
			})
		}
	}
}

// TestHashAggregateSpillCancel: a cancelled context stops the partition
// pass, and Close removes the spill files.
func TestHashAggregateSpillCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	aggs := sampleAggs[:len(sampleAggs)-2]
	op := NewHashAggregate([]int{1}, aggs, aggSchema(SampleSchema, []int{1}, aggs), mem).AllowSpill()
	ctx, cancel := context.WithCancel(context.Background())
	budget := exec.NewMemoryBudget(400<<10, dir)
	bctx := exec.WithMemoryBudget(ctx, budget)
	out := &capture{}
	for _, b := range makeBatches(t, mem, input{SampleSchema, randomRows(2, 100000, 50000, true)}, 512, true) {
		if _, err := exec.Dispatch(bctx, op, true, 0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if ents, _ := os.ReadDir(dir); len(ents) == 0 {
		t.Fatal("nothing spilled before the cancel")
	}
	cancel()
	if err := op.Finish(bctx, 0, out); !errors.Is(err, context.Canceled) {
		t.Errorf("Finish after cancel = %v, want context.Canceled", err)
	}
	op.Close()
	out.rows()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("spill dir not empty after cancel: %v", ents)
	}
	if budget.Used() != 0 {
		t.Errorf("budget still holds %d bytes after Close", budget.Used())
	}
}

// distinctRows are n rows over 64 keys k whose s values never repeat.
func distinctRows(n int) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		rows[i] = exec.Row{int64(i % 64), fmt.Sprintf("v%d", i), int64(i), float64(i), arrow.Timestamp(i)}
	}
	return rows
}

// TestSortSpills: under a budget of a few batches, ORDER BY writes sorted
// runs and merges them into the reference order (stable: ties keep their
// arrival order) on every harness variant, and leaves nothing on disk.
func TestSortSpills(t *testing.T) {
	for _, keys := range [][]SortKey{
		{{Col: 0}, {Col: 2, Desc: true, NullsFirst: true}},
		{{Col: 1, NullsFirst: true}},
		{{Col: 3, Desc: true}, {Col: 0}},
	} {
		dir := t.TempDir()
		var runs []int64
		runCase(t, opCase{
			name: fmt.Sprintf("%v", keys),
			newOp: func(mem memory.Allocator) exec.Operator {
				return &budgeted{op: NewSort(keys, mem), budget: exec.NewMemoryBudget(48<<10, dir),
					closed: func(op exec.Operator) { runs = append(runs, spillReport(op)["sorted runs"]) }}
			},
			inputs: func(nulls bool) []input {
				return []input{{SampleSchema, randomRows(7, 2500, 40, nulls)}}
			},
			ordered: true,
			want:    func(ins []input) []exec.Row { return refSort(ins[0].rows, keys, -1) },
		})
		for i, n := range runs {
			if n < 2 {
				t.Errorf("%v: run %d wrote %d sorted runs, want several", keys, i, n)
			}
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v: spill dir not empty: %v", keys, ents)
		}
	}
}

// joinSpillRows are n rows of refLeftSchema/refRightSchema's shape over
// about 120 keys, with NULLs in every column.
func joinSpillRows(r *rand.Rand, n int) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		row := exec.Row{int64(r.Intn(40)), []string{"a", "b", "c"}[r.Intn(3)], int64(r.Intn(1000))}
		for c := range row {
			if r.Intn(9) == 0 {
				row[c] = nil
			}
		}
		rows[i] = row
	}
	return rows
}

// TestHashJoinSpills: under a budget of a few build batches the hash join
// partitions both inputs to disk (a grace hash join) and gives the
// reference answer for every join type that can split, on every harness
// variant (probe batches arrive before, during and after the build), with
// and without a residual; nothing is left on disk.
func TestHashJoinSpills(t *testing.T) {
	types := []JoinType{Inner, Left, Right, Full, Semi, Anti}
	if testing.Short() {
		types = []JoinType{Full, Anti} // -short (the -race run): both sides padded; the probe side's absence
	}
	for _, typ := range types {
		for _, residual := range []bool{false, true} {
			spec := HashJoinSpec{Type: typ, LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}, Out: refOut(typ)}
			ref := refSpec{typ: typ, lk: spec.LeftKeys, rk: spec.RightKeys, keyed: true, nRight: 3}
			if residual {
				c := tCmp{a: 2, op: "<", b: 5}
				spec.Residual, ref.cond = c, c
			}
			dir := t.TempDir()
			var parts []int64
			runCase(t, opCase{
				name: fmt.Sprintf("type=%d/residual=%v", typ, residual),
				newOp: func(mem memory.Allocator) exec.Operator {
					return &budgeted{op: NewHashJoinSpec(spec, mem), budget: exec.NewMemoryBudget(6<<10, dir),
						closed: func(op exec.Operator) { parts = append(parts, spillReport(op)["spill partitions"]) }}
				},
				inputs: func(nulls bool) []input {
					r := rand.New(rand.NewSource(int64(typ)))
					return []input{{refLeftSchema, joinSpillRows(r, 500)}, {refRightSchema, joinSpillRows(r, 300)}}
				},
				want: func(ins []input) []exec.Row {
					rows, err := refJoinSQL(t, ref, ins[0].rows, ins[1].rows)
					if err != nil {
						t.Fatal(err)
					}
					return rows
				},
			})
			for i, p := range parts {
				if p == 0 {
					t.Errorf("type %d: run %d did not spill", typ, i)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("type %d: spill dir not empty: %v", typ, ents)
			}
		}
	}
}

// TestNullAwareJoinOverLimitFailsClearly: NOT IN cannot be split; over its
// limit it fails naming the join build and the limit.
func TestNullAwareJoinOverLimitFailsClearly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	spec := HashJoinSpec{Type: Anti, NullAware: true, LeftKeys: []int{0}, RightKeys: []int{0}, Out: refOut(Anti)}
	op := NewHashJoinSpec(spec, mem)
	defer op.Close()
	r := rand.New(rand.NewSource(3))
	ctx := exec.WithMemoryBudget(context.Background(), exec.NewMemoryBudget(4<<10, t.TempDir()))
	var err error
	for _, b := range makeBatches(t, mem, input{refRightSchema, joinSpillRows(r, 2000)}, 100, true) {
		if err == nil {
			_, err = exec.Dispatch(ctx, op, true, 1, b, discard{})
		}
		b.Release()
	}
	var lim *exec.MemoryLimitError
	if !errors.As(err, &lim) || lim.Op != "JOIN build" || !strings.Contains(err.Error(), "NOT IN") {
		t.Fatalf("err = %v, want the JOIN build memory limit error naming NOT IN", err)
	}
}

// TestPartialAggregateFlushes: a two-phase GROUP BY's first phase under a
// small budget emits its groups early instead of spilling; the second
// phase over its output gives the reference answer.
func TestPartialAggregateFlushes(t *testing.T) {
	aggs := []AggSpec{{Func: "count_star", Col: -1, Type: i64}, {Func: "sum", Col: 2, Type: i64}, {Func: "max", Col: 1, Type: str}}
	final := []AggSpec{{Func: "sum", Col: 1, Type: i64}, {Func: "sum", Col: 2, Type: i64}, {Func: "max", Col: 3, Type: str}}
	out := aggSchema(SampleSchema, []int{0}, aggs)
	for _, columnar := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rows := randomRows(9, 20000, 5000, true)
		partial := NewHashAggregate([]int{0}, aggs, out, mem).PartialFlush()
		partial.SetColumnarOutput(columnar)
		got, err := runBudgeted(context.Background(), t, mem, partial, exec.NewMemoryBudget(128<<10, t.TempDir()), input{SampleSchema, rows}, columnar)
		if err != nil {
			t.Fatal(err)
		}
		flushes := spillReport(partial)["early flushes"]
		partial.Close()
		if flushes == 0 {
			t.Errorf("columnar=%v: no early flush", columnar)
		}
		if len(got) <= 5000 {
			t.Errorf("columnar=%v: %d partial rows, want keys repeated across flushes", columnar, len(got))
		}
		merged := refAgg(got, []int{0}, final)
		if want := refAgg(rows, []int{0}, aggs); !rowsEqual(sortedRows(merged), sortedRows(want)) {
			t.Errorf("columnar=%v: merged partials %v\nwant %v", columnar, trunc(sortedRows(merged)), trunc(sortedRows(want)))
		}
		mem.AssertSize(t, 0)
	}
}
