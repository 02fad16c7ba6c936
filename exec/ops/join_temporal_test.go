package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// versionSchema is a versioned table: key, value, valid-from time.
var versionSchema = arrow.NewSchema([]arrow.Field{
	{Name: "vk", Type: i64, Nullable: true},
	{Name: "val", Type: str, Nullable: true},
	{Name: "vt", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
}, nil)

func temporalOut() *arrow.Schema {
	return arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), versionSchema.Fields()...), nil)
}

// versionRows: keys 0..4, distinct times per key (i*7 ms apart).
func versionRows(n int, nulls bool) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		rows[i] = exec.Row{int64(i % 5), fmt.Sprintf("v%d", i), arrow.Timestamp(int64(i) * 7)}
		if nulls && i%6 == 5 {
			rows[i][0] = nil
		}
	}
	return rows
}

// refTemporal: each stream row with its key's version of the latest time
// at or before the row's time.
func refTemporal(typ JoinType, left, right []exec.Row) []exec.Row {
	var out []exec.Row
	for _, l := range left {
		var best exec.Row
		if l[0] != nil && l[4] != nil {
			for _, r := range right {
				if r[0] == nil || r[2] == nil || r[0] != l[0] || r[2].(arrow.Timestamp) > l[4].(arrow.Timestamp) {
					continue
				}
				if best == nil || r[2].(arrow.Timestamp) > best[2].(arrow.Timestamp) {
					best = r
				}
			}
		}
		switch {
		case best != nil:
			out = append(out, append(append(exec.Row{}, l...), best...))
		case typ == Left:
			out = append(out, append(append(exec.Row{}, l...), nil, nil, nil))
		}
	}
	return out
}

func TestTemporalJoin(t *testing.T) {
	for _, typ := range []JoinType{Inner, Left} {
		runCase(t, opCase{
			name: typ.String(),
			newOp: func(mem memory.Allocator) exec.Operator {
				return NewTemporalJoin(TemporalJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 4, RightTime: 2, Out: temporalOut()}, mem)
			},
			inputs: func(nulls bool) []input {
				return []input{{SampleSchema, sampleRows(60, nulls)}, {versionSchema, versionRows(40, nulls)}}
			},
			want: func(ins []input) []exec.Row { return refTemporal(typ, ins[0].rows, ins[1].rows) },
		})
	}
}

// A stream row waits for the watermark (a version arriving after it but
// timed before it is still chosen); the versions older than the one valid
// at the watermark are dropped; a checkpoint in between restores.
func TestTemporalJoinWatermark(t *testing.T) {
	for _, restore := range []bool{false, true} {
		t.Run(fmt.Sprint("restore=", restore), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			spec := TemporalJoinSpec{Type: Left, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 4, RightTime: 2, Out: temporalOut()}
			j := NewTemporalJoin(spec, mem)
			defer func() { j.Close() }()
			out := &capture{}
			send := func(input int, rows ...exec.Row) {
				schema := SampleSchema
				if input == 1 {
					schema = versionSchema
				}
				b := exec.NewRowBatch(schema, rows)
				if err := j.Process(ctx, input, b, out); err != nil {
					t.Fatal(err)
				}
				b.Release()
			}
			ts := func(ms int64) arrow.Timestamp { return arrow.Timestamp(ms) }
			stream := func(k, ms int64) exec.Row { return exec.Row{k, "s", int64(0), 0.0, ts(ms)} }
			send(1, exec.Row{int64(1), "a", ts(0)}, exec.Row{int64(1), "b", ts(10)})
			send(0, stream(1, 5), stream(1, 12), stream(9, 6))
			send(1, exec.Row{int64(1), "c", ts(11)}) // after the row at 12, before its watermark
			if err := j.OnWatermark(ctx, 4_000, out); err != nil {
				t.Fatal(err)
			}
			if got, _ := out.rows(); len(got) != 0 {
				t.Fatalf("rows before the watermark passed them: %v", got)
			}
			if restore {
				k := NewTemporalJoin(spec, mem)
				if err := state.RoundTrip(ctx, mem, j, k); err != nil {
					t.Fatal(err)
				}
				j.Close()
				j = k
			}
			if err := j.OnWatermark(ctx, 12_000, out); err != nil {
				t.Fatal(err)
			}
			got, _ := out.rows()
			want := []exec.Row{
				append(stream(1, 5), int64(1), "a", ts(0)),
				append(stream(9, 6), nil, nil, nil),
				append(stream(1, 12), int64(1), "c", ts(11)),
			}
			if !rowsEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
			if r := j.Report(); counter(r, "versions held") != 1 || counter(r, "rows waiting") != 0 {
				t.Errorf("state after the watermark: %v (want 1 version: the one valid at 12 ms)", r.Counters)
			}
		})
	}
}
