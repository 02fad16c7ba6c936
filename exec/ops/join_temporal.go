package ops

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// TemporalJoinSpec configures an event-time temporal join.
type TemporalJoinSpec struct {
	Type JoinType // Inner or Left
	// LeftKeys[i] = RightKeys[i]: the versioned table's key (its PRIMARY
	// KEY) against the stream's columns, of identical types.
	LeftKeys, RightKeys []int
	// LeftTime and RightTime are the event-time columns (TIMESTAMP) of the
	// stream and of the versioned table.
	LeftTime, RightTime int
	// Out is the stream's columns then the table's.
	Out *arrow.Schema
}

// TemporalJoin is `JOIN t FOR SYSTEM_TIME AS OF s.rowtime ON s.k = t.pk`
// against a versioned table (Flink's event-time temporal join): each
// stream row (input 0) is joined with the version of its key that was
// valid at the row's event time, the table row (input 1) of that key with
// the latest time at or before it. A stream row waits until the watermark
// (the minimum of both inputs') passes its time, so every version that
// could be valid then has arrived; it then comes out once (append-only).
// Versions older than the one valid at the watermark can never be chosen
// again and are dropped, so the state is bounded by the watermark.
//
// The row path only: the state is per key and per row.
type TemporalJoin struct {
	exec.Base
	spec  TemporalJoinSpec
	mem   memory.Allocator
	err   error
	keys  *keyIndex
	vers  [][]version // by key id, sorted by time
	wait  []waitingRow
	wm    int64
	ended [2]bool
	// the inputs' schemas, for the state's records
	schemas [2]*arrow.Schema
	keyRow  []any
	scale   [2][2]int64 // mul, div per input
	scaled  [2]bool

	dropped int64
}

type version struct {
	ts  int64 // µs
	row exec.Row
}

type waitingRow struct {
	ts  int64 // µs
	row exec.Row
}

// NewTemporalJoin returns the join spec describes; errors surface on the
// first batch.
func NewTemporalJoin(spec TemporalJoinSpec, mem memory.Allocator) *TemporalJoin {
	j := &TemporalJoin{spec: spec, mem: mem, wm: exec.MinWatermark}
	switch {
	case spec.Type != Inner && spec.Type != Left:
		j.err = fmt.Errorf("temporal join: a %s join cannot join a versioned table (INNER or LEFT)", spec.Type)
	case len(spec.LeftKeys) == 0 || len(spec.LeftKeys) != len(spec.RightKeys):
		j.err = fmt.Errorf("temporal join: %d left keys and %d right keys", len(spec.LeftKeys), len(spec.RightKeys))
	case spec.Out == nil:
		j.err = fmt.Errorf("temporal join: no output schema")
	}
	if j.err != nil {
		return j
	}
	types := make([]arrow.DataType, len(spec.LeftKeys))
	for i, k := range spec.LeftKeys {
		if k < 0 || k >= spec.Out.NumFields() {
			j.err = fmt.Errorf("temporal join: left key %d out of range", k)
			return j
		}
		types[i] = spec.Out.Field(k).Type
	}
	j.keys = newKeyIndex(chooseKeyKind(types), false)
	return j
}

// Kind implements exec.Operator.
func (j *TemporalJoin) Kind() string { return "temporal_join" }

// Capabilities implements exec.Operator: rows in, rows out.
func (j *TemporalJoin) Capabilities() exec.Capabilities { return exec.Capabilities{} }

// Report implements exec.Reporter.
func (j *TemporalJoin) Report() exec.OperatorReport {
	n := 0
	for _, v := range j.vers {
		n += len(v)
	}
	return exec.OperatorReport{Counters: []exec.NamedCount{
		{Name: "versions held", Value: int64(n)},
		{Name: "rows waiting", Value: int64(len(j.wait))},
		{Name: "versions dropped", Value: j.dropped},
	}}
}

