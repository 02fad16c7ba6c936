package ops

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func streamJoin(typ JoinType, lk, rk []int, out *arrow.Schema, mem memory.Allocator) *StreamJoin {
	return NewStreamJoin(StreamJoinSpec{Type: typ, LeftKeys: lk, RightKeys: rk, LeftOp: -1, RightOp: -1, Out: out}, mem)
}

// changelogSchema puts a row-kind column before s's fields.
func changelogSchema(s *arrow.Schema) *arrow.Schema {
	return arrow.NewSchema(append([]arrow.Field{{Name: "op", Type: str}}, s.Fields()...), nil)
}

// applyChangelog applies +I/+U (add) and -U/-D (remove one equal row) and
// returns the rows left, without their kind.
func applyChangelog(t *testing.T, rows []exec.Row) []exec.Row {
	t.Helper()
	var table []exec.Row
	for _, r := range rows {
		switch r[0] {
		case OpInsert, OpUpdateAfter:
			table = append(table, r[1:])
		case OpDelete, OpUpdateBefore:
			found := false
			for i, x := range table {
				if reflect.DeepEqual(x, r[1:]) {
					table = append(table[:i], table[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("changelog retracts %v, which is not in the table", r)
			}
		default:
			t.Fatalf("row kind %v", r[0])
		}
	}
	return table
}

// refFull is a nested-loop FULL join: refJoin's LEFT join plus the right
// rows nothing matched, padded on the left.
func refFull(left, right []exec.Row, lk, rk []int, nLeft int) []exec.Row {
	out := refJoin(Left, left, right, lk, rk)
	for _, r := range right {
		if len(refJoin(Inner, left, []exec.Row{r}, lk, rk)) == 0 {
			out = append(out, append(make(exec.Row, nLeft), r...))
		}
	}
	return out
}

func TestStreamJoinInner(t *testing.T) {
	for _, keys := range [][2][]int{{{0}, {0}}, {{1}, {1}}, {{0, 1}, {0, 1}}} {
		lk, rk := keys[0], keys[1]
		runCase(t, opCase{
			name:  fmt.Sprintf("keys%v=%v", lk, rk),
			newOp: func(mem memory.Allocator) exec.Operator { return streamJoin(Inner, lk, rk, joinSchema(), mem) },
			inputs: func(nulls bool) []input {
				return []input{{SampleSchema, sampleRows(60, nulls)}, {buildSchema, buildRows(12, nulls)}}
			},
			want: func(ins []input) []exec.Row { return refJoin(Inner, ins[0].rows, ins[1].rows, lk, rk) },
		})
	}
}

// TestStreamJoinBornColumnar: with columnar input and output allowed, the
// join's output batches are records (and no input batch was decoded:
// runOp checks the counters).
func TestStreamJoinBornColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ins := []input{{SampleSchema, sampleRows(1200, false)}, {buildSchema, buildRows(60, false)}}
	j := streamJoin(Inner, []int{0}, []int{0}, joinSchema(), mem)
	res := runOp(t, mem, j, ins, 512, true, true)
	if res.outCol == 0 || res.outCol != res.outBatches {
		t.Errorf("%d of %d output batches columnar, want all", res.outCol, res.outBatches)
	}
	if !rowsEqual(sortedRows(res.rows), sortedRows(refJoin(Inner, ins[0].rows, ins[1].rows, []int{0}, []int{0}))) {
		t.Errorf("columnar output differs from the reference join")
	}
}

// With size 5 the pairs of a batch also come out in chunks of 3, so a
// padded row's retraction and its first match can fall in different
// batches: the changelog must still apply to the reference.
func TestStreamJoinOuterChangelog(t *testing.T) {
	for _, typ := range []JoinType{Left, Full} {
		for _, size := range []int{1, 5, 1024} {
			for _, col := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/size=%d/columnar=%v", typ, size, col), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					ins := []input{{SampleSchema, sampleRows(50, true)}, {buildSchema, buildRows(14, true)}}
					j := streamJoin(typ, []int{0}, []int{0}, changelogSchema(joinSchema()), mem)
					if size == 5 {
						j.setPairChunk(3)
					}
					res := runOp(t, mem, j, ins, size, col, col)
					if res.outCol != 0 {
						t.Errorf("an outer join emitted %d columnar batches; its changelog is rows", res.outCol)
					}
					got := applyChangelog(t, res.rows)
					want := refJoin(Left, ins[0].rows, ins[1].rows, []int{0}, []int{0})
					if typ == Full {
						want = refFull(ins[0].rows, ins[1].rows, []int{0}, []int{0}, SampleSchema.NumFields())
					}
					if !rowsEqual(sortedRows(got), sortedRows(want)) {
						t.Errorf("applied changelog has %d rows %v\nwant %d %v", len(got), trunc(sortedRows(got)), len(want), trunc(sortedRows(want)))
					}
					retracted := 0
					for _, r := range res.rows {
						if r[0] == OpDelete {
							retracted++
						}
					}
					if retracted == 0 {
						t.Errorf("no padded row was ever retracted: the test does not exercise late matches")
					}
				})
			}
		}
	}
}

