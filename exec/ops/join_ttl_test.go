package ops

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// With a state TTL a regular join pairs two rows only when the second
// arrives less than the TTL after the first (the first's side dropped it
// otherwise), and the state stays bounded. Batches of both inputs arrive
// in random order at random clock steps; the answer is checked against a
// nested loop that applies that rule, for INNER and LEFT (applied
// changelog: a left row with no partner in time stays padded).
func TestStreamJoinStateTTL(t *testing.T) {
	const ttl = 10 * time.Second
	for _, typ := range []JoinType{Inner, Left} {
		for _, col := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/columnar=%v", typ, col), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rng := rand.New(rand.NewSource(7))
				clock := time.Unix(1000, 0)
				out := joinSchema()
				if typ != Inner {
					out = changelogSchema(out)
				}
				j := NewStreamJoin(StreamJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1,
					Out: out, StateTTL: ttl, Now: func() time.Time { return clock }}, mem)
				defer j.Close()
				ctx := context.Background()
				cap := &capture{}
				j.SetColumnarOutput(col)
				left, right := sampleRows(200, true), buildRows(120, true)
				type arrival struct {
					row exec.Row
					at  time.Time
				}
				var lArr, rArr []arrival
				peak := 0
				for li, ri := 0, 0; li < len(left) || ri < len(right); {
					clock = clock.Add(time.Duration(rng.Intn(1500)) * time.Millisecond)
					s := rng.Intn(2)
					if li == len(left) {
						s = 1
					} else if ri == len(right) {
						s = 0
					}
					n := 1 + rng.Intn(6)
					var in input
					if s == 0 {
						n = min(n, len(left)-li)
						in = input{SampleSchema, left[li : li+n]}
						for _, r := range in.rows {
							lArr = append(lArr, arrival{r, clock})
						}
						li += n
					} else {
						n = min(n, len(right)-ri)
						in = input{buildSchema, right[ri : ri+n]}
						for _, r := range in.rows {
							rArr = append(rArr, arrival{r, clock})
						}
						ri += n
					}
					for _, b := range makeBatches(t, mem, in, n, col) {
						took, err := exec.Dispatch(ctx, j, col, s, b, cap)
						if err != nil {
							t.Fatal(err)
						}
						// The columnar path must have taken a columnar batch
						// without decoding it into rows.
						if col && (!took || b.Materialized()) {
							t.Fatalf("columnar batch: taken %v, materialised %v", took, b.Materialized())
						}
						b.Release()
					}
					l, r := j.StateRows()
					peak = max(peak, l+r)
				}
				got, _ := cap.rows()
				var want []exec.Row
				for _, l := range lArr {
					matched := false
					for _, r := range rArr {
						d := l.at.Sub(r.at)
						if d < 0 {
							d = -d
						}
						if d < ttl && len(refJoin(Inner, []exec.Row{l.row}, []exec.Row{r.row}, []int{0}, []int{0})) > 0 {
							want = append(want, append(append(exec.Row{}, l.row...), r.row...))
							matched = true
						}
					}
					if typ == Left && !matched {
						want = append(want, append(append(exec.Row{}, l.row...), make(exec.Row, buildSchema.NumFields())...))
					}
				}
				if typ == Left {
					got = applyChangelog(t, got)
				}
				if !rowsEqual(sortedRows(got), sortedRows(want)) {
					t.Errorf("got %d rows %v\nwant %d %v", len(got), trunc(sortedRows(got)), len(want), trunc(sortedRows(want)))
				}
				if j.ttlExpired < 200 {
					t.Errorf("%d rows expired by the TTL, want most of the 320", j.ttlExpired)
				}
				if peak > 120 {
					t.Errorf("state peaked at %d rows: the TTL does not bound it", peak)
				}
			})
		}
	}
}

// The TTL's expiry can rebuild the key table (once more of the state is
// dead than alive); the arriving batch's key ids must be taken from the
// table it then probes and is held under, not the one before. A large
// batch expires, the next left batch triggers the rebuild, and a right
// batch must still meet it.
func TestStreamJoinStateTTLRebuild(t *testing.T) {
	const big = 1<<16 + 1000
	for _, col := range []bool{false, true} {
		t.Run(fmt.Sprintf("columnar=%v", col), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			clock := time.Unix(1000, 0)
			j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1,
				Out: joinSchema(), StateTTL: 10 * time.Second, Now: func() time.Time { return clock }}, mem)
			defer j.Close()
			ctx := context.Background()
			cap := &capture{}
			feed := func(s int, in input) {
				t.Helper()
				for _, b := range makeBatches(t, mem, in, len(in.rows), col) {
					if _, err := exec.Dispatch(ctx, j, col, s, b, cap); err != nil {
						t.Fatal(err)
					}
					b.Release()
				}
			}
			leftRow := func(k int64) exec.Row { return exec.Row{k, "s", int64(1), 1.5, arrow.Timestamp(0)} }
			old := make([]exec.Row, big)
			for i := range old {
				old[i] = leftRow(int64(i))
			}
			feed(0, input{SampleSchema, old})
			clock = clock.Add(20 * time.Second)
			feed(0, input{SampleSchema, []exec.Row{leftRow(5_000_000), leftRow(5_000_001)}})
			feed(1, input{buildSchema, []exec.Row{{int64(5_000_000), "a", 1.0}, {int64(5_000_001), "b", 2.0}}})
			got, _ := cap.rows()
			if len(got) != 2 {
				t.Errorf("got %d pairs %v, want 2 (the two rows of the last left batch)", len(got), got)
			}
			if j.ttlExpired != big {
				t.Errorf("%d rows expired by the TTL, want %d", j.ttlExpired, big)
			}
		})
	}
}