func (j *TemporalJoin) check(input int, s *arrow.Schema) error {
	if j.err != nil {
		return j.err
	}
	if j.scaled[input] {
		return nil
	}
	col, keys := j.spec.LeftTime, j.spec.LeftKeys
	if input == 1 {
		col, keys = j.spec.RightTime, j.spec.RightKeys
	}
	for _, k := range append([]int{col}, keys...) {
		if k < 0 || k >= s.NumFields() {
			return fmt.Errorf("temporal join: column %d of input %d out of range (%d columns)", k, input, s.NumFields())
		}
	}
	mul, div, err := tsScale(s.Field(col).Type)
	if err != nil {
		return fmt.Errorf("temporal join: time column %q: %w", s.Field(col).Name, err)
	}
	j.scale[input], j.scaled[input], j.schemas[input] = [2]int64{mul, div}, true, plainSchema(s) // the state holds values decoded
	return nil
}

// timeOf is a row's event time in µs; ok is false for NULL.
func (j *TemporalJoin) timeOf(input int, r exec.Row) (int64, bool) {
	col := j.spec.LeftTime
	if input == 1 {
		col = j.spec.RightTime
	}
	v, ok := r[col].(arrow.Timestamp)
	if !ok {
		return 0, false
	}
	return toMicros(int64(v), j.scale[input][0], j.scale[input][1]), true
}

// keyID is the row's key id (-1: a NULL key, or unknown when !insert).
func (j *TemporalJoin) keyID(input int, r exec.Row, insert bool) (int32, error) {
	cols := j.spec.LeftKeys
	if input == 1 {
		cols = j.spec.RightKeys
	}
	j.keyRow = j.keyRow[:0]
	for _, c := range cols {
		if r[c] == nil {
			return -1, nil
		}
		j.keyRow = append(j.keyRow, r[c])
	}
	id, _, err := j.keys.idRow(j.keyRow, insert)
	return id, err
}

// Process takes a stream row (held until the watermark passes it) or a
// version of the table.
func (j *TemporalJoin) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if err := j.check(input, b.Schema()); err != nil {
		return err
	}
	for _, r := range b.Rows() {
		if err := j.add(input, r); err != nil {
			return err
		}
	}
	return nil
}

func (j *TemporalJoin) add(input int, r exec.Row) error {
	ts, ok := j.timeOf(input, r)
	if input == 0 {
		if !ok {
			ts = exec.MinWatermark // no time: joined with nothing, at the next watermark
		}
		j.wait = append(j.wait, waitingRow{ts: ts, row: r})
		return nil
	}
	if !ok {
		j.dropped++ // a version without a time is never valid
		return nil
	}
	id, err := j.keyID(1, r, true)
	if err != nil || id < 0 {
		if id < 0 {
			j.dropped++ // a NULL key matches nothing
		}
		return err
	}
	for int(id) >= len(j.vers) {
		j.vers = append(j.vers, nil)
	}
	vs := j.vers[id]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].ts >= ts })
	if i < len(vs) && vs[i].ts == ts {
		vs[i].row = r // the same time again: the later row is the version
		return nil
	}
	vs = append(vs, version{})
	copy(vs[i+1:], vs[i:])
	vs[i] = version{ts: ts, row: r}
	j.vers[id] = vs
	return nil
}

// OnWatermark joins the stream rows the watermark passed, drops the
// versions no later row can choose, and forwards the watermark.
func (j *TemporalJoin) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if j.err != nil {
		return j.err
	}
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	if err := j.fire(ctx, wm, out); err != nil {
		return err
	}
	j.trim(wm)
	return out.EmitWatermark(ctx, wm)
}