// timedSchema: (k BIGINT, tag VARCHAR, t TIMESTAMP(3)).
var timedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: i64, Nullable: true},
	{Name: "tag", Type: str, Nullable: true},
	{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
}, nil)

// timedRows are n rows whose times advance ~100 ms a row with up to
// jitter ms of disorder; late adds rows far behind.
func timedRows(rng *rand.Rand, n int, side string, jitter int64) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		ms := int64(i)*100 + rng.Int63n(jitter+1)
		rows[i] = exec.Row{int64(rng.Intn(8)), fmt.Sprintf("%s%d", side, i), arrow.Timestamp(ms)}
	}
	return rows
}

// driveTimed feeds both inputs in random interleaving, batch by batch,
// with the watermark each side's assigner would emit (max time - delay,
// combined by minimum), then ends both.
func driveTimed(t *testing.T, mem memory.Allocator, j *StreamJoin, rng *rand.Rand, left, right []exec.Row, delayMs int64, columnar bool) (rows []exec.Row, peakState int) {
	t.Helper()
	ctx := context.Background()
	out := &capture{}
	ins := [2][]exec.Row{left, right}
	pos := [2]int{}
	maxT := [2]int64{-1 << 62, -1 << 62}
	for pos[0] < len(left) || pos[1] < len(right) {
		s := rng.Intn(2)
		if pos[s] == len(ins[s]) {
			s = 1 - s
		}
		end := min(pos[s]+1+rng.Intn(7), len(ins[s]))
		batch := ins[s][pos[s]:end]
		pos[s] = end
		for _, r := range batch {
			maxT[s] = max(maxT[s], int64(r[2].(arrow.Timestamp))*1000)
		}
		b := makeBatches(t, mem, input{timedSchema, batch}, len(batch), columnar)[0]
		if _, err := exec.Dispatch(ctx, j, columnar, s, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
		if wm := min(maxT[0], maxT[1]) - delayMs*1000; wm > -1<<61 {
			if err := j.OnWatermark(ctx, wm, out); err != nil {
				t.Fatal(err)
			}
		}
		l, r := j.StateRows()
		peakState = max(peakState, l+r)
	}
	for s := 0; s < 2; s++ {
		if err := j.Finish(ctx, s, out); err != nil {
			t.Fatal(err)
		}
	}
	rows, _ = out.rows()
	return rows, peakState
}

// TestStreamJoinIntervalExpiry: an interval join (right.t - left.t in
// [-1 s, +2 s]) over 2000 rows a side gives, after the interval filter,
// exactly the nested-loop answer, while its state stays a small window of
// the input because rows expire with the watermark.
func TestStreamJoinIntervalExpiry(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprintf("columnar=%v", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewSource(7))
			left, right := timedRows(rng, 2000, "l", 400), timedRows(rng, 2000, "r", 400)
			tb := &TimeBound{LeftCol: 2, RightCol: 2, Lo: -1_000_000, Hi: 2_000_000, HasLo: true, HasHi: true}
			out := arrow.NewSchema(append(append([]arrow.Field{}, timedSchema.Fields()...), timedSchema.Fields()...), nil)
			j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1, Time: tb, Out: out}, mem)
			j.SetColumnarOutput(columnar)
			defer j.Close()
			rows, peak := driveTimed(t, mem, j, rng, left, right, 500, columnar)
			inBound := func(r exec.Row) bool {
				d := (int64(r[5].(arrow.Timestamp)) - int64(r[2].(arrow.Timestamp))) * 1000
				return d >= tb.Lo && d <= tb.Hi
			}
			var got, want []exec.Row
			for _, r := range rows {
				if inBound(r) {
					got = append(got, r)
				}
			}
			for _, r := range refJoin(Inner, left, right, []int{0}, []int{0}) {
				if inBound(r) {
					want = append(want, r)
				}
			}
			if len(want) < 500 {
				t.Fatalf("only %d reference pairs: the data does not exercise the join", len(want))
			}
			if !rowsEqual(sortedRows(got), sortedRows(want)) {
				t.Errorf("got %d pairs in bound, want %d", len(got), len(want))
			}
			if j.late != 0 {
				t.Errorf("%d rows dropped as late; the watermark delay covers the disorder", j.late)
			}
			// 3 s of bound + 0.5 s of delay + 0.4 s of disorder at 10 rows/s
			// a side is well under 200 rows; without expiry it is 4000.
			if peak > 200 {
				t.Errorf("state peaked at %d rows: it does not expire with the watermark", peak)
			}
			if exp := j.side[0].expired + j.side[1].expired; exp < 3500 {
				t.Errorf("%d rows expired, want nearly all 4000", exp)
			}
		})
	}
}

