package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/recycle"
)

// JoinType is the kind of join.
type JoinType int

// Join types. Inner to Full output the left columns then the right ones;
// Semi and Anti output the left columns only; Mark outputs the left
// columns and one BOOLEAN; Single outputs what Left does.
const (
	Inner JoinType = iota
	Left
	Right
	Full
	// Semi: each left row with at least one match, once (EXISTS, IN).
	Semi
	// Anti: each left row with no match (NOT EXISTS; NOT IN when null
	// aware).
	Anti
	// Mark: every left row once, with a trailing BOOLEAN: whether it has a
	// match (an IN or EXISTS that is a value rather than a filter).
	Mark
	// Single: LEFT, except that a left row with more than one match is an
	// error (the join a scalar subquery becomes).
	Single
)

// ErrScalarSubqueryRows is a Single join's error: a left row found more
// than one match.
var ErrScalarSubqueryRows = errors.New("more than one row returned by a subquery used as an expression")

func (t JoinType) String() string {
	switch t {
	case Left:
		return "LEFT"
	case Right:
		return "RIGHT"
	case Full:
		return "FULL"
	case Semi:
		return "SEMI"
	case Anti:
		return "ANTI"
	case Mark:
		return "MARK"
	case Single:
		return "SINGLE"
	}
	return "INNER"
}

// padsLeft: a left row without a match comes out once, NULLs on the right.
func (t JoinType) padsLeft() bool { return t == Left || t == Full || t == Single }

// padsBuild: a build row without a match comes out once the probe input
// has ended, NULLs on the left.
func (t JoinType) padsBuild() bool { return t == Right || t == Full }

// leftOnly: the output is decided per left row from whether it has a
// match (no pairs come out).
func (t JoinType) leftOnly() bool { return t == Semi || t == Anti || t == Mark }

// HashJoinSpec configures a batch hash join.
type HashJoinSpec struct {
	Type JoinType
	// LeftKeys[i] = RightKeys[i] are the equality keys (at least one), of
	// identical types (the planner casts them).
	LeftKeys, RightKeys []int
	// NullSafe[i]: key i compares with IS NOT DISTINCT FROM, so NULL
	// matches NULL (the domain joins of decorrelation, INTERSECT). nil:
	// no key is null-safe.
	NullSafe []bool
	// NullAware gives Mark and Anti the SQL semantics of IN and NOT IN:
	// a left row's mark is the three-valued OR, over the build rows whose
	// Residual is TRUE, of the AND of its key comparisons (NullSafe keys
	// compare TRUE or FALSE, the others as '=': NULL when either side is
	// NULL). So with one key: NULL instead of FALSE when the left key is
	// NULL and a build row qualifies, or when nothing matches and a
	// qualifying build row has a NULL key; PostgreSQL's row-wise IN for
	// several. Anti keeps a left row only when that OR is FALSE; Semi
	// (TRUE only) is the same either way. Other types refuse it.
	NullAware bool
	// Residual, when not nil, is a BOOLEAN predicate over the left row's
	// columns followed by the build row's (Out's layout for the types that
	// output both) that a key match must make TRUE to count: for the outer
	// types a row whose matches all fail is unmatched, for Semi, Anti,
	// Mark and Single only passing matches exist.
	Residual expr.Expr
	// Out is the output schema: see JoinType. A Mark join's last column is
	// the BOOLEAN mark.
	Out *arrow.Schema
}

// Validate checks what the spec alone can tell; the inputs' schemas are
// checked against it when their first batches arrive.
func (s HashJoinSpec) Validate() error {
	if len(s.LeftKeys) != len(s.RightKeys) || len(s.LeftKeys) == 0 {
		return fmt.Errorf("join: %d left keys and %d right keys", len(s.LeftKeys), len(s.RightKeys))
	}
	if s.NullSafe != nil && len(s.NullSafe) != len(s.LeftKeys) {
		return fmt.Errorf("join: %d null-safe flags for %d keys", len(s.NullSafe), len(s.LeftKeys))
	}
	return validateJoin(s.Type, s.NullAware, s.Residual, s.Out, s.LeftKeys)
}

