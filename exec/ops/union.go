package ops

import (
	"context"

	"github.com/clink-sql/clink/exec"
)

// UnionAll forwards the batches of every input unchanged; the planner makes
// the input schemas identical. The runner ends it when every input has
// ended and holds the watermark at the minimum over the inputs.
type UnionAll struct {
	exec.Base
	inputs int
}

// NewUnionAll returns a UNION ALL of inputs inputs.
func NewUnionAll(inputs int) *UnionAll { return &UnionAll{inputs: inputs} }

// Kind implements exec.Operator.
func (u *UnionAll) Kind() string { return "union_all" }

// Inputs is the number of inputs.
func (u *UnionAll) Inputs() int { return u.inputs }

// Capabilities implements exec.Operator.
func (u *UnionAll) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Process forwards a batch (it does not touch the rows).
func (u *UnionAll) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	return out.Emit(ctx, b)
}

// ProcessColumnar forwards a columnar batch.
func (u *UnionAll) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	return true, out.Emit(ctx, b)
}