// TestStreamJoinLateRowsDropped: a row behind the watermark is dropped and
// counted, not joined against a state that may have expired its partners.
func TestStreamJoinLateRowsDropped(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	tb := &TimeBound{LeftCol: 2, RightCol: 2, Lo: 0, Hi: 0, HasLo: true, HasHi: true}
	out := arrow.NewSchema(append(append([]arrow.Field{}, timedSchema.Fields()...), timedSchema.Fields()...), nil)
	j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1, Time: tb, Out: out}, mem)
	defer j.Close()
	c := &capture{}
	feed := func(s int, rows ...exec.Row) {
		b := exec.NewRowBatch(timedSchema, rows)
		defer b.Release()
		if err := j.Process(ctx, s, b, c); err != nil {
			t.Fatal(err)
		}
	}
	feed(0, exec.Row{int64(1), "a", arrow.Timestamp(5000)})
	if err := j.OnWatermark(ctx, 6_000_000, c); err != nil {
		t.Fatal(err)
	}
	feed(1, exec.Row{int64(1), "late", arrow.Timestamp(5000)}, exec.Row{int64(1), "b", arrow.Timestamp(7000)})
	feed(0, exec.Row{int64(1), "c", arrow.Timestamp(7000)})
	rows, _ := c.rows()
	if len(rows) != 1 || rows[0][1] != "c" || rows[0][4] != "b" {
		t.Errorf("got %v, want only (c, b)", rows)
	}
	if j.late != 1 {
		t.Errorf("late = %d, want 1", j.late)
	}
	if len(c.wms) != 1 || c.wms[0] != 6_000_000 {
		t.Errorf("watermarks forwarded %v, want [6000000] (a [0,0] bound holds nothing back)", c.wms)
	}
}

