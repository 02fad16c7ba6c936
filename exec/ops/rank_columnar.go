package ops

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// The ranks' columnar ingest: a columnar batch is not decoded. Each row is
// read sparsely, only the columns that place it (partition keys, window
// end) and rank it (sort keys), into one reused row; only a row the ranks
// keep is read whole. The values are those DecodeRows gives, placed and
// compared by the same code as the row path, so both paths agree.

// sparseReader reads chosen columns of a record's rows into one row.
type sparseReader struct {
	rec    arrow.RecordBatch
	cols   []int
	chosen []bool
	row    exec.Row
	slab   []any // the whole rows' cells, one allocation a batch
}

func newSparseReader(rec arrow.RecordBatch, cols ...[]int) *sparseReader {
	s := &sparseReader{rec: rec, row: make(exec.Row, rec.NumCols()), chosen: make([]bool, rec.NumCols())}
	for _, cs := range cols {
		for _, c := range cs {
			if !s.chosen[c] {
				s.chosen[c] = true
				s.cols = append(s.cols, c)
			}
		}
	}
	return s
}

// at is row i with only the chosen columns set; it is reused by the next
// call.
func (s *sparseReader) at(i int) exec.Row {
	for _, c := range s.cols {
		s.row[c] = exec.Value(s.rec.Column(c), i)
	}
	return s.row
}

// whole is row i, every column, after at(i): its chosen values are
// reused. Whole rows share one backing array per batch, as decoded rows
// do, so what is kept is copied (copyKept).
func (s *sparseReader) whole(i int) exec.Row {
	ncol := len(s.row)
	if s.slab == nil {
		s.slab = make([]any, int(s.rec.NumRows())*ncol)
	}
	r := exec.Row(s.slab[i*ncol : (i+1)*ncol : (i+1)*ncol])
	for c := range r {
		if s.chosen[c] {
			r[c] = s.row[c]
		} else {
			r[c] = exec.Value(s.rec.Column(c), i)
		}
	}
	return r
}

func sortCols(keys []SortKey) []int {
	cols := make([]int, len(keys))
	for i, k := range keys {
		cols[i] = k.Col
	}
	return cols
}

// ProcessColumnar is Process without decoding the batch.
func (r *StreamRank) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if err := r.check(b.Schema()); err != nil {
		return true, err
	}
	t := r.eng
	sp := newSparseReader(b.Record(), r.partition, sortCols(t.keys))
	first := t.seq + 1
	for i := range int(b.Record().NumRows()) {
		row := sp.at(i)
		p := r.part(row)
		t.seq++
		t.top = p.top
		if !t.rejects(row, t.n) && t.insert(sp.whole(i), t.n) && !p.touched {
			p.touched = true
			r.touched = append(r.touched, p)
		}
		p.top = t.top
	}
	return true, r.emitTouched(ctx, first, out)
}

// ProcessColumnar is Process without decoding the batch.
func (r *WindowRank) ProcessColumnar(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	if err := r.check(b.Schema()); err != nil {
		return true, err
	}
	t := r.eng
	sp := newSparseReader(b.Record(), []int{r.endCol}, r.partition, sortCols(t.keys))
	first := t.seq + 1
	for i := range int(b.Record().NumRows()) {
		row := sp.at(i)
		if !r.admit(row) {
			continue
		}
		_, p, _ := r.place(row)
		t.seq++
		t.top = p.top
		if !t.rejects(row, t.n) && t.insert(sp.whole(i), t.n) && !p.touched {
			p.touched = true
			r.touched = append(r.touched, p)
		}
		p.top = t.top
	}
	r.copyTouched(first)
	return true, nil
}
