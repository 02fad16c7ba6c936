package ops

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// emitRecord emits rec as a born-columnar batch. It takes over the caller's
// reference to rec; a consumer that keeps the batch retains it.
func emitRecord(ctx context.Context, out exec.Emitter, rec arrow.RecordBatch) error {
	b := exec.NewColumnarBatch(rec)
	defer b.Release()
	return out.Emit(ctx, b)
}

// emitRows emits rows as a row batch (nothing when there are none).
func emitRows(ctx context.Context, out exec.Emitter, schema *arrow.Schema, rows []exec.Row) error {
	if len(rows) == 0 {
		return nil
	}
	b := exec.NewRowBatch(schema, rows)
	defer b.Release()
	return out.Emit(ctx, b)
}

// emitChunk is the most rows a blocking operator (sort, aggregate) puts in
// one output batch, so a LIMIT above it can stop early.
const emitChunk = 8192

// emitRecordChunks emits rec in zero-copy slices of at most emitChunk rows
// and releases it.
func emitRecordChunks(ctx context.Context, out exec.Emitter, rec arrow.RecordBatch) error {
	defer rec.Release()
	n := rec.NumRows()
	if n <= emitChunk {
		rec.Retain()
		return emitRecord(ctx, out, rec)
	}
	for start := int64(0); start < n; start += emitChunk {
		end := min(start+emitChunk, n)
		if err := emitRecord(ctx, out, rec.NewSlice(start, end)); err != nil {
			return err
		}
	}
	return nil
}

// emitRowChunks is emitRecordChunks for rows.
func emitRowChunks(ctx context.Context, out exec.Emitter, schema *arrow.Schema, rows []exec.Row) error {
	for start := 0; start < len(rows); start += emitChunk {
		end := min(start+emitChunk, len(rows))
		if err := emitRows(ctx, out, schema, rows[start:end:end]); err != nil {
			return err
		}
	}
	return nil
}
