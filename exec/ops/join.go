package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/recycle"
)

// JoinType is the kind of equi-join.
type JoinType int

// Join types.
const (
	Inner JoinType = iota
	Left
	Right
	Full
)

func (t JoinType) String() string {
	switch t {
	case Left:
		return "LEFT"
	case Right:
		return "RIGHT"
	case Full:
		return "FULL"
	}
	return "INNER"
}

// HashJoin is an equi-join. Input 0 (left) is the probe side and streams;
// input 1 (right) is the build side, hashed when it finishes. Probe
// batches that arrive before that are retained and replayed. Output: the
// left columns, then the right ones; a LEFT join fills the right columns
// of an unmatched left row with NULL. NULL keys never match.
type HashJoin struct {
	typ                 JoinType
	leftKeys, rightKeys []int
	out                 *arrow.Schema
	mem                 memory.Allocator
	kind                keyKind
	// outMem is where probe output is gathered (see outputAllocator).
	outMem  memory.Allocator
	recycle *recycle.Allocator

	columnarOut bool
	damper      *exec.Damper
	err         error
	// Emission counts for EXPLAIN ANALYZE (Report).
	emitsColumnar, emitsHeldBack int64

	chunks  []buildChunk
	build   *buildSide
	pending []pendingProbe
	heldWM  int64
	// FULL: which build rows found a match, and which inputs ended (the
	// rows that found none come out padded once both have).
	matched      []bool
	ended        [2]bool
	unmatchedOut bool

	keyCols    []arrow.Array
	gids       []int32
	lidx, ridx []int32
	keyVals    []any
}

type pendingProbe struct {
	b        *exec.Batch
	columnar bool
}

// NewHashJoin returns typ JOIN on leftKeys[i] = rightKeys[i] producing out.
// The planner casts keys to a common type: leftKeys and rightKeys name
// columns of identical types.
func NewHashJoin(typ JoinType, leftKeys, rightKeys []int, out *arrow.Schema, mem memory.Allocator) *HashJoin {
	j := &HashJoin{typ: typ, leftKeys: leftKeys, rightKeys: rightKeys, out: out, mem: mem,
		damper: exec.NewOutputDamper(), heldWM: exec.MinWatermark}
	j.outMem, j.recycle = outputAllocator(mem)
	if len(leftKeys) != len(rightKeys) || len(leftKeys) == 0 {
		j.err = fmt.Errorf("join: %d left keys and %d right keys", len(leftKeys), len(rightKeys))
		return j
	}
	types := make([]arrow.DataType, len(leftKeys))
	for i, k := range leftKeys {
		if k < 0 || k >= out.NumFields() {
			j.err = fmt.Errorf("join: left key %d out of range", k)
			return j
		}
		// Left columns come first in the output, so its types are theirs.
		types[i] = out.Field(k).Type
	}
	j.kind = chooseKeyKind(types)
	return j
}

// Kind implements exec.Operator.
func (j *HashJoin) Kind() string { return "hash_join" }

// Type is the join type, for EXPLAIN.
func (j *HashJoin) Type() JoinType { return j.typ }

// Capabilities implements exec.Operator.
func (j *HashJoin) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (j *HashJoin) SetColumnarOutput(on bool) { j.columnarOut = on }

// Damper is the born-columnar output damper, for EXPLAIN ANALYZE.
func (j *HashJoin) Damper() *exec.Damper { return j.damper }

// Report implements exec.Reporter: born-columnar emissions against those
// the damper held back, the damper's state and the build side's size.
func (j *HashJoin) Report() exec.OperatorReport {
	st := j.damper.State()
	r := exec.OperatorReport{ColumnarEmits: j.emitsColumnar, HeldBackEmits: j.emitsHeldBack, Damper: &st}
	if j.build != nil {
		r.Counters = append(r.Counters,
			exec.NamedCount{Name: "build rows", Value: int64(j.build.n)},
			exec.NamedCount{Name: "build keys", Value: int64(j.build.keys.len())})
	}
	return r
}

