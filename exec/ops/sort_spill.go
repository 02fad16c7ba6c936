package ops

import (
	"container/heap"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// ORDER BY under a memory budget: when the buffered input's reservation is
// refused, the buffer is sorted (by the in-memory sort, unchanged) and
// written to disk as a run; Finish writes what is left as the last run and
// merges the runs k ways. Runs hold consecutive stretches of the input in
// arrival order and the merge breaks ties by run, so the order stays
// stable, as the in-memory sort's is.

// sortRowBytes estimates a buffered row-form row beyond its values: the
// slice header and one interface word pair per column.
const sortRowBytes = 24

// recordBytes is what a retained record holds: its buffers' lengths.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += arrayBytes(c.Data())
	}
	return n
}

func arrayBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += arrayBytes(c)
	}
	// Dictionary is a typed nil *array.Data when there is none.
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += arrayBytes(dict)
	}
	return n
}

func rowBytes(r exec.Row) int64 {
	n := int64(sortRowBytes + 16*len(r))
	for _, v := range r {
		switch x := v.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		}
	}
	return n
}

// account reserves the buffer against ctx's budget; a refusal writes the
// buffer out as a sorted run.
func (s *Sort) account(ctx context.Context) error {
	if !s.resInit {
		s.resInit = true
		s.res = exec.MemoryBudgetFrom(ctx).Reserve("ORDER BY")
		s.dir = newSpillDir(exec.MemoryBudgetFrom(ctx))
	}
	if s.res == nil {
		return nil
	}
	// Sorting needs an entry per row beside the rows (sort_key.go).
	need := s.bufBytes + int64(s.recRows+len(s.rows))*int64(entryIdx+16)
	if err := s.res.Resize(need); err == nil {
		return nil
	}
	return s.spillRun(ctx)
}

// spillRun sorts the buffer into a new run file and empties it.
func (s *Sort) spillRun(ctx context.Context) error {
	if s.recRows == 0 && len(s.rows) == 0 {
		return nil
	}
	w := &runWriter{dir: s.dir, schema: plainSchema(s.schema), mem: s.mem}
	if err := s.emitSorted(ctx, w); err != nil {
		return err
	}
	if w.file != nil {
		s.runs = append(s.runs, w.file)
		s.spilled.runs++
	}
	s.bufBytes = 0
	s.res.Release()
	return nil
}

// runWriter is an Emitter that appends what it is given to a run file.
type runWriter struct {
	dir    *spillDir
	schema *arrow.Schema
	mem    memory.Allocator
	file   *spillFile
}

func (w *runWriter) Emit(_ context.Context, b *exec.Batch) error {
	if w.file == nil {
		f, err := w.dir.create(w.schema, w.mem)
		if err != nil {
			return err
		}
		w.file = f
	}
	var rec arrow.RecordBatch
	var err error
	if b.IsColumnar() {
		var cols []arrow.Array
		if cols, err = plainColumns(w.mem, w.schema, b.Record()); err == nil {
			rec = array.NewRecordBatch(w.schema, cols, b.Record().NumRows())
			releaseAll(cols)
		}
	} else {
		rec, err = exec.EncodeRows(w.mem, w.schema, b.Rows())
	}
	if err != nil {
		return fmt.Errorf("sort: %w", err)
	}
	defer rec.Release()
	return w.file.write(rec)
}

func (w *runWriter) EmitWatermark(context.Context, int64) error { return nil }

// runCursor is one run's position in the merge.
type runCursor struct {
	run  int
	rec  arrow.RecordBatch // retained while its rows may be pending
	rows []exec.Row
	i    int
}

// mergeRuns merges the sorted runs into out, emitChunk rows a batch.
func (s *Sort) mergeRuns(ctx context.Context, out exec.Emitter) error {
	cmp := rowComparator(s.keys)
	h := &runHeap{cmp: cmp}
	var readers []*runReader
	defer func() {
		for _, r := range readers {
			r.close()
		}
	}()
	for i, f := range s.runs {
		r, err := newRunReader(f)
		if err != nil {
			return err
		}
		readers = append(readers, r)
		c := &runCursor{run: i}
		if ok, err := r.next(c); err != nil {
			return err
		} else if ok {
			h.cs = append(h.cs, c)
		}
	}
	heap.Init(h)
	schema := plainSchema(s.schema)
	var pending []arrow.RecordBatch // records whose rows the chunk may hold
	defer func() {
		for _, r := range pending {
			r.Release()
		}
	}()
	chunk := make([]exec.Row, 0, emitChunk)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		rec, err := exec.EncodeRows(s.mem, schema, chunk)
		if err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		chunk = chunk[:0]
		for _, r := range pending {
			r.Release()
		}
		pending = pending[:0]
		return emitRecord(ctx, out, rec)
	}
	for h.Len() > 0 {
		c := h.cs[0]
		chunk = append(chunk, c.rows[c.i])
		c.i++
		if c.i == len(c.rows) {
			pending = append(pending, c.rec)
			c.rec = nil
			ok, err := readers[c.run].next(c)
			if err != nil {
				return err
			}
			if ok {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
			}
		} else {
			heap.Fix(h, 0)
		}
		if len(chunk) == emitChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// runHeap orders cursors by their current row, ties by run (stability).
type runHeap struct {
	cs  []*runCursor
	cmp func(a, b exec.Row) int
}

func (h *runHeap) Len() int { return len(h.cs) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.cs[i], h.cs[j]
	if c := h.cmp(a.rows[a.i], b.rows[b.i]); c != 0 {
		return c < 0
	}
	return a.run < b.run
}
func (h *runHeap) Swap(i, j int) { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *runHeap) Push(x any)    { h.cs = append(h.cs, x.(*runCursor)) }
func (h *runHeap) Pop() any {
	x := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return x
}

// runReader reads one run's records on demand, so at most one record
// per run (and the output chunk's) is in memory during the merge.
type runReader struct {
	rd *ipc.Reader
}

func newRunReader(f *spillFile) (*runReader, error) {
	rd, err := f.reader()
	if err != nil {
		return nil, err
	}
	return &runReader{rd: rd}, nil
}

// next loads the run's next non-empty record into c (retained).
func (r *runReader) next(c *runCursor) (bool, error) {
	for r.rd.Next() {
		rec := r.rd.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rec.Retain()
		c.rec, c.rows, c.i = rec, exec.DecodeRows(rec), 0
		return true, nil
	}
	if err := r.rd.Err(); err != nil && err != io.EOF {
		return false, fmt.Errorf("spill: reading back: %w", err)
	}
	return false, nil
}

func (r *runReader) close() { r.rd.Release() }
