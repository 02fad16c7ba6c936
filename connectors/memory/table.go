// Package memory is clink's session table: a connectors.Table held in
// memory as Arrow record batches, for CREATE TABLE without a connector
// (and 'connector' = 'memory'). Its scans are born columnar and split
// across parallel subtasks by row ranges; INSERT INTO writes through its
// sink (sink.go), which keeps the inserted batches as they are.
//
// The batches form an immutable snapshot. Every change (Append, the
// sink's commit, Truncate) publishes a new snapshot; a scan reads the
// snapshot that was current when it was opened, so readers never lock
// against a writer and never see half a statement. A snapshot holds a
// reference to each of its records and is reference-counted by the table
// and by the scans reading it: its memory is returned when the last of
// them lets go.
package memory

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// CoalesceRows: an appended batch this small is merged with a small last
// batch (copying both) until they reach this many rows. A table filled by
// one-row INSERTs would otherwise scan as thousands of one-row batches.
const CoalesceRows = 8192

// SplitRows is the fewest rows worth a parallel part of a scan: a smaller
// table is read by one subtask (MaxSplits).
const SplitRows = 1024

// Table is a bounded table of Arrow record batches.
type Table struct {
	schema *arrow.Schema
	mem    memory.Allocator

	mu  sync.Mutex
	cur *snapshot // nil once closed
}

var (
	_ connectors.SplitTable = (*Table)(nil)
	_ connectors.SinkTable  = (*Table)(nil)
)

// errClosed is returned by every use of a table after Close (DROP TABLE).
var errClosed = errors.New("memory table: the table was dropped")

// snapshot is the table's contents at one moment.
type snapshot struct {
	recs []arrow.RecordBatch
	rows int64
	refs atomic.Int64
}

func newSnapshot(recs []arrow.RecordBatch) *snapshot {
	s := &snapshot{recs: recs}
	for _, r := range recs {
		s.rows += r.NumRows()
	}
	s.refs.Store(1)
	return s
}

func (s *snapshot) retain() { s.refs.Add(1) }

func (s *snapshot) release() {
	if s.refs.Add(-1) == 0 {
		for _, r := range s.recs {
			r.Release()
		}
		s.recs = nil
	}
}

// NewTable returns an empty table of schema whose batches (the ones it
// builds: AppendRows, coalescing) are allocated from mem (nil:
// memory.DefaultAllocator).
func NewTable(schema *arrow.Schema, mem memory.Allocator) *Table {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Table{schema: schema, mem: mem, cur: newSnapshot(nil)}
}

// Schema is the table's schema.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Bounded is true: a scan reads the snapshot and ends.
func (t *Table) Bounded() bool { return true }

// Describe is "memory (N rows)" for EXPLAIN.
func (t *Table) Describe() string { return fmt.Sprintf("memory (%d rows)", t.NumRows()) }

// NumRows is the current row count; the planner reads it to decide
// whether a join broadcasts the table (plan/broadcast.go).
func (t *Table) NumRows() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return 0
	}
	return t.cur.rows
}

// MaxSplits makes a scan of fewer than 2*SplitRows rows one part, and a
// larger one at most one part per SplitRows rows.
func (t *Table) MaxSplits() int {
	return int(max(1, t.NumRows()/SplitRows))
}

// Append adds rec's rows as one change. rec must have the table's column
// types (names and nullability may differ: columns are matched by
// position; casting is the caller's job) and no NULL in a NOT NULL
// column. The table keeps its own reference to rec.
func (t *Table) Append(rec arrow.RecordBatch) error {
	own, err := t.conform(rec, "")
	if err != nil || own == nil {
		return err
	}
	return t.commit([]arrow.RecordBatch{own})
}

// AppendRows adds rows (exec.Row values of the table's column types) as
// one batch.
func (t *Table) AppendRows(rows []exec.Row) error {
	if len(rows) == 0 {
		return nil
	}
	rec, err := exec.EncodeRows(t.mem, t.schema, rows)
	if err != nil {
		return fmt.Errorf("memory table: %w", err)
	}
	defer rec.Release()
	return t.Append(rec)
}

