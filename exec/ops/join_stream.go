package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// TimeBound is an event-time condition between the two inputs of a
// StreamJoin: a pair can match only when right.time - left.time lies in
// [Lo, Hi] (microseconds; a missing bound is open). It does not decide
// matches (the planner keeps the condition as a filter above the join): it
// tells the join when a held row can match nothing more, so the state
// expires with the watermark instead of growing forever. Nexmark q7's
// `B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime`
// is [0, 10 s]; q8's equality of window ends is [0, 0].
type TimeBound struct {
	LeftCol, RightCol int
	Lo, Hi            int64
	HasLo, HasHi      bool
}

// Hold is how far the join's output watermark trails its input's: a
// matched pair's times can be that much older than the newest row's. With
// one bound missing there is no such distance and the join forwards only
// the final watermark.
func (tb *TimeBound) Hold() int64 {
	h := int64(0)
	if tb.HasHi {
		h = max(h, tb.Hi)
	}
	if tb.HasLo {
		h = max(h, -tb.Lo)
	}
	return h
}

// StreamJoinSpec configures a StreamJoin.
type StreamJoinSpec struct {
	Type                JoinType
	LeftKeys, RightKeys []int
	// LeftOp, RightOp: the row-kind column of a changelog input (+I, -U,
	// +U, -D), or -1 for an append-only input.
	LeftOp, RightOp int
	Time            *TimeBound
	// Out is the output: the row kind first when the result is a changelog
	// (an outer join, or a changelog input), then the left input's columns
	// and the right's, each without its row-kind column.
	Out *arrow.Schema
	// StateTTL, when positive, drops held rows that long after they
	// arrived (Flink's 'table.exec.state.ttl'): a regular join's state
	// stops growing forever, at the price of missing pairs with rows
	// older than that. Nothing is emitted when rows expire. Now is the
	// clock (time.Now when nil; tests set it).
	StateTTL time.Duration
	Now      func() time.Time
}

// Changelog reports whether the join's result is a changelog.
func (s StreamJoinSpec) Changelog() bool {
	return s.Type != Inner || s.LeftOp >= 0 || s.RightOp >= 0
}

// StreamJoin is an equi-join of two unbounded inputs: a symmetric hash
// join. Each input's rows are held in its side of the state, and each
// arriving batch probes the other side's state and then joins its own, so a
// pair is emitted once, by whichever of its rows came second. NULL keys
// never match.
//
// State is kept in the form the batches came in (Arrow records retained,
// or rows) and indexed by one key table shared by both sides. With a
// TimeBound it expires with the watermark; without one it grows with the
// inputs, as a regular join's does in Flink (q3, q20).
//
// An append-only INNER join emits born-columnar output when the planner
// allows it (with the output damper). An outer join's result is a
// changelog: an unmatched row comes out padded with NULLs (+I) and is
// retracted (-D) when its first match arrives; it is rows by construction
// (its planner gate says changelog-output). A changelog input's rows carry
// their kind: +I/+U add to the state and emit their pairs with that kind,
// -U/-D remove the row and retract its pairs. If a retraction reaches a join
// whose output was born columnar (a planner gate that should not have let
// it), the join bails to rows for the rest of its life: a wrong gate costs
// speed, never correctness.
type StreamJoin struct {
	spec      StreamJoinSpec
	changelog bool
	mem       memory.Allocator
	keys      *keyIndex
	side      [2]*joinSide
	keyCols   [2][]int
	valCols   [2][]int // the columns that reach the output, per input
	// plainIn is each input's schema with dictionary columns as their
	// values: held records are stored decoded, so one side's state never
	// mixes dictionary and plain arrays of a column (a scan hands out both,
	// and restored state is plain).
	plainIn [2]*arrow.Schema
	opCol   [2]int
	timeCol [2]int
	scale   [2][2]int64 // per input: the time column's mul, div
	scaled  [2]bool
	wm      int64
	ended   [2]bool
	err     error

	columnarOut bool
	bailed      bool
	damper      *exec.Damper

	keysRebuilt                  int // the key table's size after the last rebuild
	late, badRetracts            int64
	ttlExpired                   int64 // rows dropped by the state TTL
	emitsColumnar, emitsHeldBack int64

	// pairChunk bounds the pairs one emitted batch holds (joinPairChunk;
	// tests make it small): a key held many times on the other side
	// streams its matches in pieces, the context checked between them.
	pairChunk int

	// Scratch, reused across batches.
	ids    []int32
	pairs  []joinPair
	kcols  []arrow.Array
	keyRow []any
}

