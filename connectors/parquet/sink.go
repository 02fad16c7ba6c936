package parquet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// SinkRowGroupRows is the row group length the sink writes: large groups
// compress better and make fewer footer entries; 1M rows of a narrow table
// is a few tens of MB buffered, encoded and compressed.
const SinkRowGroupRows = 1 << 20

// Sink writes one INSERT INTO statement's rows to one new Parquet file:
// part-<uuid>-0.parquet inside the dataset's directory, or the dataset's
// path itself when it names a .parquet file (which must not exist yet: a
// Parquet file cannot be appended to, and replacing it would lose rows).
//
// Batches go to the file as Arrow: a columnar batch's record is handed to
// pqarrow as it is (no row is built), a row batch is encoded once with
// exec.EncodeRows. Rows are written to a hidden temporary file next to the
// target, renamed into place by Finish, so a reader never sees a partial
// file; Close without Finish (an error or a cancelled statement) removes
// it. Snappy compression, row groups of SinkRowGroupRows.
type Sink struct {
	table  string // the table's name, for messages
	schema *arrow.Schema
	final  string // where the file ends up
	tmp    string // where it is written until Finish
	exact  bool   // final is the dataset's path (not a new name in a directory)
	mem    memory.Allocator
	rgRows int64

	f         *fileSink
	w         *pqarrow.FileWriter
	rows      int64
	failed    bool // the writer gave an error: the file is abandoned
	committed bool

	// Rolling (a directory sink with a rollover interval): the current
	// file is published and the next begun once it has been open that
	// long, on the next batch or on the timer (exec.ProcessingTimer).
	rollover  time.Duration
	opened    time.Time // when the current file was created
	published int       // files published so far
	now       func() time.Time
}

var _ exec.ColumnarOperator = (*Sink)(nil)

// NewSink prepares the sink for one statement. It creates nothing on disk:
// the file is made on the first batch (or by Finish for an empty result),
// so a statement that fails to plan leaves nothing behind.
func (d *Dataset) NewSink(spec connectors.SinkSpec) (*Sink, error) {
	name := spec.Name
	if name == "" {
		name = d.path
	}
	s := &Sink{table: name, schema: d.schema, mem: d.mem, rgRows: d.rowGroupRows, now: time.Now}
	if s.rgRows <= 0 {
		s.rgRows = SinkRowGroupRows
	}
	if strings.ContainsAny(d.path, "*?[") {
		return nil, fmt.Errorf("parquet sink '%s': cannot write to the glob '%s': give the table a directory or a .parquet file as its path", name, d.path)
	}
	st, err := os.Stat(d.path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("parquet sink '%s': %w", name, err)
	}
	switch {
	case exists && st.IsDir(), strings.HasSuffix(d.path, "/"), strings.HasSuffix(d.path, string(filepath.Separator)):
		base := "part-" + uuid.NewString() + "-0.parquet"
		s.final = filepath.Join(d.path, base)
		s.tmp = filepath.Join(d.path, "."+base+".inprogress")
	case exists:
		return nil, fmt.Errorf("parquet sink '%s': '%s' already exists: a Parquet file cannot be appended to (make the table's path a directory to add a file per INSERT)", name, d.path)
	case strings.HasSuffix(strings.ToLower(d.path), ".parquet"):
		s.final, s.exact = d.path, true
		dir, base := filepath.Split(d.path)
		s.tmp = filepath.Join(dir, "."+base+".inprogress")
	default:
		// A path that does not exist and does not name a .parquet file is
		// a directory to be.
		base := "part-" + uuid.NewString() + "-0.parquet"
		s.final = filepath.Join(d.path, base)
		s.tmp = filepath.Join(d.path, "."+base+".inprogress")
	}
	if !s.exact {
		s.rollover = d.rollover
	}
	// Fail now, not at the first batch, when a column has no Parquet type.
	if _, err := pqarrow.ToParquet(s.schema, s.writerProps(), s.arrowProps()); err != nil {
		return nil, fmt.Errorf("parquet sink '%s': %w", name, err)
	}
	return s, nil
}

// Path is where the file is written (once Finish has run).
func (s *Sink) Path() string { return s.final }

