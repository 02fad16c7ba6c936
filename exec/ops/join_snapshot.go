package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// batchJoinStateVersion is the layout of a hash or nested-loop join's
// state (batchJoin: a bounded build input, input 1, that the probe input,
// input 0, may stream past for ever):
//
//	"clock"   Value: the held watermark, which inputs ended, whether the
//	          unmatched build rows went out, whether the build side is
//	          hashed, and the emit counters
//	"build"   the build input's rows in arrival order (as buffered, or as
//	          hashed once it ended)
//	"matched" RIGHT and FULL, once hashed: per build row, whether a probe
//	          row matched it
//	"pending" the probe batches held until the build side is complete
//
// A restore buffers the build rows again and, when the snapshotted join
// had hashed them, hashes them the same way (rows keep their order, so
// matches come out in the same order).
const batchJoinStateVersion = 1

var (
	_ exec.Snapshotter = (*HashJoin)(nil)
	_ exec.Snapshotter = (*NestedLoopJoin)(nil)
)

var matchedSchema = arrow.NewSchema([]arrow.Field{{Name: "matched", Type: arrow.FixedWidthTypes.Boolean}}, nil)

// SnapshotState implements exec.Snapshotter.
func (j *HashJoin) SnapshotState(_ context.Context, w exec.StateWriter) error {
	return j.snapshot(w, j.Kind())
}

// RestoreState implements exec.Snapshotter.
func (j *HashJoin) RestoreState(ctx context.Context, r exec.StateReader) error {
	return j.restore(ctx, r, j.Kind())
}

// SnapshotState implements exec.Snapshotter.
func (j *NestedLoopJoin) SnapshotState(_ context.Context, w exec.StateWriter) error {
	return j.snapshot(w, j.Kind())
}

// RestoreState implements exec.Snapshotter.
func (j *NestedLoopJoin) RestoreState(ctx context.Context, r exec.StateReader) error {
	return j.restore(ctx, r, j.Kind())
}