// joinPair is one output row: the arriving row in (or -1: a state row
// padded with NULLs), the state entry st (or -1: the arriving row padded),
// and its kind.
type joinPair struct {
	kind string
	in   int32
	st   int32
}

// NewStreamJoin returns a streaming join; errors surface on the first batch.
func NewStreamJoin(spec StreamJoinSpec, mem memory.Allocator) *StreamJoin {
	j := &StreamJoin{spec: spec, changelog: spec.Changelog(), mem: mem, damper: exec.NewOutputDamper(),
		wm: exec.MinWatermark, pairChunk: joinPairChunk, opCol: [2]int{spec.LeftOp, spec.RightOp}, timeCol: [2]int{-1, -1}}
	j.keyCols = [2][]int{spec.LeftKeys, spec.RightKeys}
	j.side[0] = &joinSide{outer: spec.Type == Left || spec.Type == Full, nullHead: -1}
	j.side[1] = &joinSide{outer: spec.Type == Full, nullHead: -1}
	if spec.Type == Right {
		j.err = fmt.Errorf("stream join: a RIGHT join is planned as a LEFT join with its inputs swapped")
	}
	if len(spec.LeftKeys) != len(spec.RightKeys) || len(spec.LeftKeys) == 0 {
		j.err = fmt.Errorf("stream join: %d left keys and %d right keys", len(spec.LeftKeys), len(spec.RightKeys))
	}
	if spec.Time != nil {
		j.timeCol = [2]int{spec.Time.LeftCol, spec.Time.RightCol}
	}
	// The key table's layout comes from the key types, read off the
	// output (the left input's value columns sit there in order).
	off := 0
	if j.changelog {
		off = 1
	}
	types := make([]arrow.DataType, len(spec.LeftKeys))
	for i, k := range spec.LeftKeys {
		oc := off + k
		if spec.LeftOp >= 0 && k > spec.LeftOp {
			oc--
		}
		if k == spec.LeftOp || oc >= spec.Out.NumFields() {
			j.err = fmt.Errorf("stream join: left key %d out of range", k)
			return j
		}
		types[i] = spec.Out.Field(oc).Type
	}
	j.keys = newKeyIndex(chooseKeyKind(types), false)
	return j
}

// Kind implements exec.Operator.
func (j *StreamJoin) Kind() string { return "stream_join" }

// Capabilities implements exec.Operator: append-only inputs are read from
// their arrays, and an append-only INNER join can emit born columnar; an
// outer join's result (or one over a changelog input) carries row kinds,
// which the planner's gate records as the reason it stays rows.
func (j *StreamJoin) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, EmitsColumnar: true, ChangelogOutput: j.changelog}
}

// SetColumnarOutput implements exec.ColumnarOutputSetter.
func (j *StreamJoin) SetColumnarOutput(on bool) { j.columnarOut = on && !j.changelog }

// Type is the join type, for EXPLAIN.
func (j *StreamJoin) Type() JoinType { return j.spec.Type }

// Damper is the born-columnar output damper, for EXPLAIN ANALYZE.
func (j *StreamJoin) Damper() *exec.Damper { return j.damper }