// Process is the row path.
func (j *HashJoin) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if j.err != nil {
		return j.err
	}
	if input == 1 {
		j.chunks = append(j.chunks, buildChunk{rows: b.Rows(), schema: b.Schema()})
		j.noteBuildSchema(b.Schema())
		return j.err
	}
	if j.build == nil {
		b.Retain()
		j.pending = append(j.pending, pendingProbe{b: b})
		return nil
	}
	return j.probeRows(ctx, b, out)
}

// ProcessColumnar buffers a build record or probes with a record.
func (j *HashJoin) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if j.err != nil {
		return false, j.err
	}
	if input == 1 {
		rec := b.Record()
		rec.Retain()
		j.chunks = append(j.chunks, buildChunk{rec: rec})
		j.noteBuildSchema(b.Schema())
		return true, j.err
	}
	if j.build == nil {
		b.Retain()
		j.pending = append(j.pending, pendingProbe{b: b, columnar: true})
		return true, nil
	}
	return true, j.probeColumnar(ctx, b, out)
}

// noteBuildSchema checks the build input against the output schema and the
// key types once.
func (j *HashJoin) noteBuildSchema(s *arrow.Schema) {
	if len(j.chunks) > 1 || j.err != nil {
		return
	}
	j.err = j.checkBuildSchema(s)
}

func (j *HashJoin) checkBuildSchema(s *arrow.Schema) error {
	nLeft := j.out.NumFields() - s.NumFields()
	if nLeft < 0 {
		return fmt.Errorf("join: build input has %d columns, more than the output's %d", s.NumFields(), j.out.NumFields())
	}
	for i := 0; i < s.NumFields(); i++ {
		if want := j.out.Field(nLeft + i).Type; !arrow.TypeEqual(s.Field(i).Type, want) {
			return fmt.Errorf("join: build column %q is %s, output column %q is %s",
				s.Field(i).Name, s.Field(i).Type, j.out.Field(nLeft+i).Name, want)
		}
	}
	for i, k := range j.rightKeys {
		if k < 0 || k >= s.NumFields() {
			return fmt.Errorf("join: right key %d out of range", k)
		}
		if lt := j.out.Field(j.leftKeys[i]).Type; !arrow.TypeEqual(s.Field(k).Type, lt) {
			return fmt.Errorf("join: key %d: left %s and right column %q %s differ (the planner casts keys to one type)",
				i, lt, s.Field(k).Name, s.Field(k).Type)
		}
	}
	return nil
}

// fixEmptyBuild gives a build input that sent nothing its schema: the
// output's columns after the probe's (known once a probe batch is seen).
func (j *HashJoin) fixEmptyBuild(probe *arrow.Schema) error {
	nLeft := probe.NumFields()
	if j.build.n > 0 || j.build.schema.NumFields() == j.out.NumFields()-nLeft {
		return nil
	}
	if nLeft > j.out.NumFields() {
		return fmt.Errorf("join: probe input has %d columns, more than the output's %d", nLeft, j.out.NumFields())
	}
	j.build.release()
	j.build.schema = arrow.NewSchema(j.out.Fields()[nLeft:], nil)
	return nil
}

// OnWatermark forwards the watermark once the build side is hashed; before
// that the held probe rows would come out behind it.
func (j *HashJoin) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if j.build == nil || (j.typ == Full && !j.unmatchedOut) {
		// A FULL join's unmatched build rows, of any time, come out when
		// the probe ends: the watermark waits for them.
		j.heldWM = max(j.heldWM, wm)
		return nil
	}
	return out.EmitWatermark(ctx, wm)
}

