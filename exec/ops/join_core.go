package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/recycle"
)

// batchJoin is what the hash join and the nested-loop join share: the
// buffered build side, the held probe batches, the probe loop over
// candidate pairs and the output. Without keys every build row is a
// candidate of every probe row.
type batchJoin struct {
	typ                 JoinType
	leftKeys, rightKeys []int
	nullSafe            []bool
	// nullKeys: some key is null-safe, so the key index keeps NULLs; a
	// NULL in one of plainKeys (the others) still matches nothing.
	nullKeys  bool
	plainKeys []int
	nullAware bool
	residual  expr.Expr
	fused     *expr.Fused // the columnar path's evaluator of residual (nil: none)
	out       *arrow.Schema
	mem       memory.Allocator
	kind      keyKind
	// outMem is where probe output is gathered (see outputAllocator).
	outMem  memory.Allocator
	recycle *recycle.Allocator

	columnarOut bool
	damper      *exec.Damper
	err         error
	// Emission counts for EXPLAIN ANALYZE (Report).
	emitsColumnar, emitsHeldBack int64

	chunks []buildChunk
	build  *buildSide

	// Memory (join_spill.go). newChild makes a join of the same spec for
	// a spilled partition (nil: this join cannot spill).
	resInit    bool
	res        *exec.Reservation
	buildBytes int64
	spill      *joinSpill
	spilled    spillStats
	level      int
	newChild   func() *batchJoin
	pending    []pendingProbe
	heldWM     int64
	// RIGHT and FULL: which build rows found a match, and which inputs
	// ended (the rows that found none come out padded once both have).
	matched      []bool
	keysDone     []bool // RIGHT SEMI and ANTI: the build keys whose rows are marked
	ended        [2]bool
	unmatchedOut bool

	pairChunk   int           // joinPairChunk
	probeSchema *arrow.Schema // the last probe schema checked
	pairSchema  *arrow.Schema // the residual's input: probe then build columns

	// Scratch, reused across batches.
	keyCols      []arrow.Array
	gids         []int32
	lidx, ridx   []int32
	olidx, oridx []int32
	sel, nulls   []int32
	hits         []int32
	unknown      []bool
	keyVals      []any
	pairRow      exec.Row
}

// pendingProbe is a probe batch held (retained) until the build side is
// complete, and which path it came by.
type pendingProbe struct {
	b        *exec.Batch
	columnar bool
}

// replay hands the held batches to f in arrival order, stopping at an
// error, and releases them all.
func replay(pending []pendingProbe, f func(b *exec.Batch, columnar bool) error) error {
	defer func() {
		for _, p := range pending {
			p.b.Release()
		}
	}()
	for _, p := range pending {
		if err := f(p.b, p.columnar); err != nil {
			return err
		}
	}
	return nil
}

func newBatchJoin(typ JoinType, nullAware bool, residual expr.Expr, out *arrow.Schema, mem memory.Allocator) batchJoin {
	j := batchJoin{typ: typ, nullAware: nullAware, residual: residual, out: out, mem: mem,
		damper: exec.NewOutputDamper(), heldWM: exec.MinWatermark, pairChunk: joinPairChunk}
	j.outMem, j.recycle = outputAllocator(mem)
	if residual != nil {
		j.fused = expr.NewFused(residual, mem)
	}
	return j
}

func (j *batchJoin) keyed() bool { return len(j.leftKeys) > 0 }

func (j *batchJoin) isNullSafe(key int) bool { return j.nullSafe != nil && j.nullSafe[key] }

// Type is the join type, for EXPLAIN.
func (j *batchJoin) Type() JoinType { return j.typ }

// Capabilities implements exec.Operator.
func (j *batchJoin) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (j *batchJoin) SetColumnarOutput(on bool) { j.columnarOut = on }

// Damper is the born-columnar output damper, for EXPLAIN ANALYZE.
func (j *batchJoin) Damper() *exec.Damper { return j.damper }

