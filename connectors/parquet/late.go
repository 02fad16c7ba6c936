package parquet

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
)

// Late materialisation. A scan given the WHERE (ScanSpec.Predicate) reads
// a batch's rows of the predicate's columns first, evaluates it, and reads
// the other columns only at the rows that pass: a reader jumps over the
// runs of rows in between (and over whole pages where it knows them,
// rows.go), so a selective predicate leaves most values of the other
// columns undecoded and uncopied. The planner keeps its Filter above the
// scan (the row path stays the authority, and any source may ignore the
// predicate), so the scan may hand on rows that fail: it does when most
// rows of a batch pass, where reading the others at the passing rows one
// run at a time costs more than reading them whole and letting the Filter
// drop the few; and a damper stops evaluating for a while when batch after
// batch is like that.

const (
	// selectiveRuns: a batch whose passing rows form at most 1/selectiveRuns
	// as many runs as it has rows reads the other columns run by run.
	selectiveRuns = 16
	// After lateDenseRun batches in a row that were not selective, the
	// scan reads lateOffBatches batches whole without evaluating, then
	// tries one again.
	lateDenseRun   = 4
	lateOffBatches = 64
)

// lateMat is a scan's predicate and what evaluating it needs.
type lateMat struct {
	pred   expr.Expr
	text   []string // the conjuncts, for EXPLAIN
	cols   []int    // the output columns the predicate reads
	others []int    // the other output columns
	// null stands in for the other columns in the record the predicate
	// sees (it reads only its own): a NULL array of the batch size.
	null   arrow.Array
	fields []arrow.Field // that record's fields, retyped per batch
	sel    []int32
	pass   []rowRun
	// The damper: non-selective batches in a row, and batches left to
	// read without evaluating.
	dense, off int
	// failed: evaluating gave an error; the Filter above reports it.
	failed bool
}

// newLateMat prepares the evaluation of conj over a scan of schema. nil
// when there is nothing to gain: no conjunct it can use, or no column
// left for it to skip.
func newLateMat(conj []connectors.Conjunct, schema *arrow.Schema, batchSize int) *lateMat {
	n := schema.NumFields()
	reads := make([]bool, n)
	var pred expr.Expr
	var text []string
	for _, c := range conj {
		ok := c.Expr != nil && c.Expr.Type().ID() == arrow.BOOL
		for _, k := range c.Columns {
			ok = ok && k >= 0 && k < n
		}
		if !ok {
			continue
		}
		if pred == nil {
			pred = c.Expr
		} else {
			and, err := expr.NewBinary("AND", pred, c.Expr)
			if err != nil {
				continue
			}
			pred = and
		}
		for _, k := range c.Columns {
			reads[k] = true
		}
		text = append(text, c.Expr.String())
	}
	if pred == nil {
		return nil
	}
	lm := &lateMat{pred: pred, text: text}
	for i, r := range reads {
		if r {
			lm.cols = append(lm.cols, i)
		} else {
			lm.others = append(lm.others, i)
		}
	}
	if len(lm.others) == 0 {
		return nil
	}
	lm.null = array.NewNull(batchSize)
	lm.fields = make([]arrow.Field, n)
	for i := range lm.fields {
		lm.fields[i] = arrow.Field{Name: schema.Field(i).Name, Type: arrow.Null, Nullable: true}
	}
	return lm
}

// evaluate reports whether the next batch is evaluated (the damper).
func (lm *lateMat) evaluate() bool {
	if lm.failed {
		return false
	}
	if lm.off > 0 {
		lm.off--
		if lm.off == 0 {
			// One more dense batch sends it off again.
			lm.dense = lateDenseRun - 1
		}
		return false
	}
	return true
}

// note tells the damper how selective a batch was.
func (lm *lateMat) note(selective bool) {
	if selective {
		lm.dense = 0
		return
	}
	if lm.dense++; lm.dense >= lateDenseRun {
		lm.dense, lm.off = 0, lateOffBatches
	}
}

// passing fills lm.sel with the positions (in window, of k rows) where the
// predicate is TRUE over the predicate's columns cols (by output column).
func (lm *lateMat) passing(rs *runState, cols []arrow.Array, k int) error {
	arrs := make([]arrow.Array, len(lm.fields))
	for i := range arrs {
		arrs[i] = lm.null
	}
	fields := lm.fields
	for _, c := range lm.cols {
		arrs[c] = cols[c]
		fields[c].Type = cols[c].DataType()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(k))
	defer rec.Release()
	for _, c := range lm.cols {
		fields[c].Type = arrow.Null
	}
	mask, err := expr.EvalPredicate(rs.mem, lm.pred, rec)
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", strings.Join(lm.text, " AND "), err)
	}
	defer mask.Release()
	if mask.Len() != k {
		return fmt.Errorf("evaluating %s: %d values for %d rows", strings.Join(lm.text, " AND "), mask.Len(), k)
	}
	lm.sel = expr.SelectionVector(mask, lm.sel)
	return nil
}

// passRuns turns lm.sel (positions in window) into runs of rows.
func (lm *lateMat) passRuns(window []rowRun) []rowRun {
	out := lm.pass[:0]
	w, base := 0, int64(0) // window run of the position, and its first position
	for _, p := range lm.sel {
		pos := int64(p)
		for pos >= base+window[w].len() {
			base += window[w].len()
			w++
		}
		row := window[w].lo + pos - base
		if n := len(out); n > 0 && out[n-1].hi == row {
			out[n-1].hi++
		} else {
			out = append(out, rowRun{row, row + 1})
		}
	}
	lm.pass = out
	return out
}

// readLate reads window (k rows) evaluating the predicate first. nil when
// no row passes.
func (s *Source) readLate(rs *runState, window []rowRun, k int, path string, g int) (rec arrow.RecordBatch, err error) {
	lm := s.late
	cols := make([]arrow.Array, len(s.cols))
	defer func() {
		if err != nil {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
		}
	}()
	if err := s.readColumns(rs, lm.cols, cols, window, k, path, g); err != nil {
		return nil, err
	}
	if err := lm.passing(rs, cols, k); err != nil {
		// The predicate fails on these rows (a division by zero, a bad
		// cast): the scan stops evaluating it and hands the rows on, so
		// that the Filter reports the error as it would without the scan.
		lm.failed = true
		if err := s.readColumns(rs, lm.others, cols, window, k, path, g); err != nil {
			return nil, err
		}
		return s.record(cols, k), nil
	}
	n := len(lm.sel)
	s.counts.evaluated.Add(int64(k))
	s.counts.passed.Add(int64(n))
	if n == 0 {
		lm.note(true)
		for _, c := range lm.cols {
			cols[c].Release()
		}
		return nil, nil
	}
	pass := lm.passRuns(window)
	selective := n < k && len(pass)*selectiveRuns <= k
	lm.note(selective)
	if !selective {
		// Most rows pass: read the others whole; the Filter drops the rest.
		if err := s.readColumns(rs, lm.others, cols, window, k, path, g); err != nil {
			return nil, err
		}
		s.counts.decoded.Add(int64(k))
		return s.record(cols, k), nil
	}
	if err := s.readColumnsPicked(rs, lm.others, cols, pass, n, path, g); err != nil {
		return nil, err
	}
	s.counts.decoded.Add(int64(n))
	for _, c := range lm.cols {
		kept, err := ops.Gather(rs.mem, cols[c], lm.sel)
		if err != nil {
			return nil, fmt.Errorf("parquet: %s: row group %d, column %s: %w", path, g, s.names[c], err)
		}
		cols[c].Release()
		cols[c] = kept
	}
	return s.record(cols, n), nil
}

// Predicate lists the conjuncts the scan evaluates itself, for EXPLAIN
// (nil when it evaluates none).
func (s *Source) Predicate() []string {
	if s.late == nil {
		return nil
	}
	return append([]string(nil), s.late.text...)
}