func (j *batchJoin) snapshot(w exec.StateWriter, kind string) error {
	if j.err != nil {
		return j.err
	}
	if err := writeHeader(w, kind, batchJoinStateVersion); err != nil {
		return err
	}
	if err := writeInts(w, "clock", j.heldWM, b2i64(j.ended[0]), b2i64(j.ended[1]), b2i64(j.unmatchedOut),
		b2i64(j.build != nil), j.emitsColumnar, j.emitsHeldBack); err != nil {
		return err
	}
	if err := j.snapshotBuild(w); err != nil {
		return fmt.Errorf("%s state: build input: %w", kind, err)
	}
	if err := j.snapshotPending(w); err != nil {
		return fmt.Errorf("%s state: held probe batches: %w", kind, err)
	}
	if j.build == nil || !j.typ.padsBuild() || j.unmatchedOut {
		return nil
	}
	b := array.NewBooleanBuilder(j.mem)
	defer b.Release()
	b.Reserve(j.build.n)
	for r := 0; r < j.build.n; r++ {
		b.UnsafeAppend(j.matched != nil && j.matched[r])
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(matchedSchema, []arrow.Array{col}, int64(j.build.n))
	defer rec.Release()
	return w.Records("matched", matchedSchema, rec)
}

func (j *batchJoin) snapshotBuild(w exec.StateWriter) error {
	var schema *arrow.Schema
	var recs []arrow.RecordBatch
	defer func() { releaseRecs(recs) }()
	add := func(rec arrow.RecordBatch, rows []exec.Row, s *arrow.Schema) error {
		if schema == nil {
			schema = s
		}
		if rec == nil {
			r, err := exec.EncodeRows(j.mem, schema, rows)
			if err != nil {
				return err
			}
			recs = append(recs, r)
			return nil
		}
		r, err := withColumns(schema, recordColumns(rec), rec.NumRows())
		if err != nil {
			return err
		}
		recs = append(recs, r)
		return nil
	}
	if bs := j.build; bs != nil {
		if bs.schema.NumFields() == 0 {
			return nil // an empty build input that sent no batch
		}
		var rec arrow.RecordBatch
		if bs.cols != nil {
			rec = array.NewRecordBatch(bs.schema, bs.cols, int64(bs.n))
			defer rec.Release()
		}
		if err := add(rec, bs.rows, bs.schema); err != nil {
			return err
		}
	}
	for _, c := range j.chunks {
		s := c.schema
		if c.rec != nil {
			s = c.rec.Schema()
		}
		if err := add(c.rec, c.rows, s); err != nil {
			return err
		}
	}
	if schema == nil {
		return nil
	}
	return w.Records("build", schema, recs...)
}

func (j *batchJoin) snapshotPending(w exec.StateWriter) error {
	if len(j.pending) == 0 {
		return nil
	}
	schema := j.pending[0].b.Schema()
	recs := make([]arrow.RecordBatch, 0, len(j.pending))
	defer func() { releaseRecs(recs) }()
	for _, p := range j.pending {
		var rec arrow.RecordBatch
		var err error
		if p.b.IsColumnar() {
			rec, err = withColumns(schema, recordColumns(p.b.Record()), int64(p.b.Len()))
		} else {
			rec, err = exec.EncodeRows(j.mem, schema, p.b.Rows())
		}
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	return w.Records("pending", schema, recs...)
}

func (j *batchJoin) restore(ctx context.Context, r exec.StateReader, kind string) error {
	if j.err != nil {
		return j.err
	}
	if err := checkHeader(r, kind, batchJoinStateVersion); err != nil {
		return err
	}
	if j.build != nil || len(j.chunks) > 0 || len(j.pending) > 0 || j.ended[0] || j.ended[1] {
		return fmt.Errorf("%s state: restored into a join that has already run", kind)
	}
	v, err := readInts(r, kind, "clock", 7)
	if err != nil {
		return err
	}
	_, build, _, err := readPart(r, kind, "build", nil)
	if err != nil {
		return err
	}
	for _, rec := range build {
		j.chunks = append(j.chunks, buildChunk{rec: rec}) // takes over the reference (Close releases it)
	}
	if len(build) > 0 {
		if j.err = j.checkBuildSchema(build[0].Schema()); j.err != nil {
			return fmt.Errorf("%s state: build input: %w", kind, j.err)
		}
	}
	if v[4] != 0 {
		// Hash as the snapshotted join did when its build input ended;
		// nothing is held or ended yet, so nothing is emitted.
		if err := j.Finish(ctx, 1, discardEmitter{}); err != nil {
			return fmt.Errorf("%s state: %w", kind, err)
		}
		j.ended[1] = false
		if err := j.restoreMatched(r, kind); err != nil {
			return err
		}
	}
	_, pending, _, err := readPart(r, kind, "pending", nil)
	if err != nil {
		return err
	}
	for _, rec := range pending {
		j.pending = append(j.pending, pendingProbe{b: exec.NewColumnarBatch(rec), columnar: true})
	}
	j.heldWM, j.ended, j.unmatchedOut = v[0], [2]bool{v[1] != 0, v[2] != 0}, v[3] != 0
	j.emitsColumnar, j.emitsHeldBack = v[5], v[6]
	return nil
}

func (j *batchJoin) restoreMatched(r exec.StateReader, kind string) error {
	_, recs, ok, err := readPart(r, kind, "matched", matchedSchema)
	if err != nil || !ok {
		return err
	}
	defer releaseRecs(recs)
	j.matched = make([]bool, 0, j.build.n)
	for _, rec := range recs {
		col := rec.Column(0).(*array.Boolean)
		for i := 0; i < col.Len(); i++ {
			j.matched = append(j.matched, col.Value(i))
		}
	}
	if len(j.matched) != j.build.n {
		return fmt.Errorf("%s state: %d match flags for %d build rows", kind, len(j.matched), j.build.n)
	}
	return nil
}

// discardEmitter drops what it is given (a restore re-runs a step whose
// output went out before the checkpoint).
type discardEmitter struct{}

func (discardEmitter) Emit(context.Context, *exec.Batch) error    { return nil }
func (discardEmitter) EmitWatermark(context.Context, int64) error { return nil }