// Report implements exec.Reporter.
func (j *StreamJoin) Report() exec.OperatorReport {
	st := j.damper.State()
	r := exec.OperatorReport{ColumnarEmits: j.emitsColumnar, HeldBackEmits: j.emitsHeldBack, Damper: &st}
	r.Counters = append(r.Counters,
		exec.NamedCount{Name: "state rows left", Value: int64(j.side[0].liveRows)},
		exec.NamedCount{Name: "state rows right", Value: int64(j.side[1].liveRows)},
		exec.NamedCount{Name: "state keys", Value: int64(j.keys.len())})
	if j.spec.StateTTL > 0 {
		r.Counters = append(r.Counters, exec.NamedCount{Name: "rows expired by the state TTL", Value: j.ttlExpired})
	}
	if j.spec.Time != nil {
		r.Counters = append(r.Counters,
			exec.NamedCount{Name: "rows expired by the watermark", Value: j.side[0].expired + j.side[1].expired},
			exec.NamedCount{Name: "late rows dropped", Value: j.late})
	}
	if j.opCol[0] >= 0 || j.opCol[1] >= 0 {
		r.Counters = append(r.Counters, exec.NamedCount{Name: "retractions of rows not held", Value: j.badRetracts})
	}
	if j.bailed {
		r.Counters = append(r.Counters, exec.NamedCount{Name: "bailed to rows on a retraction", Value: 1})
	}
	return r
}

// Bailed reports whether a retraction turned born-columnar output off.
func (j *StreamJoin) Bailed() bool { return j.bailed }

// StateRows is the number of rows held per input.
func (j *StreamJoin) StateRows() (left, right int) { return j.side[0].liveRows, j.side[1].liveRows }

// bind checks an input's schema once and derives its column roles.
func (j *StreamJoin) bind(s int, schema *arrow.Schema) error {
	if j.err != nil || j.valCols[s] != nil {
		return j.err
	}
	for _, k := range j.keyCols[s] {
		if k < 0 || k >= schema.NumFields() {
			return fmt.Errorf("stream join: key column %d of input %d out of range (%d columns)", k, s, schema.NumFields())
		}
	}
	if op := j.opCol[s]; op >= 0 && (op >= schema.NumFields() || schema.Field(op).Type.ID() != arrow.STRING) {
		return fmt.Errorf("stream join: input %d's row-kind column %d is not VARCHAR", s, op)
	}
	vc := make([]int, 0, schema.NumFields())
	for c := 0; c < schema.NumFields(); c++ {
		if c != j.opCol[s] {
			vc = append(vc, c)
		}
	}
	j.valCols[s] = vc
	j.plainIn[s] = plainSchema(schema)
	if t := j.timeCol[s]; t >= 0 {
		if t >= schema.NumFields() {
			return fmt.Errorf("stream join: time column %d of input %d out of range", t, s)
		}
		mul, div, err := tsScale(schema.Field(t).Type)
		if err != nil {
			return fmt.Errorf("stream join: column %q: %w", schema.Field(t).Name, err)
		}
		j.scale[s] = [2]int64{mul, div}
	}
	if j.valCols[0] != nil && j.valCols[1] != nil {
		off := 0
		if j.changelog {
			off = 1
		}
		if got := off + len(j.valCols[0]) + len(j.valCols[1]); got != j.spec.Out.NumFields() {
			return fmt.Errorf("stream join: inputs give %d output columns, the output has %d", got, j.spec.Out.NumFields())
		}
	}
	return nil
}

// Process is the row path (and the only path for a changelog input).
func (j *StreamJoin) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
	if err := j.bind(input, b.Schema()); err != nil {
		j.err = err
		return err
	}
	// Expire before taking key ids: the expiry may rebuild the key table.
	now, err := j.expireTTL()
	if err != nil {
		return err
	}
	rows := b.Rows()
	ids := j.ids[:0]
	for ri, r := range rows {
		j.keyRow = j.keyRow[:0]
		for _, k := range j.keyCols[input] {
			j.keyRow = append(j.keyRow, r[k])
		}
		insert := true
		if op := j.opCol[input]; op >= 0 {
			insert = !isRetraction(r[op])
		}
		g, _, err := j.keys.idRow(j.keyRow, insert)
		if err != nil {
			return fmt.Errorf("stream join: input %d row %d: %w", input, ri, err)
		}
		ids = append(ids, g)
	}
	j.ids = ids
	in := joinInput{rows: rows, n: len(rows)}
	return j.step(ctx, input, in, now, out)
}

