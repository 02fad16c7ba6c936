package nexmark

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

type discard struct{ rows int64 }

func (d *discard) Emit(_ context.Context, b *exec.Batch) error {
	d.rows += int64(b.Len())
	return nil
}
func (d *discard) EmitWatermark(context.Context, int64) error { return nil }

// BenchmarkGenerate reports unpaced generation speed in events/s (events of
// the global sequence, so the flat tables count the events they skip over
// too) and ns per emitted row.
func BenchmarkGenerate(b *testing.B) {
	const events = 1_000_000
	for _, bc := range []struct {
		name, table string
		cols        []int
	}{
		{"wide", "nexmark", nil},
		{"wide-event_type+dateTime", "nexmark", []int{0, 4}},
		{"bid", "bid", nil},
		{"bid-auction+price", "bid", []int{0, 2}},
		{"auction", "auction", nil},
		{"person", "person", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tab, err := NewTable(map[string]string{"table": bc.table, "events.num": strconv.Itoa(events)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			var rows int64
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				src, err := tab.OpenSource(connectors.ScanSpec{Columns: bc.cols})
				if err != nil {
					b.Fatal(err)
				}
				d := &discard{}
				if err := src.Run(context.Background(), d); err != nil {
					b.Fatal(err)
				}
				rows += d.rows
			}
			// CPU time (all threads, GC included) is steadier than wall time
			// on a shared machine.
			cpu := (cpuTime() - cpu0).Seconds()
			b.ReportMetric(float64(events)*float64(b.N)/cpu, "events/cpu-s")
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(events)*float64(b.N)/sec, "events/s")
			b.ReportMetric(sec*1e9/float64(rows), "ns/row")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
