package memory

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// Sink is INSERT INTO's last stage for a memory table: it keeps a
// reference to each columnar batch's record (no copy, no rows built),
// encodes a row batch once into a record, and adds them all to the table
// as one change in Finish, so a statement that fails adds nothing and a
// scan never sees part of a statement.
type Sink struct {
	t       *Table
	name    string
	pending []arrow.RecordBatch
	rows    int64
}

var _ exec.ColumnarOperator = (*Sink)(nil)

// OpenSink returns the sink of one INSERT statement.
func (t *Table) OpenSink(spec connectors.SinkSpec) (exec.Operator, error) {
	return t.NewSink(spec)
}

// NewSink is OpenSink with the concrete type.
func (t *Table) NewSink(spec connectors.SinkSpec) (*Sink, error) {
	t.mu.Lock()
	closed := t.cur == nil
	t.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	return &Sink{t: t, name: spec.Name}, nil
}

// Kind is "memory-sink".
func (s *Sink) Kind() string { return "memory-sink" }

// Capabilities: the sink keeps a columnar batch's record as it is.
func (s *Sink) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true}
}

// ProcessColumnar keeps b's record. It never emits, so it always handles
// the batch (an error included).
func (s *Sink) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	return true, s.keep(b.Record())
}

// Process is the row path: the rows are encoded once into a record of the
// table's schema.
func (s *Sink) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if b.Len() == 0 {
		return nil
	}
	rec, err := exec.EncodeRows(s.t.mem, s.t.schema, b.Rows())
	if err != nil {
		return fmt.Errorf("memory table '%s': in the batch of rows %d-%d: %w", s.name, s.rows+1, s.rows+int64(b.Len()), err)
	}
	defer rec.Release()
	return s.keep(rec)
}

func (s *Sink) keep(rec arrow.RecordBatch) error {
	own, err := s.t.conform(rec, s.name)
	if err != nil || own == nil {
		return err
	}
	s.pending = append(s.pending, own)
	s.rows += own.NumRows()
	return nil
}

// Rows is the number of rows kept so far.
func (s *Sink) Rows() int64 { return s.rows }

// OnWatermark: a table has no event time; nothing to forward to.
func (s *Sink) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// Finish adds the statement's rows to the table.
func (s *Sink) Finish(ctx context.Context, input int, out exec.Emitter) error {
	recs := s.pending
	s.pending = nil
	if len(recs) == 0 {
		return nil
	}
	if err := s.t.commit(recs); err != nil {
		return fmt.Errorf("memory table '%s': %w", s.name, err)
	}
	return nil
}

// Close releases what Finish did not commit (an error or a cancelled
// statement).
func (s *Sink) Close() {
	for _, r := range s.pending {
		r.Release()
	}
	s.pending = nil
}
