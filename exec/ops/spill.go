package ops

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// spillDir holds one operator's spill files: Arrow IPC streams in a
// directory of their own under the budget's spill directory. Each file is
// unlinked as soon as it is created (Linux keeps an open file's data), so
// even a process killed mid-query leaves only an empty directory, and
// remove takes the directory on every path (success, error, cancel: the
// graph closes every operator).
type spillDir struct {
	base  string // parent ("": os.TempDir())
	dir   string // created with the first file
	files []*spillFile
	stats spillStats
}

// spillStats is what EXPLAIN ANALYZE shows of a spilling operator.
type spillStats struct {
	bytes, rows, files int64
	partitions         int64 // GROUP BY, join: partitions written
	runs               int64 // ORDER BY: sorted runs written
	flushes            int64 // a partial GROUP BY's early emissions
}

func (s *spillStats) add(o spillStats) {
	s.bytes += o.bytes
	s.rows += o.rows
	s.files += o.files
	s.partitions += o.partitions
	s.runs += o.runs
	s.flushes += o.flushes
}

// counters are the stats as EXPLAIN ANALYZE names them (nothing when
// nothing spilled).
func (s spillStats) counters() []exec.NamedCount {
	if s.files == 0 {
		if s.flushes > 0 {
			return []exec.NamedCount{{Name: "early flushes", Value: s.flushes}}
		}
		return nil
	}
	out := []exec.NamedCount{{Name: "spilled bytes", Value: s.bytes}, {Name: "spilled rows", Value: s.rows},
		{Name: "spill files", Value: s.files}}
	if s.partitions > 0 {
		out = append(out, exec.NamedCount{Name: "spill partitions", Value: s.partitions})
	}
	if s.runs > 0 {
		out = append(out, exec.NamedCount{Name: "sorted runs", Value: s.runs})
	}
	return out
}

func newSpillDir(b *exec.MemoryBudget) *spillDir {
	d := &spillDir{}
	if b != nil {
		d.base = b.SpillDir()
	}
	return d
}

// create opens a new spill file for records of schema.
func (d *spillDir) create(schema *arrow.Schema, mem memory.Allocator) (*spillFile, error) {
	if d.dir == "" {
		base := d.base
		if base == "" {
			base = os.TempDir()
		}
		dir, err := os.MkdirTemp(base, "clink-spill-")
		if err != nil {
			return nil, fmt.Errorf("spill: %w", err)
		}
		d.dir = dir
	}
	f, err := os.CreateTemp(d.dir, "run-*.arrow")
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	_ = os.Remove(f.Name()) // the open descriptor keeps the data
	sf := &spillFile{f: f, schema: schema, mem: mem, stats: &d.stats}
	sf.bw = bufio.NewWriterSize(&countingWriter{w: f, n: &d.stats.bytes}, 1<<16)
	sf.w = ipc.NewWriter(sf.bw, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	d.files = append(d.files, sf)
	d.stats.files++
	return sf, nil
}

// remove closes every file and removes the directory.
func (d *spillDir) remove() {
	for _, f := range d.files {
		f.close()
	}
	d.files = nil
	if d.dir != "" {
		_ = os.RemoveAll(d.dir)
		d.dir = ""
	}
}

type countingWriter struct {
	w io.Writer
	n *int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// spillFile is one Arrow IPC stream: written, then read back once.
type spillFile struct {
	f      *os.File
	bw     *bufio.Writer
	w      *ipc.Writer
	schema *arrow.Schema
	mem    memory.Allocator
	stats  *spillStats
	rows   int64
}

func (f *spillFile) write(rec arrow.RecordBatch) error {
	if err := f.w.Write(rec); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	f.rows += rec.NumRows()
	f.stats.rows += rec.NumRows()
	return nil
}

// reader finishes writing and reads the file from its start. The caller
// releases the reader.
func (f *spillFile) reader() (*ipc.Reader, error) {
	if f.w != nil {
		err := f.w.Close()
		if err == nil {
			err = f.bw.Flush()
		}
		f.w = nil
		if err != nil {
			return nil, fmt.Errorf("spill: %w", err)
		}
	}
	if _, err := f.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(f.f, 1<<16), ipc.WithAllocator(f.mem))
	if err != nil {
		return nil, fmt.Errorf("spill: reading back: %w", err)
	}
	return r, nil
}

// each reads the file's records in order, lending each to fn.
func (f *spillFile) each(fn func(rec arrow.RecordBatch) error) error {
	r, err := f.reader()
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
		if err := fn(r.RecordBatch()); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("spill: reading back: %w", err)
	}
	return nil
}

// replay feeds the file's records to op's columnar path as input, in
// order, stopping when ctx is cancelled.
func (f *spillFile) replay(ctx context.Context, op exec.ColumnarOperator, input int, out exec.Emitter) error {
	return f.each(func(rec arrow.RecordBatch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec.Retain()
		b := exec.NewColumnarBatch(rec)
		defer b.Release()
		_, err := op.ProcessColumnar(ctx, input, b, out)
		return err
	})
}

func (f *spillFile) close() {
	if f.w != nil {
		_ = f.w.Close()
		f.w = nil
	}
	_ = f.f.Close()
}

// spillBuffer gathers rows for one spill file in builders and writes them
// out spillRows at a time.
type spillBuffer struct {
	dir    *spillDir
	schema *arrow.Schema // plain
	mem    memory.Allocator
	bld    *array.RecordBuilder
	file   *spillFile
	n      int
}

// spillRows is the rows a spill buffer holds before it writes a record:
// large enough for the IPC framing to be noise, small enough that
// sixteen partitions' buffers stay a few MB for ordinary rows.
const spillRows = 4096

func newSpillBuffer(d *spillDir, schema *arrow.Schema, mem memory.Allocator) spillBuffer {
	return spillBuffer{dir: d, schema: schema, mem: mem, bld: array.NewRecordBuilder(mem, schema)}
}

// appendRows appends rows of rec (its columns may be dictionaries of the
// buffer's plain types).
func (s *spillBuffer) appendRows(rec arrow.RecordBatch, rows []int32) error {
	for c := 0; c < int(rec.NumCols()); c++ {
		appendRowsFromArr(s.bld.Field(c), rec.Column(c), rows)
	}
	s.n += len(rows)
	if s.n >= spillRows {
		return s.flush()
	}
	return nil
}

// appendRow appends one row-form row.
func (s *spillBuffer) appendRow(r exec.Row) error {
	for c, v := range r {
		if err := exec.AppendValue(s.bld.Field(c), v); err != nil {
			return err
		}
	}
	s.n++
	if s.n >= spillRows {
		return s.flush()
	}
	return nil
}

// flush writes what the buffer holds to its file (created on first use).
func (s *spillBuffer) flush() error {
	if s.n == 0 {
		return nil
	}
	if s.file == nil {
		f, err := s.dir.create(s.schema, s.mem)
		if err != nil {
			return err
		}
		s.file = f
	}
	rec := s.bld.NewRecordBatch()
	defer rec.Release()
	s.n = 0
	return s.file.write(rec)
}

func (s *spillBuffer) release() {
	if s.bld != nil {
		s.bld.Release()
		s.bld = nil
	}
}