// ProcessColumnar probes and holds an append-only input's record without
// decoding it; a changelog input goes to the row path.
func (j *StreamJoin) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if j.opCol[input] >= 0 {
		return false, nil
	}
	if err := j.bind(input, b.Schema()); err != nil {
		j.err = err
		return false, err
	}
	now, err := j.expireTTL()
	if err != nil {
		return true, err
	}
	rec := b.Record()
	n := int(rec.NumRows())
	j.kcols = j.kcols[:0]
	for _, k := range j.keyCols[input] {
		j.kcols = append(j.kcols, rec.Column(k))
	}
	ids, err := j.keys.idsColumnar(j.kcols, n, true, j.ids, nil)
	if err != nil {
		return true, fmt.Errorf("stream join: input %d: %w", input, err)
	}
	j.ids = ids
	// Key ids come from the columns as they came (a dictionary's entries
	// are looked up once); what is held and emitted is decoded.
	plain, err := plainRecord(j.mem, j.plainIn[input], rec)
	if err != nil {
		return true, fmt.Errorf("stream join: input %d: %w", input, err)
	}
	defer plain.Release()
	return true, j.step(ctx, input, joinInput{rec: plain, n: n}, now, out)
}

// joinInput is the arriving batch in either form.
type joinInput struct {
	rec  arrow.RecordBatch
	rows []exec.Row
	n    int
}

func (in joinInput) value(i int32, c int) any {
	if in.rec != nil {
		return exec.Value(in.rec.Column(c), int(i))
	}
	return in.rows[i][c]
}

func isRetraction(op any) bool {
	s, _ := op.(string)
	return s == OpUpdateBefore || s == OpDelete
}

// eventTime reads row i's time (ok false for NULL).
func (j *StreamJoin) eventTime(s int, in joinInput, i int) (int64, bool) {
	c := j.timeCol[s]
	if in.rec != nil {
		a := in.rec.Column(c).(*array.Timestamp)
		if a.IsNull(i) {
			return 0, false
		}
		return toMicros(int64(a.Value(i)), j.scale[s][0], j.scale[s][1]), true
	}
	v, ok := in.rows[i][c].(arrow.Timestamp)
	if !ok {
		return 0, false
	}
	return toMicros(int64(v), j.scale[s][0], j.scale[s][1]), true
}

