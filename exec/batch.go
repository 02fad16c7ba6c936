package exec

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Batch is one batch of rows in up to two representations of the same data:
// an Arrow record (the columnar sidecar) and a row form. A batch born
// columnar carries only the record; the first row access decodes it once,
// caches the rows, and counts the materialisation. A row batch behaves as
// if Arrow did not exist.
//
// Ownership follows arrow-go: Emit lends a batch to its consumer for the
// duration of the call. A consumer that keeps it past the call must Retain
// it and Release it later. Row slices are shared, never mutated.
type Batch struct {
	schema *arrow.Schema
	rec    arrow.RecordBatch
	n      int

	once sync.Once
	rows []Row
	mat  atomic.Bool // rows were decoded from rec (counted)

	refs atomic.Int64
}

// NewColumnarBatch wraps rec as a born-columnar batch. It takes over the
// caller's reference to rec.
func NewColumnarBatch(rec arrow.RecordBatch) *Batch {
	b := &Batch{schema: rec.Schema(), rec: rec, n: int(rec.NumRows())}
	b.refs.Store(1)
	return b
}

// NewRowBatch wraps rows of schema as a row batch.
func NewRowBatch(schema *arrow.Schema, rows []Row) *Batch {
	b := &Batch{schema: schema, rows: rows, n: len(rows)}
	b.once.Do(func() {})
	b.refs.Store(1)
	return b
}

// Schema is the batch's schema, in either representation.
func (b *Batch) Schema() *arrow.Schema { return b.schema }

// Len is the number of rows. It never decodes.
func (b *Batch) Len() int { return b.n }

// IsColumnar reports whether the batch carries an Arrow record.
func (b *Batch) IsColumnar() bool { return b.rec != nil }

// Record is the columnar sidecar, or nil for a row batch. Borrowed: Retain
// it to keep it.
func (b *Batch) Record() arrow.RecordBatch { return b.rec }

// Materialized reports whether this batch's rows were decoded from its record.
func (b *Batch) Materialized() bool { return b.mat.Load() }

// Rows returns the row form, decoding the record on the first call. The
// decode is counted once per batch, process-wide; the runner charges it to
// the stage whose call caused it.
func (b *Batch) Rows() []Row {
	b.once.Do(func() {
		b.rows = DecodeRows(b.rec)
		b.mat.Store(true)
		Global.BatchesMaterialized.Add(1)
		Global.RowsMaterialized.Add(int64(len(b.rows)))
	})
	return b.rows
}

// Retain adds a reference.
func (b *Batch) Retain() { b.refs.Add(1) }

// Release drops a reference; the last one releases the record.
func (b *Batch) Release() {
	if b.refs.Add(-1) == 0 && b.rec != nil {
		b.rec.Release()
	}
}

// Counters are process-wide totals, published on /metrics.
type Counters struct {
	BatchesMaterialized atomic.Int64
	RowsMaterialized    atomic.Int64
	DecodeFallbacks     atomic.Int64
	SkippedRecords      atomic.Int64
	// Checkpoints completed by every graph, and the latest one's id,
	// duration and size.
	Checkpoints             atomic.Int64
	LastCheckpointID        atomic.Int64
	LastCheckpointNanos     atomic.Int64
	LastCheckpointSizeBytes atomic.Int64
}

// Global holds the process-wide counters.
var Global Counters
