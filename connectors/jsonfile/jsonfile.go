// Package jsonfile reads newline-delimited JSON files ('connector' =
// 'filesystem', 'format' = 'json'): a file, a glob or a directory, decoded
// by the columnar bridge of connectors/jsonfmt. Scans are bounded.
package jsonfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/exec"
)

const defaultBatchSize = 8192

// Table is a set of NDJSON files.
type Table struct {
	path   string
	files  []string
	bytes  int64
	schema *arrow.Schema
	opts   jsonfmt.Options
	mem    memory.Allocator
}

// NewTable builds a table from its WITH options ('path', 'format' = 'json',
// the json.* options and 'on-error'). declared is required: JSON carries no
// schema to infer from.
func NewTable(options map[string]string, declared *arrow.Schema) (*Table, error) {
	for k, v := range options {
		switch {
		case k == "connector", k == "path", jsonfmt.IsOption(k):
		case k == "format":
			if v != "json" {
				return nil, fmt.Errorf("filesystem json: option 'format' = '%s': this reader is for 'json'", v)
			}
		default:
			return nil, fmt.Errorf("filesystem json: unknown option '%s'", k)
		}
	}
	path := options["path"]
	if path == "" {
		return nil, fmt.Errorf("filesystem json: option 'path' is required")
	}
	files, err := expand(path)
	if err != nil {
		return nil, err
	}
	if declared == nil || len(declared.Fields()) == 0 {
		// No columns declared (a path query, or CREATE TABLE without
		// columns): infer them from the first records, as DuckDB does.
		if declared, err = inferSchema(files[0], inferRecords); err != nil {
			return nil, fmt.Errorf("filesystem json '%s': %w", path, err)
		}
	}
	opts, err := jsonfmt.ParseOptions(options)
	if err != nil {
		return nil, fmt.Errorf("filesystem json '%s': %w", path, err)
	}
	if _, err := jsonfmt.NewDecoder(memory.DefaultAllocator, declared, opts); err != nil {
		return nil, fmt.Errorf("filesystem json '%s': %w", path, err)
	}
	t := &Table{path: path, files: files, schema: declared, opts: opts, mem: memory.DefaultAllocator}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			t.bytes += st.Size()
		}
	}
	return t, nil
}

// expand resolves a file, a glob or a directory (its non-hidden files).
func expand(path string) ([]string, error) {
	if st, err := os.Stat(path); err == nil {
		if !st.IsDir() {
			return []string{path}, nil
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("filesystem json: %w", err)
		}
		var out []string
		for _, e := range ents {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "_") {
				out = append(out, filepath.Join(path, e.Name()))
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("filesystem json: directory '%s' has no files", path)
		}
		return out, nil
	}
	out, err := filepath.Glob(path)
	if err != nil {
		return nil, fmt.Errorf("filesystem json: bad pattern '%s': %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("filesystem json: no file matches '%s'", path)
	}
	sort.Strings(out)
	return out, nil
}

// WithAllocator returns a copy whose sources allocate from mem.
func (t *Table) WithAllocator(mem memory.Allocator) *Table {
	c := *t
	c.mem = mem
	return &c
}

// Schema is the declared schema.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Bounded: files end.
func (t *Table) Bounded() bool { return true }

// Describe is the table for EXPLAIN.
func (t *Table) Describe() string {
	return fmt.Sprintf("json '%s' (%d files)", t.path, len(t.files))
}

// Open returns a source of the columns in spec.
func (t *Table) Open(spec connectors.ScanSpec) (exec.Source, error) { return t.OpenSource(spec) }

// OpenSource is Open with the concrete type.
func (t *Table) OpenSource(spec connectors.ScanSpec) (*Source, error) {
	cols := spec.Columns
	if cols == nil {
		for i := range t.schema.Fields() {
			cols = append(cols, i)
		}
	}
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c < 0 || c >= len(t.schema.Fields()) {
			return nil, fmt.Errorf("filesystem json '%s': scan column %d out of range", t.path, c)
		}
		fs[i] = t.schema.Field(c)
	}
	schema := arrow.NewSchema(fs, nil)
	// The decoder judges each record against every declared column, not
	// only those read, so a bad record is bad whatever the query reads.
	dec, err := jsonfmt.NewProjectedDecoder(t.mem, t.schema, cols, t.opts)
	if err != nil {
		return nil, err
	}
	bs := defaultBatchSize
	if spec.BatchSize > 0 {
		bs = spec.BatchSize
	}
	src := &Source{t: t, schema: schema, dec: dec, batchSize: bs, progress: spec.Progress}
	if spec.Splits > 1 {
		src.split, src.splits = int64(spec.Split), int64(spec.Splits)
		if spec.Share != nil {
			v := spec.Share.Get(func() any { return newPieceQueue(t.files, spec.Splits) })
			q, ok := v.(*pieceQueue)
			if !ok {
				return nil, fmt.Errorf("filesystem json '%s': the scan's shared state is a %T, not this reader's pieces", t.path, v)
			}
			src.queue = q
		}
	}
	return src, nil
}