// Finish of the build input hashes it and replays the held probe batches.
func (j *HashJoin) Finish(ctx context.Context, input int, out exec.Emitter) error {
	j.ended[input] = true
	if input == 0 {
		return j.emitUnmatched(ctx, out)
	}
	if j.build != nil {
		return nil
	}
	if j.err != nil {
		return j.err
	}
	var schema *arrow.Schema
	for _, c := range j.chunks {
		if c.rec != nil {
			schema = c.rec.Schema()
		}
	}
	if schema == nil {
		schema = arrow.NewSchema(nil, nil) // fixed by fixEmptyBuild
		if len(j.chunks) > 0 {
			schema = j.chunks[0].schema
		}
	}
	bs, err := finishBuild(j.mem, schema, j.rightKeys, j.kind, j.chunks)
	j.releaseChunks()
	if err != nil {
		return err
	}
	j.build = bs
	pending := j.pending
	j.pending = nil
	defer func() {
		for _, p := range pending {
			p.b.Release()
		}
	}()
	for _, p := range pending {
		var err error
		if p.columnar {
			err = j.probeColumnar(ctx, p.b, out)
		} else {
			err = j.probeRows(ctx, p.b, out)
		}
		if err != nil {
			return err
		}
	}
	if err := j.emitUnmatched(ctx, out); err != nil {
		return err
	}
	if j.heldWM > exec.MinWatermark && j.typ != Full { // a FULL join's goes with its unmatched rows
		return out.EmitWatermark(ctx, j.heldWM)
	}
	return nil
}

// markMatched records, for a FULL join, the build rows a probe row matched.
func (j *HashJoin) markMatched(ms []int32) {
	if j.typ != Full || len(ms) == 0 {
		return
	}
	if j.matched == nil {
		j.matched = make([]bool, j.build.n)
	}
	for _, m := range ms {
		j.matched[m] = true
	}
}

// emitUnmatched emits, once the probe input has ended and the build side
// is hashed, a FULL join's build rows that nothing matched, with NULLs for
// the probe's columns.
func (j *HashJoin) emitUnmatched(ctx context.Context, out exec.Emitter) error {
	if j.typ != Full || j.unmatchedOut || !j.ended[0] || j.build == nil {
		return nil
	}
	var rows []exec.Row
	if j.build.n > 0 {
		build := j.build.rowForm()
		nLeft := j.out.NumFields() - j.build.schema.NumFields()
		for r := 0; r < j.build.n; r++ {
			if j.matched != nil && j.matched[r] {
				continue
			}
			row := make(exec.Row, nLeft, j.out.NumFields())
			rows = append(rows, append(row, build[r]...))
		}
	}
	j.matched, j.unmatchedOut = nil, true
	if err := emitRows(ctx, out, j.out, rows); err != nil {
		return err
	}
	if j.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, j.heldWM) // held until now (OnWatermark)
	}
	return nil
}

func (j *HashJoin) releaseChunks() {
	for _, c := range j.chunks {
		if c.rec != nil {
			c.rec.Release()
		}
	}
	j.chunks = nil
}

// Close releases buffered input and the build side.
func (j *HashJoin) Close() {
	if j.recycle != nil {
		j.recycle.Close()
	}
	j.releaseChunks()
	for _, p := range j.pending {
		p.b.Release()
	}
	j.pending = nil
	if j.build != nil {
		j.build.release()
	}
}

// probeRows is the row path of the probe.
func (j *HashJoin) probeRows(ctx context.Context, b *exec.Batch, out exec.Emitter) error {
	if err := j.fixEmptyBuild(b.Schema()); err != nil {
		return err
	}
	build := j.build.rowForm()
	nRight := j.build.schema.NumFields()
	var res []exec.Row
	for ri, r := range b.Rows() {
		j.keyVals = j.keyVals[:0]
		for _, k := range j.leftKeys {
			j.keyVals = append(j.keyVals, r[k])
		}
		g, _, err := j.build.keys.idRow(j.keyVals, false)
		if err != nil {
			return fmt.Errorf("join probe row %d: %w", ri, err)
		}
		ms := j.build.matches(g)
		j.markMatched(ms)
		for _, m := range ms {
			row := make(exec.Row, 0, len(r)+nRight)
			res = append(res, append(append(row, r...), build[m]...))
		}
		if len(ms) == 0 && (j.typ == Left || j.typ == Full) {
			row := make(exec.Row, len(r)+nRight)
			copy(row, r)
			res = append(res, row)
		}
	}
	return emitRows(ctx, out, j.out, res)
}

