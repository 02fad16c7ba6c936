package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// StreamOverAgg is an OVER aggregate over an unbounded input ordered by
// its time attribute, as Flink's StreamPhysicalOverAggregate runs it:
// agg(x) OVER (PARTITION BY k ORDER BY ts {ROWS|RANGE} BETWEEN {n|UNBOUNDED}
// PRECEDING AND CURRENT ROW). Rows are held by key until the watermark
// passes their time, then taken in time order (ties by arrival) and
// emitted with their aggregates, once: the result is append-only. A row
// at or behind the watermark when it arrives is late (its frame has been
// emitted past), dropped and counted.
//
// A bounded frame keeps the rows it still covers (the last n for ROWS,
// those within the interval for RANGE) and aggregates them for each row;
// an unbounded one keeps a running accumulator per key. RANGE takes the
// rows of one time together (peers), each with the same aggregates.
//
// The output is the input columns and one column per function; rows, as
// a keyed, time-ordered emission computes them.
type StreamOverAgg struct {
	spec   StreamOverSpec
	out    *arrow.Schema
	micros func(int64) int64
	err    error

	wm           int64
	seq          int64
	parts        map[string]*overPart
	buf          []byte
	late, nullTS int64

	// changelog: the retracting mode (over_retract.go) over an updating
	// input, each key's current rows in cmp's order.
	changelog bool
	cmp       func(a, b exec.Row) int
	lists     map[string][]overEntry
}

// StreamOverSpec configures a StreamOverAgg.
type StreamOverSpec struct {
	PartitionBy []int
	TimeCol     int
	// Rows: a ROWS frame, else RANGE. Preceding is the frame's start:
	// rows (ROWS) or microseconds (RANGE) before the current row; < 0 is
	// UNBOUNDED PRECEDING.
	Rows      bool
	Preceding int64
	Funcs     []StreamOverFunc
	// OrderBy orders a key's rows in the retracting mode
	// (NewRetractingOverAgg), where TimeCol is unused.
	OrderBy []SortKey
}

// StreamOverFunc is one aggregate: count_star, count, sum, avg, min or
// max of the input column Arg (-1 for count_star), giving Type.
type StreamOverFunc struct {
	Func string
	Arg  int
	Type arrow.DataType
}

// overPart is one key's state.
type overPart struct {
	pending []overRow // not yet emitted
	hist    []overRow // bounded frames: the emitted rows a frame may still cover, oldest first
	acc     []overAcc // unbounded frames: one running accumulator per function
}

type overRow struct {
	row exec.Row
	ts  int64 // µs
	seq int64
}

// overAcc accumulates one function's values.
type overAcc struct {
	n        int64 // rows (count_star) or non-NULL values
	si       int64
	sf       float64
	min, max any
}

// NewStreamOverAgg returns the operator; out is the input columns and one
// column per function.
func NewStreamOverAgg(spec StreamOverSpec, out *arrow.Schema) *StreamOverAgg {
	o := &StreamOverAgg{spec: spec, out: out, wm: exec.MinWatermark, parts: map[string]*overPart{}}
	width := out.NumFields() - len(spec.Funcs)
	switch {
	case width < 1 || spec.TimeCol < 0 || spec.TimeCol >= width:
		o.err = fmt.Errorf("OVER aggregate: time column %d out of range (%d input columns)", spec.TimeCol, width)
		return o
	case len(spec.Funcs) == 0:
		o.err = fmt.Errorf("OVER aggregate: no function")
		return o
	}
	for i, f := range spec.Funcs {
		if err := checkOverFunc(f, out, width); err != nil {
			o.err = fmt.Errorf("OVER aggregate %d: %w", i+1, err)
			return o
		}
	}
	o.micros, o.err = MicrosOf(out.Field(spec.TimeCol).Type)
	return o
}