// Rows is the number of rows written so far.
func (s *Sink) Rows() int64 { return s.rows }

// Kind is "parquet-sink".
func (s *Sink) Kind() string { return "parquet-sink" }

// Capabilities: the sink writes a columnar batch's record as it is.
func (s *Sink) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true}
}

// ProcessColumnar writes b's record. It never emits, so it always handles
// the batch (an error included).
func (s *Sink) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	return true, s.write(b.Record())
}

// Process is the row path: the rows are encoded once into a record of the
// table's schema and written like a columnar batch.
func (s *Sink) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if b.Len() == 0 {
		return nil
	}
	rec, err := exec.EncodeRows(s.mem, s.schema, b.Rows())
	if err != nil {
		return fmt.Errorf("parquet sink '%s': in the batch of rows %d-%d: %w", s.table, s.rows+1, s.rows+int64(b.Len()), err)
	}
	defer rec.Release()
	return s.write(rec)
}

// OnWatermark: a file has no event time; nothing to forward to.
func (s *Sink) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// Finish writes the footer and moves the file into place.
func (s *Sink) Finish(ctx context.Context, input int, out exec.Emitter) error {
	if s.committed {
		return nil
	}
	if s.w == nil && s.published > 0 && !s.failed {
		s.committed = true // the rolled files hold every row: no empty last file
		return nil
	}
	if err := s.publish(); err != nil {
		return err
	}
	s.committed = true
	return nil
}

// publish writes the current file's footer and renames it into place.
func (s *Sink) publish() error {
	if err := s.open(); err != nil {
		return err
	}
	if s.failed {
		return fmt.Errorf("parquet sink '%s': %s: an earlier write failed", s.table, s.final)
	}
	// Writes the footer, then flushes, syncs and closes the file.
	err := s.w.Close()
	s.w, s.f = nil, nil
	if err == nil && s.exact {
		if _, serr := os.Lstat(s.final); serr == nil {
			err = fmt.Errorf("'%s' was created by someone else while the statement ran", s.final)
		}
	}
	if err == nil {
		err = os.Rename(s.tmp, s.final)
	}
	if err != nil {
		s.failed = true
		s.abort()
		return fmt.Errorf("parquet sink '%s': %s: %w", s.table, s.final, err)
	}
	s.published++
	return nil
}

// roll publishes the current file when it has been open for the rollover
// interval, and names the next one (created by the next batch).
func (s *Sink) roll() error {
	if s.rollover <= 0 || s.w == nil || s.failed || s.now().Sub(s.opened) < s.rollover {
		return nil
	}
	if err := s.publish(); err != nil {
		return err
	}
	dir := filepath.Dir(s.final)
	base := "part-" + uuid.NewString() + "-0.parquet"
	s.final, s.tmp = filepath.Join(dir, base), filepath.Join(dir, "."+base+".inprogress")
	return nil
}

// NextProcessingTime implements exec.ProcessingTimer: a rolling sink's
// current file is due when it has been open for the rollover interval.
func (s *Sink) NextProcessingTime() (time.Time, bool) {
	if s.rollover <= 0 || s.w == nil || s.failed {
		return time.Time{}, false
	}
	return s.opened.Add(s.rollover), true
}

// OnProcessingTime implements exec.ProcessingTimer: publishes a due file
// even when no rows arrive.
func (s *Sink) OnProcessingTime(context.Context, exec.Emitter) error { return s.roll() }

// Close removes the temporary file unless Finish committed it.
func (s *Sink) Close() {
	if !s.committed {
		s.abort()
	}
}

// abort releases the writer and deletes the partial file. The writer is
// closed (which writes a footer nobody reads) because that is what gives
// its buffered pages back to the allocator.
func (s *Sink) abort() {
	if s.f != nil {
		s.f.discard = true
	}
	if s.w != nil {
		func() {
			defer func() { _ = recover() }() // the writer may be half-broken
			_ = s.w.Close()
		}()
		s.w = nil
	}
	if s.f != nil {
		_ = s.f.Close()
		s.f = nil
	}
	if s.tmp != "" {
		_ = os.Remove(s.tmp)
	}
}

