package ops

import (
	"context"

	"github.com/clink-sql/clink/exec"
)

// Collect is the result sink: it hands each batch, untouched, to fn. It
// never decodes a columnar batch itself, so a columnar chain stays
// columnar up to whoever reads the result (the shell's printer, a test).
type Collect struct {
	exec.Base
	fn func(ctx context.Context, b *exec.Batch) error
}

// NewCollect returns a sink calling fn for every batch. The batch is lent
// for the call: fn retains it to keep it.
func NewCollect(fn func(ctx context.Context, b *exec.Batch) error) *Collect {
	return &Collect{fn: fn}
}

// Kind implements exec.Operator.
func (c *Collect) Kind() string { return "collect" }

// Capabilities implements exec.Operator.
func (c *Collect) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true}
}

// Process passes a row batch on.
func (c *Collect) Process(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	return c.fn(ctx, b)
}

// ProcessColumnar passes a columnar batch on without decoding it.
func (c *Collect) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	return true, c.fn(ctx, b)
}

// OnWatermark swallows the watermark: a sink has no consumer.
func (c *Collect) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }
