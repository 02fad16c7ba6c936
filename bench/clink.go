package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// clinkRunner runs queries in-process through an engine.Session, as the
// shell does, minus the rendering.
type clinkRunner struct {
	s *engine.Session
	// note says how the thread count was applied, for the report.
	note string
}

// newClinkRunner opens a session with parallelism threads. The setting is
// being implemented; at threads == 1 a session that rejects it still runs
// (with a note), at more threads the comparison would be meaningless, so
// it is an error.
func newClinkRunner(ctx context.Context, threads int) (*clinkRunner, error) {
	s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
	r := &clinkRunner{s: s}
	stmt := fmt.Sprintf("SET 'parallelism' = '%d'", threads)
	if _, err := s.Execute(ctx, stmt, nil, engine.ExecOptions{}); err != nil {
		if threads != 1 {
			s.Close()
			return nil, fmt.Errorf("clink: %s: %w", stmt, err)
		}
		r.note = fmt.Sprintf("clink rejected %s (%v); ran with its default parallelism", stmt, err)
	} else {
		r.note = "clink: " + stmt
	}
	return r, nil
}

func (r *clinkRunner) Close() error { return r.s.Close() }

// time runs q once, discarding the rows, and returns its wall time (parse,
// plan and run) and the rows delivered.
func (r *clinkRunner) time(ctx context.Context, q string) (time.Duration, int64, error) {
	w := &discardWriter{}
	start := time.Now()
	out, err := r.s.Execute(ctx, q, w, engine.ExecOptions{})
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if out.Rows != w.rows {
		return 0, 0, fmt.Errorf("clink reported %d rows but delivered %d", out.Rows, w.rows)
	}
	return d, w.rows, nil
}

// result runs q once and returns its rows in canonical form (untimed).
func (r *clinkRunner) result(ctx context.Context, q string) ([][]string, error) {
	w := &collectWriter{}
	if _, err := r.s.Execute(ctx, q, w, engine.ExecOptions{}); err != nil {
		return nil, err
	}
	return w.rows, nil
}

// discardWriter counts rows without reading them: what the timed runs use,
// so that the result's size does not cost clink a materialisation.
type discardWriter struct{ rows int64 }

func (w *discardWriter) Columns(*arrow.Schema, bool) error { return nil }
func (w *discardWriter) Batch(b *exec.Batch) error         { w.rows += int64(b.Len()); return nil }

// collectWriter keeps every row as canonical strings for the comparison.
// It reads columnar batches through their arrays, so it never triggers a
// counted materialisation either.
type collectWriter struct {
	schema *arrow.Schema
	rows   [][]string
}

func (w *collectWriter) Columns(s *arrow.Schema, _ bool) error { w.schema = s; return nil }

func (w *collectWriter) Batch(b *exec.Batch) error {
	schema := b.Schema()
	if b.IsColumnar() {
		rec := b.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for c := range row {
				row[c] = canonArrow(exec.Value(rec.Column(c), i), rec.Column(c).DataType())
			}
			w.rows = append(w.rows, row)
		}
		return nil
	}
	for _, r := range b.Rows() {
		row := make([]string, len(r))
		for c, v := range r {
			row[c] = canonArrow(v, schema.Field(c).Type)
		}
		w.rows = append(w.rows, row)
	}
	return nil
}

// canonArrow renders a row-form value (see exec.Row) of type dt in the
// canonical form the comparison uses.
func canonArrow(v any, dt arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case arrow.Timestamp:
		unit := arrow.Millisecond
		if tt, ok := dt.(*arrow.TimestampType); ok {
			unit = tt.Unit
		}
		return canonTime(x.ToTime(unit))
	case arrow.Date32:
		return x.ToTime().Format("2006-01-02")
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return string(x)
	}
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		if n, ok := v.(interface{ ToString(int32) string }); ok {
			return n.ToString(d.Scale)
		}
	}
	return fmt.Sprint(v)
}

func canonTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.000000")
}
