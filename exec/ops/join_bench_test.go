package ops

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// benchJoin builds op's build side from build and probes it with probe
// (columnar, columnar output on), b.N times. ns/row is the probe's time per
// probe row, cpu-ns/row its CPU time; build-ms the build's (hashing) time
// per run.
func benchJoin(b *testing.B, probe, build []*exec.Batch, probeRows int, mk func() exec.Operator) {
	benchJoinPer(b, probe, build, probeRows, "row", mk)
}

// benchJoinPer is benchJoin with the probe's times divided by units (its
// rows, or a nested-loop join's pairs) and named per unit.
func benchJoinPer(b *testing.B, probe, build []*exec.Batch, units int, unit string, mk func() exec.Operator) {
	ctx := context.Background()
	b.ResetTimer()
	var buildTime, probeCPU time.Duration
	for range b.N {
		start := time.Now()
		j := mk()
		j.(exec.ColumnarOutputSetter).SetColumnarOutput(true)
		for _, bt := range build {
			if _, err := exec.Dispatch(ctx, j, true, 1, bt, discard{}); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Finish(ctx, 1, discard{}); err != nil {
			b.Fatal(err)
		}
		buildTime += time.Since(start)
		cpu := cpuTime()
		for _, bt := range probe {
			if _, err := exec.Dispatch(ctx, j, true, 0, bt, discard{}); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Finish(ctx, 0, discard{}); err != nil {
			b.Fatal(err)
		}
		probeCPU += cpuTime() - cpu
		j.Close()
	}
	b.ReportMetric(float64((b.Elapsed()-buildTime).Nanoseconds())/float64(b.N*units), "ns/"+unit)
	b.ReportMetric(float64(buildTime.Milliseconds())/float64(b.N), "build-ms")
	// The probe's CPU time (GC included): steadier than the wall clock
	// on a shared machine.
	b.ReportMetric(float64(probeCPU.Nanoseconds())/float64(b.N*units), "cpu-ns/"+unit)
}

// benchHashJoin probes 1M rows with keys over probeCard values against
// 10k build rows with unique keys, joining on column key.
func benchHashJoin(b *testing.B, typ JoinType, key, probeCard int) {
	mem := memory.NewGoAllocator()
	const n, nb = 1 << 20, 10000
	probe := benchBatches(b, mem, n, probeCard)
	defer release(probe)
	build := benchBatches(b, mem, nb, nb)
	defer release(build)
	benchJoin(b, probe, build, n, func() exec.Operator { return NewHashJoin(typ, []int{key}, []int{key}, joinedSample, mem) })
}

// BenchmarkHashJoinInner is BenchmarkHashJoin measured by benchJoin
// (probe time and CPU time apart from the build).
func BenchmarkHashJoinInner(b *testing.B) { benchHashJoin(b, Inner, 0, 10000) }

// BenchmarkHashJoinLeft: a LEFT join where half the probe keys have no
// match (padded).
func BenchmarkHashJoinLeft(b *testing.B) { benchHashJoin(b, Left, 0, 20000) }

// BenchmarkHashJoinStringKey: BenchmarkHashJoinInner on the VARCHAR key.
func BenchmarkHashJoinStringKey(b *testing.B) { benchHashJoin(b, Inner, 1, 10000) }