func (s *Sink) writerProps() *pq.WriterProperties {
	return pq.NewWriterProperties(
		pq.WithAllocator(s.mem),
		pq.WithCompression(compress.Codecs.Snappy),
		pq.WithMaxRowGroupLength(s.rgRows),
		pq.WithDictionaryDefault(true),
		pq.WithCreatedBy("clink"),
	)
}

func (s *Sink) arrowProps() pqarrow.ArrowWriterProperties {
	// The stored Arrow schema lets Arrow readers get back the exact types
	// (a TIMESTAMP(0) column is written as milliseconds otherwise).
	return pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(s.mem), pqarrow.WithStoreSchema())
}

// open creates the temporary file and the writer, once.
func (s *Sink) open() error {
	if s.w != nil || s.failed {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.tmp), 0o755); err != nil {
		return fmt.Errorf("parquet sink '%s': %w", s.table, err)
	}
	osf, err := os.OpenFile(s.tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("parquet sink '%s': %w", s.table, err)
	}
	f := &fileSink{Writer: bufio.NewWriterSize(osf, 1<<20), f: osf}
	w, err := pqarrow.NewFileWriter(s.schema, f, s.writerProps(), s.arrowProps())
	if err != nil {
		osf.Close()
		os.Remove(s.tmp)
		return fmt.Errorf("parquet sink '%s': %s: %w", s.table, s.final, err)
	}
	s.f, s.w = f, w
	s.opened = s.now()
	return nil
}

// write appends rec to the current row group (pqarrow starts the next one
// at SinkRowGroupRows). rec must have the table's column types; names and
// nullability may differ (INSERT matches columns by position), so the
// columns are re-labelled with the table's schema rather than copied.
func (s *Sink) write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if err := s.check(rec); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	if s.failed {
		return fmt.Errorf("parquet sink '%s': %s: an earlier write failed", s.table, s.final)
	}
	if !rec.Schema().Equal(s.schema) {
		rec = array.NewRecordBatch(s.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	if err := s.writeBuffered(rec); err != nil {
		s.failed = true
		return fmt.Errorf("parquet sink '%s': %s: writing rows %d-%d: %w", s.table, s.final, s.rows+1, s.rows+rec.NumRows(), err)
	}
	s.rows += rec.NumRows()
	return s.roll()
}

// writeBuffered turns a panic inside the writer into an error.
func (s *Sink) writeBuffered(rec arrow.RecordBatch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in the Parquet writer: %v", r)
		}
	}()
	return s.w.WriteBuffered(rec)
}

// check verifies rec against the table's columns: the planner coerces an
// INSERT's columns to the table's types, so a mismatch here is a planner
// bug, reported by name and position rather than as a corrupt file; a NULL
// in a NOT NULL column is the user's, reported with its row.
func (s *Sink) check(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != s.schema.NumFields() {
		return fmt.Errorf("parquet sink '%s': a batch has %d columns, the table %d", s.table, rec.NumCols(), s.schema.NumFields())
	}
	for i, f := range s.schema.Fields() {
		col := rec.Column(i)
		if !arrow.TypeEqual(col.DataType(), f.Type) {
			return fmt.Errorf("parquet sink '%s': column %d ('%s') is %s, the table's is %s", s.table, i+1, f.Name, col.DataType(), f.Type)
		}
		if !f.Nullable && col.NullN() > 0 {
			row := 0
			for row < col.Len() && !col.IsNull(row) {
				row++
			}
			return fmt.Errorf("parquet sink '%s': column %d ('%s') is NOT NULL, but row %d is NULL", s.table, i+1, f.Name, s.rows+int64(row)+1)
		}
	}
	return nil
}

// fileSink is the writer's file: the writer makes many small writes (a
// page header, then the page), so they are buffered; Close flushes and
// fsyncs before closing, because Finish's rename must not publish a file
// whose data is still only in the page cache. An abandoned file is closed
// without either.
type fileSink struct {
	*bufio.Writer
	f       *os.File
	discard bool
	closed  bool
}

func (b *fileSink) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.discard {
		return b.f.Close()
	}
	err := b.Flush()
	if err == nil {
		err = b.f.Sync()
	}
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	return err
}
