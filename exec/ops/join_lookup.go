package ops

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// LookupJoin is a processing-time temporal join, `JOIN t FOR SYSTEM_TIME
// AS OF s.proctime ON ...`, against a bounded table: each row of the
// stream (input 0) is joined with the table (input 1) as it is when the
// row is processed. The table is read once, whole, and hashed; stream rows
// that arrive before it is complete wait (as Flink's lookup of a table
// that is still loading would), and every later row is looked up at once.
// Only INNER and LEFT joins exist: a temporal join never emits a table row
// on its own.
//
// The join itself is the hash join's (columnar probe, residual, born
// columnar output); this operator adds the kind and a checkpointable
// state: the table's rows and the stream rows still waiting for it.
type LookupJoin struct {
	*HashJoin
	mem memory.Allocator

	table     []arrow.RecordBatch // the table's input as received (retained)
	tableDone bool
	waiting   []arrow.RecordBatch // stream batches held until the table is complete
	heldWM    int64
}

// NewLookupJoin returns the lookup join spec describes (Type INNER or
// LEFT); errors surface on the first batch.
func NewLookupJoin(spec HashJoinSpec, mem memory.Allocator) *LookupJoin {
	j := &LookupJoin{HashJoin: NewHashJoinSpec(spec, mem), mem: mem, heldWM: exec.MinWatermark}
	if j.err == nil && spec.Type != Inner && spec.Type != Left {
		j.err = fmt.Errorf("lookup join: a %s join cannot look up a table (INNER or LEFT)", spec.Type)
	}
	return j
}

// Kind implements exec.Operator.
func (j *LookupJoin) Kind() string { return "lookup_join" }

// Capabilities implements exec.Operator: the hash join's.
func (j *LookupJoin) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter: the hash join's.
func (j *LookupJoin) SetColumnarOutput(on bool) { j.HashJoin.SetColumnarOutput(on) }

// keep records a copy of b for the state: the table's rows, or a stream
// batch that waits for the table.
func (j *LookupJoin) keep(input int, b *exec.Batch) error {
	if input == 0 && j.tableDone {
		return nil
	}
	// Kept decoded: a scan hands out dictionary and plain batches of one
	// column, and the state's parts hold one schema.
	var rec arrow.RecordBatch
	var err error
	if b.IsColumnar() {
		rec, err = plainRecord(j.mem, plainSchema(b.Schema()), b.Record())
	} else {
		rec, err = exec.EncodeRows(j.mem, plainSchema(b.Schema()), b.Rows())
	}
	if err != nil {
		return fmt.Errorf("lookup join: %w", err)
	}
	if input == 1 {
		j.table = append(j.table, rec)
	} else {
		j.waiting = append(j.waiting, rec)
	}
	return nil
}

// Process is the row path.
func (j *LookupJoin) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if err := j.HashJoin.Process(ctx, input, b, out); err != nil {
		return err
	}
	return j.keep(input, b)
}

// ProcessColumnar is the columnar path.
func (j *LookupJoin) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	handled, err := j.HashJoin.ProcessColumnar(ctx, input, b, out)
	if err != nil || !handled {
		return handled, err
	}
	return true, j.keep(input, b)
}

// OnWatermark forwards the watermark once the table is complete (held
// before, as the waiting rows are).
func (j *LookupJoin) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if !j.tableDone {
		j.heldWM = max(j.heldWM, wm)
	}
	return j.HashJoin.OnWatermark(ctx, wm, out)
}

// Finish of the table hashes it and looks the waiting rows up.
func (j *LookupJoin) Finish(ctx context.Context, input int, out exec.Emitter) error {
	if input == 1 {
		j.tableDone = true
		releaseRecords(j.waiting)
		j.waiting = nil
	}
	return j.HashJoin.Finish(ctx, input, out)
}

// Close releases the state.
func (j *LookupJoin) Close() {
	releaseRecords(j.table)
	releaseRecords(j.waiting)
	j.table, j.waiting = nil, nil
	j.HashJoin.Close()
}

func releaseRecords(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// lookupFlags is the state's small part: whether the table is complete,
// and the watermark held while it is not.
func (j *LookupJoin) lookupFlags() []byte {
	v := make([]byte, 9)
	if j.tableDone {
		v[0] = 1
	}
	binary.LittleEndian.PutUint64(v[1:], uint64(j.heldWM))
	return v
}

// SnapshotState implements exec.Snapshotter: the table's rows, the stream
// rows waiting for it, and the flags.
func (j *LookupJoin) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, j.Kind(), lookupJoinStateVersion); err != nil {
		return err
	}
	if err := w.Value("flags", j.lookupFlags()); err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		recs []arrow.RecordBatch
	}{{"table", j.table}, {"waiting", j.waiting}} {
		if len(part.recs) == 0 {
			continue
		}
		if err := w.Records(part.name, part.recs[0].Schema(), part.recs...); err != nil {
			return err
		}
	}
	return nil
}

// RestoreState implements exec.Snapshotter: the saved batches go through
// the join again, as they first did, their output discarded: nothing of
// it is new (the table's completion replays no waiting rows, and a waiting
// row produces nothing until the table is complete).
func (j *LookupJoin) RestoreState(ctx context.Context, r exec.StateReader) error {
	if err := checkHeader(r, j.Kind(), lookupJoinStateVersion); err != nil {
		return err
	}
	flags, ok, err := r.Value("flags")
	if err != nil {
		return err
	}
	if !ok || len(flags) != 9 {
		return fmt.Errorf("lookup join: the state has no flags")
	}
	done, held := flags[0] == 1, int64(binary.LittleEndian.Uint64(flags[1:]))
	feed := func(name string, input int) error {
		_, recs, ok, err := r.Records(name)
		if err != nil || !ok {
			return err
		}
		defer releaseRecords(recs)
		for _, rec := range recs {
			b := exec.NewColumnarBatch(rec)
			rec.Retain() // the batch's reference; recs keeps its own
			_, err := exec.Dispatch(ctx, j, true, input, b, discardEmitter{})
			b.Release()
			if err != nil {
				return fmt.Errorf("lookup join: restoring %s: %w", name, err)
			}
		}
		return nil
	}
	if err := feed("table", 1); err != nil {
		return err
	}
	if done {
		return j.Finish(ctx, 1, discardEmitter{})
	}
	if held > exec.MinWatermark {
		if err := j.OnWatermark(ctx, held, discardEmitter{}); err != nil {
			return err
		}
	}
	return feed("waiting", 0)
}

// lookupJoinStateVersion is the layout of LookupJoin's state.
const lookupJoinStateVersion = 1

var _ exec.Snapshotter = (*LookupJoin)(nil)