// Truncate removes every row. Scans already open still read what they saw.
func (t *Table) Truncate() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return errClosed
	}
	t.cur.release()
	t.cur = newSnapshot(nil)
	return nil
}

// Close drops the table: its memory is returned once the scans still
// reading it end. Further use fails; closing again does nothing.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != nil {
		t.cur.release()
		t.cur = nil
	}
	return nil
}

// conform checks rec against the table's schema and returns a new
// reference to it labelled with the table's schema (nil for no rows).
// name is the statement's table name for messages ("" for Append).
func (t *Table) conform(rec arrow.RecordBatch, name string) (arrow.RecordBatch, error) {
	what := "memory table"
	if name != "" {
		what = fmt.Sprintf("memory table '%s'", name)
	}
	if int(rec.NumCols()) != t.schema.NumFields() {
		return nil, fmt.Errorf("%s: a batch has %d columns, the table %d", what, rec.NumCols(), t.schema.NumFields())
	}
	for i, f := range t.schema.Fields() {
		col := rec.Column(i)
		if !arrow.TypeEqual(col.DataType(), f.Type) {
			return nil, fmt.Errorf("%s: column %d ('%s') is %s, the table's is %s", what, i+1, f.Name, col.DataType(), f.Type)
		}
		if !f.Nullable && col.NullN() > 0 {
			return nil, fmt.Errorf("%s: column %d ('%s') is NOT NULL, but a row has NULL there", what, i+1, f.Name)
		}
	}
	if rec.NumRows() == 0 {
		return nil, nil
	}
	if rec.Schema().Equal(t.schema) {
		rec.Retain()
		return rec, nil
	}
	return array.NewRecordBatch(t.schema, rec.Columns(), rec.NumRows()), nil
}

// commit publishes a snapshot with recs (whose references it takes) after
// the current batches.
func (t *Table) commit(recs []arrow.RecordBatch) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		for _, r := range recs {
			r.Release()
		}
		return errClosed
	}
	all := make([]arrow.RecordBatch, 0, len(t.cur.recs)+len(recs))
	for _, r := range t.cur.recs {
		r.Retain()
		all = append(all, r)
	}
	for _, r := range recs {
		all = t.coalesce(all, r)
	}
	t.cur.release()
	t.cur = newSnapshot(all)
	return nil
}

// coalesce appends r to recs, merging it into the last batch when both are
// small. It takes r's reference.
func (t *Table) coalesce(recs []arrow.RecordBatch, r arrow.RecordBatch) []arrow.RecordBatch {
	n := len(recs)
	if n == 0 || r.NumRows() >= CoalesceRows || recs[n-1].NumRows()+r.NumRows() > CoalesceRows {
		return append(recs, r)
	}
	last := recs[n-1]
	merged, err := concat(t.mem, t.schema, last, r)
	if err != nil {
		// Concatenating arrays of one type cannot fail short of running
		// out of memory; keeping the batches apart loses nothing.
		return append(recs, r)
	}
	last.Release()
	r.Release()
	recs[n-1] = merged
	return recs
}

// concat copies a and b into one record of schema.
func concat(mem memory.Allocator, schema *arrow.Schema, a, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		c, err := array.Concatenate([]arrow.Array{a.Column(i), b.Column(i)}, mem)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, a.NumRows()+b.NumRows()), nil
}

// Factory is the 'memory' connector: a table of the declared columns,
// empty until INSERTs fill it.
func Factory(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
	for k := range options {
		if k != "connector" {
			return nil, fmt.Errorf("memory: unknown option '%s'", k)
		}
	}
	if declared == nil || declared.NumFields() == 0 {
		return nil, errors.New("memory: a memory table needs its columns declared")
	}
	return NewTable(declared, nil), nil
}

func init() {
	connectors.Register("memory", Factory)
}
