package ops

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// Values is the source of a SELECT without FROM: its rows in one row
// batch, then the final watermark.
type Values struct {
	schema *arrow.Schema
	rows   []exec.Row
}

// NewValues returns a source emitting rows of schema.
func NewValues(schema *arrow.Schema, rows []exec.Row) *Values {
	return &Values{schema: schema, rows: rows}
}

// Kind implements exec.Source.
func (v *Values) Kind() string { return "values" }

// Capabilities implements exec.Source: VALUES is born as rows.
func (v *Values) Capabilities() exec.Capabilities { return exec.Capabilities{} }

// Schema is the rows' schema.
func (v *Values) Schema() *arrow.Schema { return v.schema }

// Run emits the rows and the final watermark.
func (v *Values) Run(ctx context.Context, out exec.Emitter) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := emitRows(ctx, out, v.schema, v.rows); err != nil {
		if errors.Is(err, exec.ErrStop) {
			return nil
		}
		return err
	}
	if err := out.EmitWatermark(ctx, exec.MaxWatermark); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	return nil
}
