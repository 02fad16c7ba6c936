package ops

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

type discardOut struct{}

func (discardOut) Emit(context.Context, *exec.Batch) error    { return nil }
func (discardOut) EmitWatermark(context.Context, int64) error { return nil }

// BenchmarkWindowAggregate folds 8192-row columnar batches (1000 keys,
// 10 000 events per second of event time) and fires on a watermark per batch.
func BenchmarkWindowAggregate(b *testing.B) {
	for _, c := range []struct {
		name string
		spec WindowSpec
	}{
		{"tumble-1s", WindowSpec{Kind: Tumble, Size: time.Second}},
		{"hop-2s-500ms", WindowSpec{Kind: Hop, Size: 2 * time.Second, Slide: 500 * time.Millisecond}},
		{"session-100ms", WindowSpec{Kind: Session, Gap: 100 * time.Millisecond}},
	} {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			const n = 8192
			var batches []*exec.Batch
			for bi := 0; bi < 32; bi++ {
				rows := make([]exec.Row, n)
				for i := range rows {
					ev := int64(bi*n + i)
					rows[i] = exec.Row{ev * 7919 % 1000, arrow.Timestamp(ev / 10), ev % 100}
				}
				rec, err := exec.EncodeRows(mem, winSchema, rows)
				if err != nil {
					b.Fatal(err)
				}
				batches = append(batches, exec.NewColumnarBatch(rec))
			}
			b.ResetTimer()
			ctx := context.Background()
			for it := 0; it < b.N; it++ {
				w := NewWindowAggregate(c.spec, 1, []int{0}, winAggs, winOut, mem)
				w.SetColumnarOutput(true)
				for bi, bt := range batches {
					if _, err := w.ProcessColumnar(ctx, 0, bt, discardOut{}); err != nil {
						b.Fatal(err)
					}
					if err := w.OnWatermark(ctx, int64((bi+1)*n/10)*1000, discardOut{}); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Finish(ctx, 0, discardOut{}); err != nil {
					b.Fatal(err)
				}
				w.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32*n), "ns/row")
		})
	}
}
