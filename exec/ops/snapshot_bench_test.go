package ops

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// benchUpdatingAgg is an updating aggregate over n distinct BIGINT keys:
// GROUP BY k with COUNT(*), SUM(v), MAX(v), AVG(f).
func benchUpdatingAgg(b *testing.B, mem memory.Allocator, n int) *UpdatingAggregate {
	b.Helper()
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	specs := []AggSpec{
		{Func: "count_star", Col: -1, Type: i64},
		{Func: "sum", Col: 2, Type: i64},
		{Func: "max", Col: 2, Type: i64},
		{Func: "avg", Col: 3, Type: f64},
	}
	out := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: i64, Nullable: true}, {Name: "n", Type: i64}, {Name: "s", Type: i64, Nullable: true},
		{Name: "m", Type: i64, Nullable: true}, {Name: "a", Type: f64, Nullable: true},
		{Name: "op", Type: arrow.BinaryTypes.String}}, nil)
	u := NewUpdatingAggregate([]int{0}, specs, out, mem)
	const batch = 8192
	rows := make([]exec.Row, 0, batch)
	for i := 0; i < n; i++ {
		rows = append(rows, exec.Row{int64(i), nil, int64(i % 1000), float64(i) / 3, nil})
		if len(rows) == batch || i == n-1 {
			bt := exec.NewRowBatch(SampleSchema, rows)
			if err := u.Process(context.Background(), 0, bt, discard{}); err != nil {
				b.Fatal(err)
			}
			bt.Release()
			rows = make([]exec.Row, 0, batch)
		}
	}
	return u
}

// BenchmarkUpdatingAggregateSnapshot1M: snapshot (state to Arrow IPC in
// memory) and restore of an updating aggregate holding 1M groups.
func BenchmarkUpdatingAggregateSnapshot1M(b *testing.B) {
	mem := memory.NewGoAllocator()
	u := benchUpdatingAgg(b, mem, 1_000_000)
	defer u.Close()
	ctx := context.Background()
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			m := state.NewMemory(mem)
			if err := u.SnapshotState(ctx, m); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(m.Size()), "state-bytes")
		}
	})
	m := state.NewMemory(mem)
	if err := u.SnapshotState(ctx, m); err != nil {
		b.Fatal(err)
	}
	b.Run("restore", func(b *testing.B) {
		for b.Loop() {
			r := NewUpdatingAggregate(u.agg.groupCols, u.agg.aggs, u.out, mem)
			if err := r.RestoreState(ctx, m.Reader()); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}