// Report implements exec.Reporter: born-columnar emissions against those
// the damper held back, the damper's state and the build side's size.
func (j *batchJoin) Report() exec.OperatorReport {
	st := j.damper.State()
	r := exec.OperatorReport{ColumnarEmits: j.emitsColumnar, HeldBackEmits: j.emitsHeldBack, Damper: &st}
	if j.build != nil {
		r.Counters = append(r.Counters, exec.NamedCount{Name: "build rows", Value: int64(j.build.n)})
		if j.build.keys != nil {
			r.Counters = append(r.Counters, exec.NamedCount{Name: "build keys", Value: int64(j.build.keys.len())})
		}
	}
	r.Counters = append(r.Counters, j.spilled.counters()...)
	return r
}

// Process is the row path.
func (j *batchJoin) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if j.err != nil {
		return j.err
	}
	if input == 1 {
		rows := b.Rows()
		j.noteBuildSchema(b.Schema())
		if j.err != nil {
			return j.err
		}
		if j.spill != nil {
			return j.spillBatch(1, b.Schema(), nil, rows)
		}
		j.chunks = append(j.chunks, buildChunk{rows: rows, schema: b.Schema()})
		var n int64
		for _, r := range rows {
			n += rowBytes(r)
		}
		return j.accountBuild(ctx, n, len(rows))
	}
	if j.spill != nil {
		return j.spillBatch(0, b.Schema(), nil, b.Rows())
	}
	if j.build == nil {
		b.Retain()
		j.pending = append(j.pending, pendingProbe{b: b})
		return nil
	}
	return j.probe(ctx, &probeBatch{schema: b.Schema(), rows: b.Rows(), n: b.Len()}, out)
}

// ProcessColumnar buffers a build record or probes with a record.
func (j *batchJoin) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if j.err != nil {
		return false, j.err
	}
	if input == 1 {
		// Held decoded: the build's chunks are concatenated, and a scan
		// hands out dictionary and plain batches of one column.
		rec, err := plainRecord(j.mem, plainSchema(b.Schema()), b.Record())
		if err != nil {
			return true, fmt.Errorf("join: build input: %w", err)
		}
		j.noteBuildSchema(rec.Schema())
		if j.err != nil {
			rec.Release()
			return true, j.err
		}
		if j.spill != nil {
			defer rec.Release()
			return true, j.spillBatch(1, rec.Schema(), rec, nil)
		}
		j.chunks = append(j.chunks, buildChunk{rec: rec})
		return true, j.accountBuild(ctx, recordBytes(rec), int(rec.NumRows()))
	}
	if j.spill != nil {
		rec, err := plainRecord(j.mem, plainSchema(b.Schema()), b.Record())
		if err != nil {
			return true, fmt.Errorf("join: probe input: %w", err)
		}
		defer rec.Release()
		return true, j.spillBatch(0, rec.Schema(), rec, nil)
	}
	// The output carries the declared (plain) types, and pending probe
	// batches are held with the build's state.
	rec, err := plainRecord(j.mem, plainSchema(b.Schema()), b.Record())
	if err != nil {
		return true, fmt.Errorf("join: probe input: %w", err)
	}
	if j.build == nil {
		j.pending = append(j.pending, pendingProbe{b: exec.NewColumnarBatch(rec), columnar: true})
		return true, nil
	}
	defer rec.Release()
	return true, j.probe(ctx, &probeBatch{schema: rec.Schema(), rec: rec, n: b.Len()}, out)
}

// noteBuildSchema checks the build input against the output schema and the
// key types once.
func (j *batchJoin) noteBuildSchema(s *arrow.Schema) {
	if len(j.chunks) > 1 || j.err != nil {
		return
	}
	j.err = j.checkBuildSchema(s)
}

