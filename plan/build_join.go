package plan

import (
	"fmt"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
)

// opsJoinType maps a logical join kind to the executor's.
func opsJoinType(k JoinKind) ops.JoinType {
	switch k {
	case JoinLeft:
		return ops.Left
	case JoinRight:
		return ops.Right
	case JoinFull:
		return ops.Full
	}
	return ops.Inner
}

// batchJoin plans a join of bounded inputs: a hash join on its keys (the
// right input built, the left streamed through; broadcast where the build
// side is small), a nested-loop join without keys.
func (b *builder) batchJoin(x *Join, l, r *Stage) (*Stage, error) {
	mem := b.opts.Mem
	kind := x.Kind.String()
	cond := x.Cond
	if cond == "" {
		cond = "TRUE"
	}
	if len(x.LeftKeys) == 0 || x.Residual != nil || x.Kind > JoinFull || anyTrue(x.NullSafe) {
		return nil, fmt.Errorf("%s JOIN ON %s: not supported by the executor yet", kind, cond)
	}
	mk := func() exec.Operator {
		return ops.NewHashJoin(opsJoinType(x.Kind), x.LeftKeys, x.RightKeys, x.schema, mem)
	}
	if rows, ok := b.broadcastBuild(x, l); ok {
		detail := fmt.Sprintf("%s ON %s; build side (%d rows) broadcast to %d subtasks", kind, cond, rows, len(l.Instances))
		return b.op("HashJoin", detail, mk, wireBroadcast, nil, l, r), nil
	}
	return b.op("HashJoin", kind+" ON "+cond, mk, wireKeyed, [][]int{x.LeftKeys, x.RightKeys}, l, r), nil
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}