// MaxSplits makes the table a connectors.SplitTable, in any number of
// parts. With a connectors.Share the parts take pieces of the files from
// one queue as they run (pieces.go); without one, every file is cut into
// as many byte ranges as there are splits, and a split reads the lines that
// start in its range, so parallel sources read one big file together.
func (t *Table) MaxSplits() int { return 0 }

// Source reads the files in order, one batch of lines at a time.
type Source struct {
	t         *Table
	schema    *arrow.Schema
	dec       *jsonfmt.Decoder
	batchSize int
	progress  *exec.Progress
	// split of splits (0 of 0: the whole files); see Table.MaxSplits.
	split, splits int64
	// queue, when set, hands out the pieces this part reads instead of
	// its fixed split.
	queue *pieceQueue
	// pieces counts the pieces this part took from queue.
	pieces int
	// buf is reused from one file or piece to the next: one read buffer
	// per part, however many pieces it takes.
	buf []byte
	// searched counts the bytes searched for line ends, which tests hold
	// to the bytes read.
	searched int64
}

// Kind names the source.
func (s *Source) Kind() string { return "json-file-source" }

// Capabilities: batches are born columnar unless the decode falls back.
func (s *Source) Capabilities() exec.Capabilities { return exec.Capabilities{EmitsColumnar: true} }

// Schema is the emitted batches' schema.
func (s *Source) Schema() *arrow.Schema { return s.schema }

// Stats are the decode counters, for EXPLAIN ANALYZE.
func (s *Source) Stats() jsonfmt.DecodeStats { return s.dec.Stats() }

// Run reads every file (or the pieces it takes), then emits the final
// watermark.
func (s *Source) Run(ctx context.Context, out exec.Emitter) error {
	if s.progress != nil {
		// Every part stores the same total: the table's bytes, once.
		s.progress.BytesTotal.Store(s.t.bytes)
	}
	if err := s.readAll(ctx, out); err != nil {
		if errors.Is(err, exec.ErrStop) {
			return nil // told to stop: take no more pieces
		}
		return err
	}
	if err := out.EmitWatermark(ctx, exec.MaxWatermark); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	return nil
}

func (s *Source) readAll(ctx context.Context, out exec.Emitter) error {
	if s.queue == nil {
		for _, f := range s.t.files {
			if err := s.readFile(ctx, f, out); err != nil {
				return err
			}
		}
		return nil
	}
	if s.queue.err != nil {
		return s.queue.err
	}
	for {
		p, ok := s.queue.take()
		if !ok {
			return nil
		}
		s.pieces++
		if err := s.readPiece(ctx, p, out); err != nil {
			return err
		}
	}
}