// probeColumnar hashes the probe keys from the arrays, collects the match
// pairs as two index vectors and gathers both sides into a born-columnar
// record (or builds rows from the arrays when columnar output is off or
// held back by the damper).
func (j *HashJoin) probeColumnar(ctx context.Context, b *exec.Batch, out exec.Emitter) error {
	if err := j.fixEmptyBuild(b.Schema()); err != nil {
		return err
	}
	rec := b.Record()
	n := int(rec.NumRows())
	j.keyCols = j.keyCols[:0]
	for _, k := range j.leftKeys {
		j.keyCols = append(j.keyCols, rec.Column(k))
	}
	gids, err := j.build.keys.idsColumnar(j.keyCols, n, false, j.gids, nil)
	if err != nil {
		return fmt.Errorf("join probe: %w", err)
	}
	j.gids = gids
	lidx, ridx := j.lidx[:0], j.ridx[:0]
	for i, g := range gids {
		ms := j.build.matches(g)
		j.markMatched(ms)
		for _, m := range ms {
			lidx = append(lidx, int32(i))
			ridx = append(ridx, m)
		}
		if len(ms) == 0 && (j.typ == Left || j.typ == Full) {
			lidx = append(lidx, int32(i))
			ridx = append(ridx, -1)
		}
	}
	j.lidx, j.ridx = lidx, ridx
	if len(lidx) == 0 {
		return nil
	}
	if j.columnarOut && j.damper.Try() {
		res, err := j.gatherPairs(rec, lidx, ridx)
		if err != nil {
			return err
		}
		j.damper.Observe(len(lidx))
		j.emitsColumnar++
		return emitRecord(ctx, out, res)
	}
	if j.columnarOut {
		j.emitsHeldBack++ // the damper held this emission back to rows
	}
	build := j.build.rowForm()
	nLeft, nRight := int(rec.NumCols()), j.build.schema.NumFields()
	width := nLeft + nRight
	cells := make([]any, len(lidx)*width)
	rows := make([]exec.Row, len(lidx))
	for k, li := range lidx {
		row := exec.Row(cells[k*width : (k+1)*width : (k+1)*width])
		for c := 0; c < nLeft; c++ {
			row[c] = exec.Value(rec.Column(c), int(li))
		}
		if ri := ridx[k]; ri >= 0 {
			copy(row[nLeft:], build[ri])
		}
		rows[k] = row
	}
	return emitRows(ctx, out, j.out, rows)
}

func (j *HashJoin) gatherPairs(rec arrow.RecordBatch, lidx, ridx []int32) (arrow.RecordBatch, error) {
	right, err := j.build.columns()
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, 0, j.out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c := 0; c < int(rec.NumCols()); c++ {
		a, err := gather(j.outMem, rec.Column(c), lidx)
		if err != nil {
			return nil, fmt.Errorf("join: left column %q: %w", rec.Schema().Field(c).Name, err)
		}
		cols = append(cols, a)
	}
	for c, col := range right {
		var a arrow.Array
		if j.build.n == 0 {
			a = array.MakeArrayOfNull(j.mem, col.DataType(), len(ridx))
		} else {
			a, err = gather(j.outMem, col, ridx)
			if err != nil {
				return nil, fmt.Errorf("join: right column %q: %w", j.build.schema.Field(c).Name, err)
			}
		}
		cols = append(cols, a)
	}
	if len(cols) != j.out.NumFields() {
		return nil, fmt.Errorf("join: %d left + %d right columns, output has %d", rec.NumCols(), len(right), j.out.NumFields())
	}
	return array.NewRecordBatch(j.out, cols, int64(len(lidx))), nil
}