func (j *batchJoin) checkBuildSchema(s *arrow.Schema) error {
	if !j.typ.leftOnly() {
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

// nLeft is the number of probe columns the output starts with.
func (j *batchJoin) nLeft() int {
	switch {
	case j.typ == Mark:
		return j.out.NumFields() - 1
	case j.typ.leftOnly():
		return j.out.NumFields()
	}
	return j.out.NumFields() - j.build.schema.NumFields()
}

// checkProbeSchema checks a probe batch's columns against the output's
// (once per schema): the output reuses or gathers them under the output's
// names, and Arrow refuses a record whose column types differ.
func (j *batchJoin) checkProbeSchema(s *arrow.Schema) error {
	if s == j.probeSchema {
		return nil
	}
	if j.typ.buildOnly() {
		// The probe's columns are not in the output: only its keys are read.
		for i, k := range j.leftKeys {
			if k >= s.NumFields() || !arrow.TypeEqual(exec.PlainType(s.Field(k).Type), exec.PlainType(j.out.Field(j.rightKeys[i]).Type)) {
				return fmt.Errorf("join: probe key %d does not match the build key's type %s", k, j.out.Field(j.rightKeys[i]).Type)
			}
		}
		j.probeSchema = s
		return nil
	}
	if j.build.n == 0 && !j.typ.leftOnly() && j.build.schema.NumFields() != j.out.NumFields()-s.NumFields() {
		// An empty build input that sent no batch: its columns are the
		// output's after the probe's.
		if s.NumFields() > j.out.NumFields() {
			return fmt.Errorf("join: probe input has %d columns, more than the output's %d", s.NumFields(), j.out.NumFields())
		}
		j.build.release()
		j.build.schema = arrow.NewSchema(j.out.Fields()[s.NumFields():], nil)
	}
	nLeft := j.nLeft()
	if s.NumFields() != nLeft {
		return fmt.Errorf("join: probe input has %d columns, the output expects %d", s.NumFields(), nLeft)
	}
	for i := 0; i < nLeft; i++ {
		if want := j.out.Field(i).Type; !arrow.TypeEqual(s.Field(i).Type, want) {
			return fmt.Errorf("join: probe column %q is %s, output column %q is %s", s.Field(i).Name, s.Field(i).Type, j.out.Field(i).Name, want)
		}
	}
	j.probeSchema = s
	if j.typ.leftOnly() {
		fields := append(append([]arrow.Field{}, s.Fields()...), j.build.schema.Fields()...)
		j.pairSchema = arrow.NewSchema(fields, nil)
	} else {
		j.pairSchema = j.out
	}
	return nil
}

// OnWatermark forwards the watermark once the build side is hashed; before
// that the held probe rows would come out behind it.
func (j *batchJoin) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if j.build == nil || (j.typ.padsBuild() && !j.unmatchedOut) {
		// A RIGHT or FULL join's unmatched build rows, of any time, come
		// out when the probe ends: the watermark waits for them.
		j.heldWM = max(j.heldWM, wm)
		return nil
	}
	return out.EmitWatermark(ctx, wm)
}

// Finish of the build input hashes it and replays the held probe batches.
func (j *batchJoin) Finish(ctx context.Context, input int, out exec.Emitter) error {
	j.ended[input] = true
	if j.spill != nil {
		return j.finishSpilled(ctx, out)
	}
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
		schema = arrow.NewSchema(nil, nil) // fixed by checkProbeSchema
		if len(j.chunks) > 0 {
			schema = j.chunks[0].schema
		}
	}
	bs, err := finishBuild(j.mem, schema, j.buildKeys(), j.chunks)
	j.releaseChunks()
	if err != nil {
		return err
	}
	j.build = bs
	pending := j.pending
	j.pending = nil
	err = replay(pending, func(b *exec.Batch, columnar bool) error {
		pb := &probeBatch{schema: b.Schema(), n: b.Len()}
		if columnar {
			pb.rec = b.Record()
		} else {
			pb.rows = b.Rows()
		}
		return j.probe(ctx, pb, out)
	})
	if err != nil {
		return err
	}
	if err := j.emitUnmatched(ctx, out); err != nil {
		return err
	}
	if j.heldWM > exec.MinWatermark && !j.typ.padsBuild() { // a RIGHT or FULL join's goes with its unmatched rows
		return out.EmitWatermark(ctx, j.heldWM)
	}
	return nil
}

// buildKeys describes how the build side is hashed (nil: not at all).
func (j *batchJoin) buildKeys() *buildKeySpec {
	if !j.keyed() {
		return nil
	}
	return &buildKeySpec{cols: j.rightKeys, kind: j.kind, nullKeys: j.nullKeys, nullSafe: j.nullSafe}
}

func (j *batchJoin) releaseChunks() {
	for _, c := range j.chunks {
		if c.rec != nil {
			c.rec.Release()
		}
	}
	j.chunks = nil
}

// Close releases buffered input and the build side.
func (j *batchJoin) Close() {
	j.closeSpill()
	if j.recycle != nil {
		j.recycle.Close()
	}
	if j.fused != nil {
		j.fused.Release()
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
