package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// firstPerKey is the reference: per key k, the row with the smallest t
// (the earlier arrival on ties); rows without a time are no key's first.
func firstPerKey(rows []exec.Row) []exec.Row {
	best := map[string]exec.Row{}
	var order []string
	for _, r := range rows {
		ts, ok := r[4].(arrow.Timestamp)
		if !ok {
			continue
		}
		k := fmt.Sprint(r[0])
		b, seen := best[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || ts < b[4].(arrow.Timestamp) {
			best[k] = r
		}
	}
	out := make([]exec.Row, 0, len(order))
	for _, k := range order {
		out = append(out, best[k])
	}
	return out
}

// reversedTimes are sampleRows with time running backwards in runs, so a
// key's first row by time is not its first arrival.
func reversedTimes(n int, nulls bool) []exec.Row {
	rows := sampleRows(n, nulls)
	for i, r := range rows {
		r[4] = arrow.Timestamp(1436918400000 + int64((i/10)*10+(9-i%10))*300)
		if nulls && i%11 == 4 {
			r[4] = nil
		}
	}
	return rows
}

// Under the operator harness (no watermark before the end): the earliest
// row of each key, append-only.
func TestStreamDedupFirstAgrees(t *testing.T) {
	runCase(t, opCase{
		name:   "first_by_time",
		newOp:  func(memory.Allocator) exec.Operator { return NewStreamDedupFirst([]int{0}, 4, false, SampleSchema) },
		inputs: func(nulls bool) []input { return []input{{SampleSchema, reversedTimes(150, nulls)}} },
		want:   func(ins []input) []exec.Row { return firstPerKey(ins[0].rows) },
	})
}

// With watermarks: a key's row is emitted once the watermark passes it,
// a row behind the watermark for a new key at once, and one earlier than
// its key's emitted row is late.
func TestStreamDedupFirstWatermark(t *testing.T) {
	ctx := context.Background()
	out := arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), arrow.Field{Name: "rn", Type: arrow.PrimitiveTypes.Int64}), nil)
	d := NewStreamDedupFirst([]int{0}, 4, true, out)
	defer d.Close()
	ms := func(v int64) arrow.Timestamp { return arrow.Timestamp(v) }
	row := func(k, t int64) exec.Row { return exec.Row{k, "x", t, 0.0, ms(t)} }
	c := &capture{}
	step := func(rows []exec.Row, wmMs int64) []exec.Row {
		if len(rows) > 0 {
			if err := d.Process(ctx, 0, exec.NewRowBatch(SampleSchema, rows), c); err != nil {
				t.Fatal(err)
			}
		}
		if wmMs >= 0 {
			if err := d.OnWatermark(ctx, wmMs*1000, c); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := c.rows()
		return got
	}
	if got := step([]exec.Row{row(1, 100), row(1, 50), row(2, 300)}, 49); len(got) != 0 {
		t.Fatalf("emitted before the watermark passed: %v", got)
	}
	got := step(nil, 100)
	if len(got) != 1 || got[0][2] != int64(50) || got[0][5] != int64(1) {
		t.Fatalf("watermark 100: %v, want key 1's row at 50 with rn 1", got)
	}
	// Key 1 is done: 40 is late, 200 a later duplicate. Key 3's row is
	// behind the watermark: nothing can come before it.
	got = step([]exec.Row{row(1, 40), row(1, 200), row(3, 90)}, -1)
	if len(got) != 1 || got[0][0] != int64(3) {
		t.Fatalf("got %v, want key 3 at once", got)
	}
	if got = step([]exec.Row{row(2, 250)}, 1000); len(got) != 1 || got[0][2] != int64(250) {
		t.Fatalf("got %v, want key 2's earlier row 250", got)
	}
	if n := d.Report().Counters[0]; n.Value != 1 {
		t.Fatalf("%s = %d, want 1", n.Name, n.Value)
	}
}

func TestStreamDedupFirstSnapshotRoundTrip(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			newOp := func() exec.Operator { return NewStreamDedupFirst([]int{0, 1}, 4, false, SampleSchema) }
			snapshotCut(t, mem, newOp, reversedTimes(150, seed%2 == 1), 2, seed)
		})
	}
}
