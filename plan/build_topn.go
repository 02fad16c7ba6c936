package plan

import (
	"fmt"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
)

// topN plans ORDER BY ... LIMIT over a bounded input. Over a parallel
// input it runs in two stages, as a two-phase aggregate does: a partial
// top-n per input subtask keeps that subtask's best Limit rows, and one
// final top-n picks the best Limit of theirs, so the ranking of every row
// runs in parallel and only Limit rows per subtask cross to the final.
// The final is the same operator: the best n of the partials' best n are
// the best n of all (ties: an earlier arrival wins at each step, any n of
// equal rows being a valid answer).
func (b *builder) topN(x *Sort, in *Stage) *Stage {
	mem := b.opts.Mem
	detail := fmt.Sprintf("%s LIMIT %d", sortKeysText(x.Schema(), x.Keys), x.Limit)
	mk := func() exec.Operator { return ops.NewTopN(x.Keys, x.Limit, mem) }
	if len(in.Instances) < 2 {
		return b.op("TopN", detail, mk, wireGather, nil, in)
	}
	partial := b.op("TopN", "partial: "+detail, mk, wireParallel, nil, in)
	b.schemas[partial] = x.Schema()
	return b.op("TopN", "final: "+detail, mk, wireGather, nil, partial)
}