// step joins one batch of input s (key ids in j.ids, taken after the
// TTL's expiry) against the other side's state, holds its rows (arrived
// at now, for the TTL) and emits the pairs.
func (j *StreamJoin) step(ctx context.Context, s int, in joinInput, now int64, out exec.Emitter) error {
	o := 1 - s
	mine, other := j.side[s], j.side[o]
	// Hold the rows while the other input may still send rows to probe
	// them, and always for a changelog input: its retractions name them.
	keep := !j.ended[o] || j.opCol[s] >= 0
	pairs := j.pairs[:0]
	chunk := int32(-1)
	var err error
	for i := 0; i < in.n; i++ {
		g := j.ids[i]
		kind := OpInsert
		if op := j.opCol[s]; op >= 0 {
			kind, _ = in.value(int32(i), op).(string)
		}
		t := exec.MinWatermark
		if j.timeCol[s] >= 0 {
			var ok bool
			if t, ok = j.eventTime(s, in, i); ok && t < j.wm {
				j.late++ // its partners may have expired already
				continue
			}
		}
		if isRetraction(kind) {
			e := j.find(s, in, int32(i), g)
			if e < 0 {
				j.badRetracts++
				continue
			}
			if j.columnarOut {
				j.columnarOut, j.bailed = false, true
			}
			n := 0
			for m := other.first(g); m >= 0; m = other.next(m) {
				if len(pairs) >= j.pairChunk {
					if pairs, err = j.emitPart(ctx, s, in, pairs, out); err != nil {
						return err
					}
				}
				pairs = append(pairs, joinPair{kind: kind, in: int32(i), st: m})
				if other.outer {
					c := other.matched(m)
					if *c--; *c == 0 { // its last match: padded again
						pairs = append(pairs, joinPair{kind: OpInsert, in: -1, st: m})
					}
				}
				n++
			}
			if n == 0 && mine.outer {
				pairs = append(pairs, joinPair{kind: kind, in: int32(i), st: -1})
			}
			mine.retract(e)
			continue
		}
		n := int32(0)
		for m := other.first(g); m >= 0; m = other.next(m) {
			if len(pairs) >= j.pairChunk {
				if pairs, err = j.emitPart(ctx, s, in, pairs, out); err != nil {
					return err
				}
			}
			if other.outer {
				c := other.matched(m)
				if *c == 0 {
					pairs = append(pairs, joinPair{kind: OpDelete, in: -1, st: m})
				}
				*c++
			}
			pairs = append(pairs, joinPair{kind: kind, in: int32(i), st: m})
			n++
		}
		if n == 0 && mine.outer {
			pairs = append(pairs, joinPair{kind: kind, in: int32(i), st: -1})
		}
		// A NULL key matches nothing; such a row is held only when a
		// retraction may name it later.
		if keep && (g >= 0 || j.opCol[s] >= 0) {
			if chunk < 0 {
				chunk = mine.addChunk(in.rec, in.rows, in.n)
				mine.chunks[chunk].born = now
			}
			mine.add(chunk, int32(i), g, t, n)
		}
	}
	if chunk >= 0 {
		mine.filled(chunk)
	}
	j.pairs = pairs
	return j.emit(ctx, s, in, pairs, out)
}

// emitPart emits the pairs gathered so far of a batch whose pairs go on,
// then checks the context: a key with many held rows comes out in bounded
// batches and a cancelled query stops between them. It returns pairs
// emptied for reuse. The pairs only name rows of the arriving batch and of
// the other side's state, which step does not change, so emitting them
// before the batch's own rows are held changes nothing.
func (j *StreamJoin) emitPart(ctx context.Context, s int, in joinInput, pairs []joinPair, out exec.Emitter) ([]joinPair, error) {
	if err := j.emit(ctx, s, in, pairs, out); err != nil {
		return pairs, err
	}
	return pairs[:0], ctx.Err()
}

// expireTTL drops the held rows that arrived StateTTL or longer ago, on
// both sides, before a batch takes its key ids and probes them (a drop
// may rebuild the key table), and returns the time now (unix
// nanoseconds, 0 without a TTL). Chunks are held oldest first, so only the
// old end of each side is looked at.
func (j *StreamJoin) expireTTL() (int64, error) {
	if j.spec.StateTTL <= 0 {
		return 0, nil
	}
	clock := j.spec.Now
	if clock == nil {
		clock = time.Now
	}
	now := clock().UnixNano()
	cut := now - int64(j.spec.StateTTL)
	dropped := false
	for _, side := range j.side {
		for len(side.live) > 0 {
			c := side.chunks[side.live[0]]
			if !c.dropped && c.born > cut {
				break
			}
			if !c.dropped {
				j.ttlExpired += int64(c.live)
				side.drop(c)
				dropped = true
			}
			side.live = side.live[1:]
		}
	}
	if dropped {
		return now, j.maybeRebuild()
	}
	return now, nil
}

// find returns the held entry of input s whose row equals row i of in
// (the row a retraction names), or -1.
func (j *StreamJoin) find(s int, in joinInput, i, g int32) int32 {
	side := j.side[s]
	e := side.first(g)
	if g < 0 {
		e = side.skipDead(side.nullHead)
	}
	for ; e >= 0; e = side.next(e) {
		same := true
		for _, c := range j.valCols[s] {
			if !identical(side.value(e, c), in.value(i, c)) {
				same = false
				break
			}
		}
		if same {
			return e
		}
	}
	return -1
}

// setPairChunk sets the bound on one emitted batch's pairs (tests).
func (j *StreamJoin) setPairChunk(n int) { j.pairChunk = n }
