package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// StreamRank is Flink's Top-N over an unbounded, append-only input:
// ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) filtered to rn <= N. Each
// partition key keeps its best N rows (bounded state per key) and after
// every input batch the operator emits how each touched key's result
// changed, as a changelog: -U then +U for a row replaced, -D for one that
// left and +I for one that entered. With the row number in the output a
// row whose rank moved is replaced too, rank by rank (Flink's update by
// rank). The ranking of one key is UpdatingTopN's (topn_update.go): its
// kept ranks and last emitted window are swapped in per key.
//
// Deduplication keeping the last row (ORDER BY the time attribute DESC,
// rn = 1) is the same operator with N = 1 and a later arrival winning
// ties. The output is the input columns, the row number (BIGINT) when
// asked for, then the row kind (VARCHAR); rows by construction, as every
// changelog.
type StreamRank struct {
	partition []int
	rowNumber bool
	eng       *UpdatingTopN // the ranking machinery; top and prev are the current key's
	out       *arrow.Schema
	err       error

	parts   map[string]*rankPart
	buf     []byte
	touched []*rankPart
}

// rankPart is one partition key's state: its kept ranks, best first, and
// the window last emitted (the visible ranks after the last batch).
type rankPart struct {
	top, prev []topEntry
	touched   bool
}

// StreamRankSpec configures a StreamRank.
type StreamRankSpec struct {
	PartitionBy []int
	OrderBy     []SortKey
	N           int64
	// RowNumber: the output has the row number after the input columns.
	RowNumber bool
	// LastWins: a later arrival wins ties (deduplication keeping the last
	// row); else the earlier one, as the bounded ROW_NUMBER numbers ties in
	// input order.
	LastWins bool
}

// NewStreamRank returns a Top-N per partition key; out is the input
// columns, a BIGINT row number if spec.RowNumber, and the VARCHAR row
// kind.
func NewStreamRank(spec StreamRankSpec, out *arrow.Schema) *StreamRank {
	r := &StreamRank{partition: spec.PartitionBy, rowNumber: spec.RowNumber, out: out, parts: map[string]*rankPart{}}
	extra := 1
	if spec.RowNumber {
		extra = 2
	}
	// The top-n engine sees the input columns and the kind; its own
	// schema is used only for its checks.
	r.eng = NewUpdatingTopN(spec.OrderBy, spec.N, 0, out)
	r.eng.lastWins = spec.LastWins
	switch {
	case r.eng.err != nil:
		r.err = fmt.Errorf("top-n per key: %w", r.eng.err)
	case spec.N < 1:
		r.err = fmt.Errorf("top-n per key: the rank bound %d keeps no row", spec.N)
	case out.NumFields() < extra || out.Field(out.NumFields()-1).Type.ID() != arrow.STRING:
		r.err = fmt.Errorf("top-n per key: the last output column must be the VARCHAR row kind")
	case spec.RowNumber && out.Field(out.NumFields()-2).Type.ID() != arrow.INT64:
		r.err = fmt.Errorf("top-n per key: the row number column must be BIGINT")
	}
	return r
}

// Kind implements exec.Operator.
func (r *StreamRank) Kind() string { return "stream_rank" }

// Capabilities: changelog rows out; columnar or rows in (rank_columnar.go),
// except for a deduplication keeping the last row: there every newer row
// is kept, so a sparse read of each row before reading it whole only adds
// work (Nexmark q18: 10% more CPU), where a Top-N that turns most rows
// away skips decoding them (BenchmarkRankIngest: 3x).
func (r *StreamRank) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: !r.eng.lastWins || r.eng.n > 1, ChangelogOutput: true}
}

// Keys are the partition columns and the sort keys, for EXPLAIN.
func (r *StreamRank) Keys() ([]int, []SortKey) { return r.partition, r.eng.keys }

// inputWidth is the number of input columns.
func (r *StreamRank) inputWidth() int {
	if r.rowNumber {
		return r.out.NumFields() - 2
	}
	return r.out.NumFields() - 1
}

func (r *StreamRank) check(schema *arrow.Schema) error {
	if r.err != nil {
		return r.err
	}
	if schema.NumFields() != r.inputWidth() {
		return fmt.Errorf("top-n per key: input has %d columns, the output schema expects %d", schema.NumFields(), r.inputWidth())
	}
	for _, c := range r.partition {
		if c < 0 || c >= schema.NumFields() {
			return fmt.Errorf("top-n per key: partition column %d out of range (input has %d columns)", c, schema.NumFields())
		}
	}
	for _, k := range r.eng.keys {
		if k.Col < 0 || k.Col >= schema.NumFields() {
			return fmt.Errorf("top-n per key: sort column %d out of range (input has %d columns)", k.Col, schema.NumFields())
		}
	}
	return nil
}

