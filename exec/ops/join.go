package ops

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec/expr"
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
	// RightSemi: each build (right) row with at least one match, once;
	// right columns only. The planner uses it for a SEMI join whose left
	// input is the smaller: built on that input, probed by the other
	// (TPC-H Q4: 57k orders built, 3.8M lineitems probed, instead of the
	// reverse). No residual.
	RightSemi
	// RightAnti: each build row without a match; right columns only. As
	// RightSemi, for an ANTI join that is not null aware.
	RightAnti
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
	case RightSemi:
		return "RIGHT SEMI"
	case RightAnti:
		return "RIGHT ANTI"
	}
	return "INNER"
}

// padsLeft: a left row without a match comes out once, NULLs on the right.
func (t JoinType) padsLeft() bool { return t == Left || t == Full || t == Single }

// padsBuild: build rows come out once the probe input has ended: those
// without a match, NULLs on the left (RIGHT, FULL), or by whether they had
// one (buildOnly).
func (t JoinType) padsBuild() bool { return t == Right || t == Full || t.buildOnly() }

// buildOnly: the output is decided per build row from whether it has a
// match, once the probe input has ended (no pairs come out).
func (t JoinType) buildOnly() bool { return t == RightSemi || t == RightAnti }

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
	if typ < Inner || typ > RightAnti {
		return fmt.Errorf("join: unknown join type %d", int(typ))
	}
	if nullAware && typ != Mark && typ != Anti && typ != Semi {
		return fmt.Errorf("join: a %s join cannot be null aware (only SEMI, ANTI and MARK)", typ)
	}
	if typ.buildOnly() && cond != nil {
		return fmt.Errorf("join: a %s join takes no residual", typ)
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
	if typ.buildOnly() {
		return nil // the output is the build side's; the probe's keys are checked per batch
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
		// Left columns come first in the output, so its types are theirs
		// (the build's, the whole output of RIGHT SEMI and ANTI; the
		// planner gives both sides' keys one type).
		if spec.Type.buildOnly() {
			k = spec.RightKeys[i]
		}
		types[i] = spec.Out.Field(k).Type
		if j.isNullSafe(i) {
			j.nullKeys = true
		} else {
			j.plainKeys = append(j.plainKeys, i)
		}
	}
	j.kind = chooseKeyKind(types)
	j.newChild = func() *batchJoin { return &NewHashJoinSpec(spec, mem).batchJoin }
	return j
}

// Kind implements exec.Operator.
func (j *HashJoin) Kind() string { return "hash_join" }