func checkOverFunc(f StreamOverFunc, out *arrow.Schema, width int) error {
	if f.Func == "count_star" {
		return nil
	}
	if f.Arg < 0 || f.Arg >= width {
		return fmt.Errorf("%s: argument column %d out of range", f.Func, f.Arg)
	}
	at := out.Field(f.Arg).Type.ID()
	switch f.Func {
	case "count", "min", "max":
		return nil
	case "sum", "avg":
		if at != arrow.INT64 && at != arrow.FLOAT64 {
			return fmt.Errorf("%s of %s over a stream is not supported (BIGINT or DOUBLE)", f.Func, out.Field(f.Arg).Type)
		}
		if f.Func == "sum" && f.Type.ID() != at || f.Func == "avg" && f.Type.ID() != arrow.FLOAT64 {
			return fmt.Errorf("%s of %s cannot give %s", f.Func, out.Field(f.Arg).Type, f.Type)
		}
		return nil
	}
	return fmt.Errorf("%s is not an OVER aggregate over a stream (count, sum, avg, min, max)", f.Func)
}

func (o *StreamOverAgg) inputWidth() int { return o.out.NumFields() - len(o.spec.Funcs) }

func (o *StreamOverAgg) eval() overEval { return overEval{o.spec.Funcs, o.out} }

// Kind implements exec.Operator.
func (o *StreamOverAgg) Kind() string { return "stream_over_aggregate" }

// Capabilities: rows in, rows out; append-only, or a changelog in the
// retracting mode.
func (o *StreamOverAgg) Capabilities() exec.Capabilities {
	return exec.Capabilities{ChangelogOutput: o.changelog}
}

// Spec is the configuration, for EXPLAIN.
func (o *StreamOverAgg) Spec() StreamOverSpec { return o.spec }

func (o *StreamOverAgg) part(row exec.Row) *overPart {
	o.buf = o.buf[:0]
	for _, c := range o.spec.PartitionBy {
		o.buf = appendKeyValue(o.buf, row[c])
	}
	p := o.parts[string(o.buf)]
	if p == nil {
		p = &overPart{}
		if o.spec.Preceding < 0 {
			p.acc = make([]overAcc, len(o.spec.Funcs))
		}
		o.parts[string(o.buf)] = p
	}
	return p
}

// Process holds the batch's rows until the watermark passes them.
func (o *StreamOverAgg) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if o.changelog {
		return o.processChangelog(ctx, b, out)
	}
	if o.err != nil {
		return o.err
	}
	if b.Schema().NumFields() != o.inputWidth() {
		return fmt.Errorf("OVER aggregate: input has %d columns, want %d", b.Schema().NumFields(), o.inputWidth())
	}
	for _, c := range o.spec.PartitionBy {
		if c < 0 || c >= o.inputWidth() {
			return fmt.Errorf("OVER aggregate: partition column %d out of range", c)
		}
	}
	for _, row := range b.Rows() {
		v, ok := row[o.spec.TimeCol].(arrow.Timestamp)
		if !ok {
			o.nullTS++
			continue
		}
		ts := o.micros(int64(v))
		if ts <= o.wm {
			o.late++
			continue
		}
		o.seq++
		p := o.part(row)
		// A copy: a decoded row shares its batch's backing array.
		p.pending = append(p.pending, overRow{row: append(make(exec.Row, 0, len(row)), row...), ts: ts, seq: o.seq})
	}
	return nil
}

// OnWatermark emits the held rows the watermark passed, key by key in
// time order, then forwards it.
func (o *StreamOverAgg) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if o.err != nil {
		return o.err
	}
	if wm <= o.wm || o.changelog {
		// The retracting mode emits each change with the batch that
		// caused it.
		return out.EmitWatermark(ctx, wm)
	}
	o.wm = wm
	var ready []overRow // the rows emitted, with their aggregates
	for _, p := range o.parts {
		if len(p.pending) == 0 {
			continue
		}
		slices.SortFunc(p.pending, func(a, b overRow) int {
			if a.ts != b.ts {
				return cmpOrdered(a.ts, b.ts)
			}
			return cmpOrdered(a.seq, b.seq)
		})
		n := 0
		for n < len(p.pending) && p.pending[n].ts <= wm {
			n++
		}
		if n == 0 {
			continue
		}
		ready = o.emitRows(p, p.pending[:n], ready)
		p.pending = slices.Delete(p.pending, 0, n)
	}
	if len(ready) > 0 {
		// In time order across keys (ties by arrival): deterministic.
		slices.SortFunc(ready, func(a, b overRow) int {
			if a.ts != b.ts {
				return cmpOrdered(a.ts, b.ts)
			}
			return cmpOrdered(a.seq, b.seq)
		})
		rows := make([]exec.Row, len(ready))
		for i, r := range ready {
			rows[i] = r.row
		}
		if err := emitRowChunks(ctx, out, o.out, rows); err != nil {
			return err
		}
	}
	return out.EmitWatermark(ctx, wm)
}