// fire emits the waiting rows at or before wm, in time order.
func (j *TemporalJoin) fire(ctx context.Context, wm int64, out exec.Emitter) error {
	sort.SliceStable(j.wait, func(a, b int) bool { return j.wait[a].ts < j.wait[b].ts })
	n := sort.Search(len(j.wait), func(i int) bool { return j.wait[i].ts > wm })
	if n == 0 {
		return nil
	}
	nl := j.spec.Out.NumFields()
	if j.schemas[1] != nil {
		nl -= j.schemas[1].NumFields()
	} else {
		nl = len(j.wait[0].row)
	}
	nr := j.spec.Out.NumFields() - nl
	var rows []exec.Row
	for _, w := range j.wait[:n] {
		var match exec.Row
		if w.ts != exec.MinWatermark {
			if id, err := j.keyID(0, w.row, false); err != nil {
				return err
			} else if id >= 0 && int(id) < len(j.vers) {
				vs := j.vers[id]
				if i := sort.Search(len(vs), func(i int) bool { return vs[i].ts > w.ts }); i > 0 {
					match = vs[i-1].row
				}
			}
		}
		if match == nil && j.spec.Type != Left {
			continue
		}
		row := make(exec.Row, 0, nl+nr)
		row = append(row, w.row...)
		if match == nil {
			row = append(row, make(exec.Row, nr)...)
		} else {
			row = append(row, match...)
		}
		rows = append(rows, row)
	}
	j.wait = append(j.wait[:0], j.wait[n:]...)
	if len(rows) == 0 {
		return nil
	}
	return emitRowChunks(ctx, out, j.spec.Out, rows)
}

// trim keeps, per key, the version valid at wm and the later ones.
func (j *TemporalJoin) trim(wm int64) {
	for id, vs := range j.vers {
		i := sort.Search(len(vs), func(i int) bool { return vs[i].ts > wm })
		if i > 1 {
			j.dropped += int64(i - 1)
			j.vers[id] = append(vs[:0], vs[i-1:]...)
		}
	}
}

// Finish joins every waiting row once both inputs have ended.
func (j *TemporalJoin) Finish(ctx context.Context, input int, out exec.Emitter) error {
	j.ended[input] = true
	if !j.ended[0] || !j.ended[1] || j.err != nil {
		return j.err
	}
	return j.fire(ctx, exec.MaxWatermark, out)
}

// SnapshotState implements exec.Snapshotter: the waiting stream rows, the
// versions, the watermark and which inputs ended.
func (j *TemporalJoin) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, j.Kind(), temporalJoinStateVersion); err != nil {
		return err
	}
	v := make([]byte, 10)
	binary.LittleEndian.PutUint64(v, uint64(j.wm))
	for i, e := range j.ended {
		if e {
			v[8+i] = 1
		}
	}
	if err := w.Value("flags", v); err != nil {
		return err
	}
	var waiting, versions []exec.Row
	for _, r := range j.wait {
		waiting = append(waiting, r.row)
	}
	for _, vs := range j.vers {
		for _, r := range vs {
			versions = append(versions, r.row)
		}
	}
	for i, rows := range [][]exec.Row{waiting, versions} {
		if len(rows) == 0 {
			continue
		}
		rec, err := exec.EncodeRows(j.mem, j.schemas[i], rows)
		if err != nil {
			return fmt.Errorf("temporal join: %w", err)
		}
		err = w.Records([]string{"waiting", "versions"}[i], j.schemas[i], rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// RestoreState implements exec.Snapshotter.
func (j *TemporalJoin) RestoreState(ctx context.Context, r exec.StateReader) error {
	if err := checkHeader(r, j.Kind(), temporalJoinStateVersion); err != nil {
		return err
	}
	v, ok, err := r.Value("flags")
	if err != nil {
		return err
	}
	if !ok || len(v) != 10 {
		return fmt.Errorf("temporal join: the state has no flags")
	}
	j.wm = int64(binary.LittleEndian.Uint64(v))
	j.ended = [2]bool{v[8] == 1, v[9] == 1}
	for i, name := range []string{"waiting", "versions"} {
		_, recs, ok, err := r.Records(name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		for _, rec := range recs {
			b := exec.NewColumnarBatch(rec)
			err := j.Process(ctx, i, b, nil)
			b.Release()
			if err != nil {
				return fmt.Errorf("temporal join: restoring %s: %w", name, err)
			}
		}
	}
	return nil
}

// temporalJoinStateVersion is the layout of TemporalJoin's state.
const temporalJoinStateVersion = 1

var _ exec.Snapshotter = (*TemporalJoin)(nil)
