package plan

import (
	"fmt"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
)

// opsJoinType maps a logical join kind to the executor's.
func opsJoinType(k JoinKind) ops.JoinType {
	return map[JoinKind]ops.JoinType{JoinInner: ops.Inner, JoinLeft: ops.Left, JoinRight: ops.Right, JoinFull: ops.Full,
		JoinSemi: ops.Semi, JoinAnti: ops.Anti, JoinMark: ops.Mark, JoinSingle: ops.Single}[k]
}

// batchJoin plans a join of bounded inputs: a hash join on its keys (the
// right input built, the left streamed through; broadcast where the build
// side is small), a nested-loop join without keys. Both take the residual.
func (b *builder) batchJoin(x *Join, l, r *Stage) (*Stage, error) {
	mem := b.opts.Mem
	kind := x.Kind.String()
	if x.NullAware {
		kind += " null-aware"
	}
	cond := x.Cond
	if cond == "" {
		cond = joinCondText(x)
	}
	var residual expr.Expr
	if x.Residual != nil {
		residual = x.Residual.Compile()
	}
	if len(x.LeftKeys) == 0 {
		// No key: every right row is a candidate for every left row. One
		// instance holds the right input; the left stays parallel, and
		// each of its subtasks sees the whole right side.
		spec := ops.NestedLoopJoinSpec{Type: opsJoinType(x.Kind), On: residual, NullAware: x.NullAware, Out: x.schema}
		mk := func() exec.Operator { return ops.NewNestedLoopJoin(spec, mem) }
		w := wireBroadcast
		if !x.Kind.preservesLeftAlone() || len(l.Instances) < 2 {
			w = wireGather
		}
		return b.op("NestedLoopJoin", kind+" ON "+cond, mk, w, nil, l, r), nil
	}
	if typ, ok := buildLeftType(x); ok {
		// The left input is the smaller: it is built, the right probes,
		// and the left rows come out by whether they matched once the
		// right input has ended.
		spec := ops.HashJoinSpec{Type: typ, LeftKeys: x.RightKeys, RightKeys: x.LeftKeys, NullSafe: x.NullSafe, Out: x.schema}
		mk := func() exec.Operator { return ops.NewHashJoinSpec(spec, mem) }
		detail := fmt.Sprintf("%s ON %s; built on the left input (estimated %s rows against %s)", typ, cond,
			estimateText(estimateOf(x.Left).rows), estimateText(estimateOf(x.Right).rows))
		return b.op("HashJoin", detail, mk, wireKeyed, [][]int{x.RightKeys, x.LeftKeys}, r, l), nil
	}
	spec := ops.HashJoinSpec{Type: opsJoinType(x.Kind), LeftKeys: x.LeftKeys, RightKeys: x.RightKeys,
		NullSafe: x.NullSafe, NullAware: x.NullAware, Residual: residual, Out: x.schema}
	mk := func() exec.Operator { return ops.NewHashJoinSpec(spec, mem) }
	if x.Broadcast > 0 && len(l.Instances) > 1 {
		detail := fmt.Sprintf("%s ON %s; build side (%d rows) broadcast to %d subtasks", kind, cond, x.Broadcast, len(l.Instances))
		return b.op("HashJoin", detail, mk, wireBroadcast, nil, l, r), nil
	}
	if x.NullAware && anyNullAware(x) {
		// NOT IN needs to know whether the whole build side has a NULL:
		// one instance sees all of it.
		return b.op("HashJoin", kind+" ON "+cond, mk, wireGather, nil, l, r), nil
	}
	return b.op("HashJoin", kind+" ON "+cond, mk, wireKeyed, [][]int{x.LeftKeys, x.RightKeys}, l, r), nil
}

// buildLeftType is the executor's join type for a SEMI or ANTI join that
// is better built on its left input, estimated well under its right one
// (TPC-H Q4: 57k orders that must have a late lineitem, of 3.8M
// lineitems): RIGHT SEMI or RIGHT ANTI with the inputs swapped. A hash
// table costs several times a probe per row, so building the smaller side
// wins even where the estimates are rough; a null-aware ANTI join (NOT IN)
// or one with a residual keeps its shape.
func buildLeftType(x *Join) (ops.JoinType, bool) {
	if (x.Kind != JoinSemi && x.Kind != JoinAnti) || x.NullAware || x.Residual != nil || x.Broadcast > 0 ||
		x.Stream || x.Changelog || len(x.LeftKeys) == 0 {
		return 0, false
	}
	if estimateOf(x.Left).rows*2 > estimateOf(x.Right).rows {
		return 0, false
	}
	if x.Kind == JoinSemi {
		return ops.RightSemi, true
	}
	return ops.RightAnti, true
}

// estimateText is an estimated row count for EXPLAIN.
func estimateText(rows float64) string {
	switch {
	case rows >= unknownRows:
		return "unknown"
	case rows >= 1e6:
		return fmt.Sprintf("%.1fM", rows/1e6)
	case rows >= 1e3:
		return fmt.Sprintf("%.1fk", rows/1e3)
	}
	return fmt.Sprintf("%.0f", rows)
}

// anyNullAware reports whether a null-aware join has a key that is not
// null-safe (a NULL there makes the comparison unknown against every
// build row, whichever subtask holds it).
func anyNullAware(x *Join) bool {
	for i := range x.LeftKeys {
		if i >= len(x.NullSafe) || !x.NullSafe[i] {
			return true
		}
	}
	return false
}

// preservesLeftAlone reports whether a left row's output depends only on
// the build rows (not on other left rows): every kind but RIGHT and FULL,
// whose unmatched build rows come out once.
func (k JoinKind) preservesLeftAlone() bool { return k != JoinRight && k != JoinFull }

// joinCondText is a join's condition in SQL terms, for EXPLAIN.
func joinCondText(x *Join) string {
	var parts []string
	for i := range x.LeftKeys {
		op := "="
		if i < len(x.NullSafe) && x.NullSafe[i] {
			op = "IS NOT DISTINCT FROM"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", x.Left.Schema().Field(x.LeftKeys[i]).Name, op, x.Right.Schema().Field(x.RightKeys[i]).Name))
	}
	if x.Residual != nil {
		parts = append(parts, x.Residual.String())
	}
	if len(parts) == 0 {
		return "TRUE"
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += " AND " + p
	}
	return out
}

// buildSetOp plans INTERSECT or EXCEPT [ALL]: both inputs hashed on the
// whole row to the same subtask.
func (b *builder) buildSetOp(x *SetOp) (*Stage, error) {
	l, err := b.build(x.Left)
	if err != nil {
		return nil, err
	}
	r, err := b.build(x.Right)
	if err != nil {
		return nil, err
	}
	kind, name := ops.Except, "EXCEPT"
	if x.Intersect {
		kind, name = ops.Intersect, "INTERSECT"
	}
	if x.All {
		name += " ALL"
	}
	all := identityMap(x.Schema().NumFields())
	schema, mem := x.Schema(), b.opts.Mem
	return b.op("SetOp", name, func() exec.Operator { return ops.NewSetOp(kind, x.All, schema, mem) },
		wireKeyed, [][]int{all, all}, l, r), nil
}