// emitRows appends ready's rows (time ordered) with their aggregates.
func (o *StreamOverAgg) emitRows(p *overPart, ready []overRow, rows []overRow) []overRow {
	for i := 0; i < len(ready); {
		j := i + 1
		if !o.spec.Rows {
			for j < len(ready) && ready[j].ts == ready[i].ts {
				j++ // RANGE: the current row's peers are in its frame
			}
		}
		group := ready[i:j]
		var res []any
		if o.spec.Preceding < 0 {
			for _, r := range group {
				o.eval().add(p.acc, r.row)
			}
			res = o.eval().results(p.acc)
		} else {
			p.hist = append(p.hist, group...)
			if o.spec.Rows {
				// ROWS n PRECEDING: this row and the n before it.
				if over := len(p.hist) - int(o.spec.Preceding) - 1; over > 0 {
					p.hist = slices.Delete(p.hist, 0, over)
				}
			} else {
				lo := group[0].ts - o.spec.Preceding
				k := 0
				for k < len(p.hist) && p.hist[k].ts < lo {
					k++
				}
				p.hist = slices.Delete(p.hist, 0, k)
			}
			acc := make([]overAcc, len(o.spec.Funcs))
			for _, h := range p.hist {
				o.eval().add(acc, h.row)
			}
			res = o.eval().results(acc)
		}
		for _, r := range group {
			rows = append(rows, overRow{row: append(append(make(exec.Row, 0, len(r.row)+len(res)), r.row...), res...), ts: r.ts, seq: r.seq})
		}
		i = j
	}
	return rows
}

// overEval computes aggregates of rows of a schema (out's leading
// columns are the input's): StreamOverAgg's, and the retracting OVER's.
type overEval struct {
	funcs []StreamOverFunc
	in    *arrow.Schema
}

// add adds a row to one accumulator per function.
func (e overEval) add(acc []overAcc, row exec.Row) {
	for i, f := range e.funcs {
		a := &acc[i]
		if f.Func == "count_star" {
			a.n++
			continue
		}
		v := row[f.Arg]
		if v == nil {
			continue
		}
		a.n++
		switch x := v.(type) {
		case int64:
			a.si += x
			a.sf += float64(x)
		case float64:
			a.sf += x
		}
		if a.min == nil || compareValues(v, a.min) < 0 {
			a.min = v
		}
		if a.max == nil || compareValues(v, a.max) > 0 {
			a.max = v
		}
	}
}

// results are the functions' values from their accumulators.
func (e overEval) results(acc []overAcc) []any {
	res := make([]any, len(e.funcs))
	for i, f := range e.funcs {
		a := acc[i]
		switch f.Func {
		case "count_star", "count":
			res[i] = a.n
		case "min":
			res[i] = a.min
		case "max":
			res[i] = a.max
		case "sum":
			switch {
			case a.n == 0:
			case f.Type.ID() == arrow.INT64:
				res[i] = a.si
			default:
				res[i] = a.sf
			}
		case "avg":
			if a.n > 0 {
				if e.in.Field(f.Arg).Type.ID() == arrow.INT64 {
					res[i] = float64(a.si) / float64(a.n) // exact sum, as the bounded operator
				} else {
					res[i] = a.sf / float64(a.n)
				}
			}
		}
	}
	return res
}

// Finish emits every held row: no input can come before them.
func (o *StreamOverAgg) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if o.changelog {
		return o.err // the changelog is complete
	}
	return o.OnWatermark(ctx, exec.MaxWatermark, out)
}

// Close drops the state.
func (o *StreamOverAgg) Close() { o.parts, o.lists = map[string]*overPart{}, map[string][]overEntry{} }

// Report counts the rows dropped and the keys held.
func (o *StreamOverAgg) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "late records dropped", Value: o.late},
		{Name: "records without event time dropped", Value: o.nullTS},
		{Name: "keys held", Value: int64(len(o.parts) + len(o.lists))},
	}}
}