const (
	// chunkSize is how much a range reads at a time. A read lands in the
	// core's L2 cache, where the decoder finds it: 256 KB chunks (about
	// a thousand nexmark bids) cut reading and splitting the bench's 514
	// MB bids.json from 97 to 75 ms at one thread and from 77 to 50 ms at
	// two against 4 MB chunks; 128-512 KB are as fast, 64 KB and less pay
	// for their system calls.
	chunkSize = 256 << 10
	// tailRead is how much a range reads at a time past its end, where it
	// only needs the rest of the line that straddles the end.
	tailRead = 64 << 10
)

// byteRange is the part of a file of size bytes this source reads: the
// lines that start in [from, to).
func (s *Source) byteRange(size int64) (from, to int64) {
	if s.splits <= 1 {
		return 0, size
	}
	return size * s.split / s.splits, size * (s.split + 1) / s.splits
}

func (s *Source) readFile(ctx context.Context, path string, out exec.Emitter) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("filesystem json: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("filesystem json '%s': %w", path, err)
	}
	from, to := s.byteRange(st.Size())
	return s.readRange(ctx, f, path, from, to, out)
}

func (s *Source) readPiece(ctx context.Context, p piece, out exec.Emitter) error {
	f, err := os.Open(p.path)
	if err != nil {
		return fmt.Errorf("filesystem json: %w", err)
	}
	defer f.Close()
	return s.readRange(ctx, f, p.path, p.from, p.to, out)
}

// readRange decodes the lines of f that start in [from, to).
//
// The decoder walks the read bytes in place and ends each record at its
// newline (jsonfmt.DecodeLines): no line split first, which was a tenth of
// a COUNT/SUM query's CPU over the bench's bids.json.
//
// Tried and rejected: mapping the file (mmap) and decoding the lines in
// place, to save read(2)'s copy from the page cache (about a sixth of the
// CPU of a COUNT/SUM query over the bench's 514 MB bids.json). On this
// VM the page faults of a fresh mapping cost far more than the copy: the
// bench's json query took 0.59 s mapped against 0.33-0.35 s read, one
// thread, alternating runs.
func (s *Source) readRange(ctx context.Context, f *os.File, path string, from, to int64, out exec.Emitter) error {
	if from >= to {
		return nil
	}
	// A line starting before from belongs to the range before: start one
	// byte early and drop everything up to the first newline (which is
	// that byte itself when a line starts exactly at from).
	skipFirst := from > 0
	pos := from // file offset of buf[0]
	if skipFirst {
		pos = from - 1
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return fmt.Errorf("filesystem json '%s': %w", path, err)
	}
	if s.buf == nil {
		s.buf = make([]byte, chunkSize)
	}
	buf := s.buf
	defer func() { s.buf = buf }() // keep a grown buffer for the next range
	// buf[:clean] holds no newline: each byte is searched once, so a line
	// longer than a read costs time linear in its length, not a rescan of
	// everything read so far per read (a 100 MB line took 322 s).
	filled, clean := 0, 0
	eof, done := false, false
	for !eof && !done {
		if err := ctx.Err(); err != nil {
			return err
		}
		if filled == len(buf) {
			buf = append(buf, make([]byte, len(buf))...) // a line longer than the buffer
		}
		// Read up to the range's end; past it, only as far as the line
		// that straddles the end needs, a little at a time, so a small
		// piece does not read a whole buffer of its neighbour's bytes.
		want := len(buf) - filled
		if rem := to - (pos + int64(filled)); rem > 0 {
			want = int(min(rem, int64(want)))
		} else {
			want = min(want, tailRead)
		}
		at := pos + int64(filled) // file offset of this read
		n, err := io.ReadFull(f, buf[filled:filled+want])
		filled += n
		if s.progress != nil {
			// Count only the range's own bytes, so the parts' counts
			// add up to the files' size: the byte before from and the
			// straddling line's tail are another range's.
			s.progress.BytesRead.Add(max(0, min(at+int64(n), to)-max(at, from)))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			eof = true
		} else if err != nil {
			return fmt.Errorf("filesystem json '%s': %w", path, err)
		}
		end := filled
		if !eof {
			s.searched += int64(filled - clean)
			i := bytes.LastIndexByte(buf[clean:filled], '\n')
			if i < 0 {
				if skipFirst && pos+int64(filled) >= to {
					// No newline in [from-1, to): no line starts in the
					// range, which lies inside one that started earlier.
					// Reading on to that line's end would make every range
					// inside a long line read the rest of it.
					return nil
				}
				clean = filled
				continue // no complete line yet: read more (growing if full)
			}
			end = clean + i + 1
		}
		data := buf[:end]
		if skipFirst {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break // the range lies inside one line that started earlier
			}
			data = data[i+1:]
			skipFirst = false
		}
		// Only the lines that start before to are this range's: cut after
		// the line holding to-1.
		base := pos + int64(end-len(data)) // file offset of data[0]
		if base+int64(len(data)) > to {
			k := int(to - base)
			if k <= 0 {
				data, done = nil, true
			} else if i := bytes.IndexByte(data[k-1:], '\n'); i >= 0 {
				data, done = data[:k+i], true
			}
		}
		for len(data) > 0 {
			res, used, err := s.dec.DecodeLines(data, s.batchSize)
			if err != nil {
				return s.recordError(f, path, base, err)
			}
			if err := s.emit(ctx, res, out); err != nil {
				return err
			}
			data, base = data[used:], base+int64(used)
		}
		pos += int64(end)
		filled = copy(buf, buf[end:filled])
		clean = filled // what follows the last newline has none
		if pos >= to {
			done = true // the next line starts at or after the end: not ours
		}
	}
	return nil
}