// validateJoin is what the hash and the nested-loop join check alike.
func validateJoin(typ JoinType, nullAware bool, cond expr.Expr, out *arrow.Schema, leftKeys []int) error {
	if typ < Inner || typ > Single {
		return fmt.Errorf("join: unknown join type %d", int(typ))
	}
	if nullAware && typ != Mark && typ != Anti && typ != Semi {
		return fmt.Errorf("join: a %s join cannot be null aware (only SEMI, ANTI and MARK)", typ)
	}
	if cond != nil && cond.Type().ID() != arrow.BOOL {
		return fmt.Errorf("join: condition %s is %s, not BOOLEAN", cond, cond.Type())
	}
	if out == nil {
		return fmt.Errorf("join: no output schema")
	}
	nLeft := out.NumFields()
	if typ == Mark {
		if nLeft == 0 || out.Field(nLeft-1).Type.ID() != arrow.BOOL {
			return fmt.Errorf("join: a MARK join's last output column is its BOOLEAN mark")
		}
		nLeft--
	}
	for _, k := range leftKeys {
		if k < 0 || k >= nLeft {
			return fmt.Errorf("join: left key %d out of range", k)
		}
	}
	return nil
}

// HashJoin is an equi-join of bounded inputs. Input 0 (left) is the probe
// side and streams; input 1 (right) is the build side, hashed when it
// finishes. Probe batches that arrive before that are retained and
// replayed. NULL keys never match unless the key is null-safe.
//
// A probe batch's key matches become candidate pairs of index vectors; a
// residual is evaluated over them vectorised (see pairRecord) and the
// output is gathered from the pairs that pass, born columnar when the
// planner allows it. Candidates are taken in bounded chunks, so a key with
// many build rows does not build its whole product at once.
type HashJoin struct{ batchJoin }

// NewHashJoin returns typ JOIN on leftKeys[i] = rightKeys[i] producing out.
func NewHashJoin(typ JoinType, leftKeys, rightKeys []int, out *arrow.Schema, mem memory.Allocator) *HashJoin {
	return NewHashJoinSpec(HashJoinSpec{Type: typ, LeftKeys: leftKeys, RightKeys: rightKeys, Out: out}, mem)
}

// NewHashJoinSpec returns the hash join spec describes; errors (see
// Validate) surface on the first batch.
func NewHashJoinSpec(spec HashJoinSpec, mem memory.Allocator) *HashJoin {
	j := &HashJoin{newBatchJoin(spec.Type, spec.NullAware, spec.Residual, spec.Out, mem)}
	j.leftKeys, j.rightKeys, j.nullSafe = spec.LeftKeys, spec.RightKeys, spec.NullSafe
	if j.err = spec.Validate(); j.err != nil {
		return j
	}
	types := make([]arrow.DataType, len(spec.LeftKeys))
	for i, k := range spec.LeftKeys {
		// Left columns come first in the output, so its types are theirs.
		types[i] = spec.Out.Field(k).Type
		if j.isNullSafe(i) {
			j.nullKeys = true
		} else {
			j.plainKeys = append(j.plainKeys, i)
		}
	}
	j.kind = chooseKeyKind(types)
	return j
}

// Kind implements exec.Operator.
func (j *HashJoin) Kind() string { return "hash_join" }

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

	chunks  []buildChunk
	build   *buildSide
	pending []pendingProbe
	heldWM  int64
	// RIGHT and FULL: which build rows found a match, and which inputs
	// ended (the rows that found none come out padded once both have).
	matched      []bool
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

type pendingProbe struct {
	b        *exec.Batch
	columnar bool
}

func newBatchJoin(typ JoinType, nullAware bool, residual expr.Expr, out *arrow.Schema, mem memory.Allocator) batchJoin {
	j := batchJoin{typ: typ, nullAware: nullAware, residual: residual, out: out, mem: mem,
		damper: exec.NewOutputDamper(), heldWM: exec.MinWatermark, pairChunk: joinPairChunk}
	j.outMem, j.recycle = outputAllocator(mem)
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
	return r
}

// Process is the row path.
func (j *batchJoin) Process(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) error {
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
	return j.probe(ctx, &probeBatch{schema: b.Schema(), rows: b.Rows(), n: b.Len()}, out)
}

// ProcessColumnar buffers a build record or probes with a record.
func (j *batchJoin) ProcessColumnar(ctx context.Context, input int, b *exec.Batch, out exec.Emitter) (bool, error) {
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
	return true, j.probe(ctx, &probeBatch{schema: b.Schema(), rec: b.Record(), n: b.Len()}, out)
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
	defer func() {
		for _, p := range pending {
			p.b.Release()
		}
	}()
	for _, p := range pending {
		pb := &probeBatch{schema: p.b.Schema(), n: p.b.Len()}
		if p.columnar {
			pb.rec = p.b.Record()
		} else {
			pb.rows = p.b.Rows()
		}
		if err := j.probe(ctx, pb, out); err != nil {
			return err
		}
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
