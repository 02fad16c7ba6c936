package ops

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec/expr"
)

// NestedLoopJoinSpec configures a nested-loop join: a join without
// equality keys (CROSS JOIN, ON a.x < b.y, a subquery correlated only by
// inequalities).
type NestedLoopJoinSpec struct {
	Type JoinType
	// On is the join condition over the left row's columns followed by
	// the build row's; a pair matches when it is TRUE. nil: every pair
	// matches (CROSS JOIN).
	On expr.Expr
	// NullAware (Mark, Anti): the mark is the three-valued OR of On over
	// the build rows (x = ANY (subquery), IN): TRUE if a pair is TRUE,
	// else NULL if one is NULL, else FALSE; Anti keeps a row only when it
	// is FALSE. For a subquery that is also correlated the condition must
	// keep a failed correlation FALSE rather than NULL, e.g.
	// COALESCE(corr, FALSE) AND x = y. (An IN with an equality is better
	// planned as a null-aware hash join, which hashes on x = y.)
	NullAware bool
	// Out: as for the hash join (see JoinType).
	Out *arrow.Schema
}

// Validate checks what the spec alone can tell.
func (s NestedLoopJoinSpec) Validate() error {
	return validateJoin(s.Type, s.NullAware, s.On, s.Out, nil)
}

// NestedLoopJoin joins every probe row with every build row that
// satisfies its condition. Input 1 (right) is buffered whole; input 0
// (left) streams. The pairs of a probe batch are formed and filtered in
// chunks of joinPairChunk pairs (the condition evaluated vectorised over a
// record of the pairs), so a large product streams out in pieces and the
// context is checked between them.
type NestedLoopJoin struct{ batchJoin }

// NewNestedLoopJoin returns the nested-loop join spec describes; errors
// (see Validate) surface on the first batch.
func NewNestedLoopJoin(spec NestedLoopJoinSpec, mem memory.Allocator) *NestedLoopJoin {
	j := &NestedLoopJoin{newBatchJoin(spec.Type, spec.NullAware, spec.On, spec.Out, mem)}
	j.err = spec.Validate()
	return j
}

// Kind implements exec.Operator.
func (j *NestedLoopJoin) Kind() string { return "nested_loop_join" }