// part returns row's partition, created when new.
func (r *StreamRank) part(row exec.Row) *rankPart {
	r.buf = r.buf[:0]
	for _, c := range r.partition {
		r.buf = appendKeyValue(r.buf, row[c])
	}
	p := r.parts[string(r.buf)]
	if p == nil {
		p = &rankPart{}
		r.parts[string(r.buf)] = p
	}
	return p
}

// Process ranks the batch's rows within their keys and emits what changed
// in each touched key's visible ranks.
func (r *StreamRank) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if err := r.check(b.Schema()); err != nil {
		return err
	}
	t := r.eng
	capacity := t.n
	first := t.seq + 1
	for _, row := range b.Rows() {
		p := r.part(row)
		t.seq++
		t.top = p.top
		if t.insert(row, capacity) && !p.touched {
			p.touched = true
			r.touched = append(r.touched, p)
		}
		p.top = t.top
	}
	return r.emitTouched(ctx, first, out)
}

// emitTouched copies the touched keys' rows kept from arrival first on and
// emits their changes.
func (r *StreamRank) emitTouched(ctx context.Context, first uint64, out exec.Emitter) error {
	t := r.eng
	var rows []exec.Row // handed to the consumer, which may keep them
	for _, p := range r.touched {
		p.touched = false
		t.top, t.prev = p.top, p.prev
		t.copyKept(first)
		rows = r.appendChanges(rows)
		p.top, p.prev = t.top, t.prev
	}
	clear(r.touched)
	r.touched = r.touched[:0]
	t.top, t.prev = nil, nil
	if len(rows) == 0 {
		return nil
	}
	return emitRowChunks(ctx, out, r.out, rows)
}

// appendChanges appends the changes of the key swapped into r.eng since
// its last emitted window and makes its window the emitted one.
func (r *StreamRank) appendChanges(rows []exec.Row) []exec.Row {
	t := r.eng
	if r.rowNumber {
		return r.appendRankChanges(rows)
	}
	t.diff()
	var left, entered []exec.Row
	for _, e := range t.left {
		if e.row != nil {
			left = append(left, e.row)
		}
	}
	for _, e := range t.entered {
		if e.row != nil {
			entered = append(entered, e.row)
		}
	}
	// A row replaced by another is an update of the key's result; what
	// is left over entered or left it.
	k := min(len(left), len(entered))
	for i := range k {
		rows = append(rows, r.outRow(left[i], 0, OpUpdateBefore), r.outRow(entered[i], 0, OpUpdateAfter))
	}
	for _, row := range left[k:] {
		rows = append(rows, r.outRow(row, 0, OpDelete))
	}
	for _, row := range entered[k:] {
		rows = append(rows, r.outRow(row, 0, OpInsert))
	}
	return rows
}

// appendRankChanges diffs rank by rank: each rank whose row changed is
// updated (-U of the old row with its number, +U of the new), a rank
// newly filled is inserted and one emptied deleted.
func (r *StreamRank) appendRankChanges(rows []exec.Row) []exec.Row {
	t := r.eng
	now := t.visible()
	for i := range max(len(now), len(t.prev)) {
		rn := int64(i + 1)
		switch {
		case i >= len(t.prev):
			rows = append(rows, r.outRow(now[i].row, rn, OpInsert))
		case i >= len(now):
			rows = append(rows, r.outRow(t.prev[i].row, rn, OpDelete))
		case now[i].seq != t.prev[i].seq:
			rows = append(rows, r.outRow(t.prev[i].row, rn, OpUpdateBefore), r.outRow(now[i].row, rn, OpUpdateAfter))
		}
	}
	t.prev = append(t.prev[:0], now...)
	return rows
}

// outRow is row with its row number (if shown) and kind appended, a copy.
func (r *StreamRank) outRow(row exec.Row, rn int64, op string) exec.Row {
	o := make(exec.Row, 0, len(row)+2)
	o = append(o, row...)
	if r.rowNumber {
		o = append(o, rn)
	}
	return append(o, op)
}

// OnWatermark forwards the watermark: every change it covers was emitted
// with the batch that caused it.
func (r *StreamRank) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	return out.EmitWatermark(ctx, wm)
}

// Finish has nothing left to emit: the changelog is complete.
func (r *StreamRank) Finish(context.Context, int, exec.Emitter) error { return r.err }

// Close drops the state.
func (r *StreamRank) Close() { r.parts = map[string]*rankPart{} }

// Report counts the keys held.
func (r *StreamRank) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: []exec.NamedCount{{Name: "keys held", Value: int64(len(r.parts))}}}
}