// recordError names a bad record's place: its byte offset when the file is
// read in parts, its line when read whole (counted only now, on the error).
func (s *Source) recordError(f *os.File, path string, base int64, err error) error {
	var re *jsonfmt.RecordError
	if !errors.As(err, &re) {
		return err
	}
	off := base + int64(re.Offset)
	at, n := "byte offset", off
	if s.splits <= 1 {
		line, lerr := lineAt(f, off)
		if lerr != nil {
			return fmt.Errorf("file '%s' byte offset %d: %w", path, off, err)
		}
		at, n = "line", line
	}
	return fmt.Errorf("file '%s' %s %d: %w (set 'on-error' = 'skip' to skip bad records)", path, at, n, err)
}

// lineAt is the number of the line starting at byte off of f.
func lineAt(f *os.File, off int64) (int64, error) {
	buf := make([]byte, chunkSize)
	line := int64(1)
	for at := int64(0); at < off; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), off-at)], at)
		line += int64(bytes.Count(buf[:n], []byte{'\n'}))
		at += int64(n)
		if err != nil && at < off {
			return 0, err
		}
	}
	return line, nil
}

// emit sends a decoded batch on.
func (s *Source) emit(ctx context.Context, res jsonfmt.Result, out exec.Emitter) error {
	if res.N == 0 {
		if res.Rec != nil {
			res.Rec.Release() // every line was blank or skipped
		}
		return nil
	}
	var b *exec.Batch
	if res.Rec != nil {
		b = exec.NewColumnarBatch(res.Rec)
	} else {
		b = exec.NewRowBatch(s.schema, res.Rows)
	}
	err := out.Emit(ctx, b)
	b.Release()
	if s.progress != nil && err == nil {
		s.progress.RowsRead.Add(int64(res.N))
	}
	return err
}

// Report is the source's decode statistics for EXPLAIN ANALYZE, and for a
// shared split scan the pieces this part read (EXPLAIN sums them over the
// parts: the pieces the files were cut into).
func (s *Source) Report() exec.OperatorReport {
	r := s.Stats().Report()
	if s.queue != nil {
		r.Counters = append(r.Counters, exec.NamedCount{Name: "file pieces", Value: int64(s.pieces)})
	}
	return r
}
