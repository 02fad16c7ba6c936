package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// The 1M x 100k joins: 1M probe rows with keys over 200k values against
// a 100k-row build side with unique keys, so half the probe rows match.
const benchProbeRows, benchBuildRows = 1 << 20, 100000

func bench1Mx100k(b *testing.B, spec HashJoinSpec) {
	mem := memory.NewGoAllocator()
	probe := benchBatches(b, mem, benchProbeRows, 2*benchBuildRows)
	defer release(probe)
	build := benchBatches(b, mem, benchBuildRows, benchBuildRows)
	defer release(build)
	benchJoin(b, probe, build, benchProbeRows, func() exec.Operator { return NewHashJoinSpec(spec, mem) })
}

// benchResidual is probe.v < build.v (v is i % 100 on both sides): about
// half the key matches pass.
var benchResidual expr.Expr = tCmp{op: "<", a: 2, b: 5 + 2}

func leftOnlySchema(typ JoinType) *arrow.Schema {
	if typ == Mark {
		return arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
			arrow.Field{Name: "mark", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), nil)
	}
	return SampleSchema
}

func BenchmarkSemiJoin(b *testing.B) {
	bench1Mx100k(b, HashJoinSpec{Type: Semi, LeftKeys: []int{0}, RightKeys: []int{0}, Out: leftOnlySchema(Semi)})
}

func BenchmarkSemiJoinResidual(b *testing.B) {
	bench1Mx100k(b, HashJoinSpec{Type: Semi, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: benchResidual, Out: leftOnlySchema(Semi)})
}

func BenchmarkAntiJoinNullAware(b *testing.B) {
	bench1Mx100k(b, HashJoinSpec{Type: Anti, LeftKeys: []int{0}, RightKeys: []int{0}, NullAware: true, Out: leftOnlySchema(Anti)})
}

// BenchmarkInnerJoin is BenchmarkInnerJoinResidual's join without the
// residual, for comparison.
func BenchmarkInnerJoin(b *testing.B) {
	bench1Mx100k(b, HashJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, Out: joinedSample})
}

func BenchmarkInnerJoinResidual(b *testing.B) {
	bench1Mx100k(b, HashJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: benchResidual, Out: joinedSample})
}

// BenchmarkNestedLoopJoin: 3k x 3k rows on probe.v < build.v (9M pairs,
// about half kept); ns and cpu-ns per pair.
func BenchmarkNestedLoopJoin(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 3000
	probe := benchBatches(b, mem, n, n)
	defer release(probe)
	build := benchBatches(b, mem, n, n)
	defer release(build)
	benchJoinPer(b, probe, build, n*n, "pair", func() exec.Operator {
		return NewNestedLoopJoin(NestedLoopJoinSpec{Type: Inner, On: benchResidual, Out: joinedSample}, mem)
	})
}