// TestStreamJoinChangelogInput: a changelog (an updating aggregate's
// +I/-U/+U/-D) into an INNER join retracts the pairs of the rows it
// retracts; applied, the output is the join of the final tables. The join
// had born-columnar output on (a gate that should not have allowed it): the
// first retraction bails it to rows, and the answer is still right.
func TestStreamJoinChangelogInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	leftSchema := changelogSchema(arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64, Nullable: true}, {Name: "n", Type: i64}}, nil))
	out := changelogSchema(arrow.NewSchema(append(leftSchema.Fields()[1:], buildSchema.Fields()...), nil))
	j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{1}, RightKeys: []int{0}, LeftOp: 0, RightOp: -1, Out: out}, mem)
	j.SetColumnarOutput(true)
	j.columnarOut = true // as a wrong gate would have it
	defer j.Close()
	c := &capture{}
	right := buildRows(10, false)
	rb := makeBatches(t, mem, input{buildSchema, right}, 10, true)[0]
	if _, err := exec.Dispatch(ctx, j, true, 1, rb, c); err != nil {
		t.Fatal(err)
	}
	rb.Release()
	// The right input ends before the changes come: the changelog's rows
	// must still be held, or their retractions would find nothing.
	if err := j.Finish(ctx, 1, c); err != nil {
		t.Fatal(err)
	}
	changes := [][]exec.Row{
		{{OpInsert, int64(1), int64(1)}, {OpInsert, int64(2), int64(1)}, {OpInsert, nil, int64(1)}},
		{{OpUpdateBefore, int64(1), int64(1)}, {OpUpdateAfter, int64(1), int64(2)}},
		{{OpDelete, int64(2), int64(1)}, {OpInsert, int64(3), int64(1)}, {OpDelete, nil, int64(1)}},
		{{OpUpdateBefore, int64(3), int64(1)}, {OpUpdateAfter, int64(3), int64(5)}, {OpDelete, int64(9), int64(9)}},
	}
	var final []exec.Row
	for _, ch := range changes {
		b := exec.NewRowBatch(leftSchema, ch)
		if _, err := exec.Dispatch(ctx, j, true, 0, b, c); err != nil {
			t.Fatal(err)
		}
		b.Release()
		final = applyChangelogKeep(t, final, ch)
	}
	rows, _ := c.rows()
	got := applyChangelog(t, rows)
	want := refJoin(Inner, final, right, []int{0}, []int{0})
	if !rowsEqual(sortedRows(got), sortedRows(want)) {
		t.Errorf("applied output %v\nwant %v", sortedRows(got), sortedRows(want))
	}
	if !j.Bailed() {
		t.Errorf("a retraction reached a born-columnar join and it did not bail to rows")
	}
	if j.badRetracts != 1 {
		t.Errorf("retractions of rows not held = %d, want 1 (the -D of (9, 9))", j.badRetracts)
	}
	kinds := map[any]int{}
	for _, r := range rows {
		kinds[r[0]]++
	}
	if kinds[OpUpdateBefore] == 0 || kinds[OpDelete] == 0 {
		t.Errorf("row kinds %v: retractions should come out as -U and -D", kinds)
	}
}

// applyChangelogKeep applies changes to table (rows with their kind first;
// a retraction of a row not held is ignored, as the join does).
func applyChangelogKeep(t *testing.T, table, changes []exec.Row) []exec.Row {
	t.Helper()
	for _, r := range changes {
		if isRetraction(r[0]) {
			for i, x := range table {
				if reflect.DeepEqual(x, r[1:]) {
					table = append(table[:i], table[i+1:]...)
					break
				}
			}
			continue
		}
		table = append(table, r[1:])
	}
	return table
}

// TestStreamJoinStateRebuild: with many expired rows and keys, the state is
// re-keyed and the answers do not change.
func TestStreamJoinStateRebuild(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	tb := &TimeBound{LeftCol: 2, RightCol: 2, HasLo: true, HasHi: true}
	out := arrow.NewSchema(append(append([]arrow.Field{}, timedSchema.Fields()...), timedSchema.Fields()...), nil)
	j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1, Time: tb, Out: out}, mem)
	defer j.Close()
	c := &capture{}
	const n = 200_000
	pairs := 0
	for start := 0; start < n; start += 1000 {
		for s := 0; s < 2; s++ {
			rows := make([]exec.Row, 1000)
			for i := range rows {
				k := int64(start + i) // every key new: the key table would grow without a rebuild
				rows[i] = exec.Row{k, "x", arrow.Timestamp(k)}
			}
			b := makeBatches(t, mem, input{timedSchema, rows}, 1000, true)[0]
			if _, err := exec.Dispatch(ctx, j, true, s, b, c); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := j.OnWatermark(ctx, int64(start+1000)*1000, c); err != nil {
			t.Fatal(err)
		}
		got, _ := c.rows()
		pairs += len(got)
	}
	if pairs != n {
		t.Errorf("%d pairs, want %d", pairs, n)
	}
	if k := j.keys.len(); k > 1<<17 {
		t.Errorf("%d keys held after %d expired: the state was never re-keyed", k, n)
	}
}
