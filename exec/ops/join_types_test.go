package ops

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

var allJoinTypes = []JoinType{Inner, Left, Right, Full, Semi, Anti, Mark, Single}

// nullAwareValid: the types a null-aware join may be.
func nullAwareValid(t JoinType) bool { return t == Semi || t == Anti || t == Mark }

// refResidual is "l.v < r.w" over left ++ right (v is left column 2, w
// right column 2).
var refResidual expr.Expr = tCmp{op: "<", a: 2, b: 3 + 2}

// hashJoinKeySet is a key shape of the hash join tests: the key columns
// of each side and the null-safe flag sets to try.
type hashJoinKeySet struct {
	name   string
	lk, rk []int
	safe   [][]bool
}

var hashJoinKeySets = []hashJoinKeySet{
	{"k1", []int{0}, []int{0}, [][]bool{nil, {true}}},
	{"k2", []int{1}, []int{1}, [][]bool{nil, {true}}},
	{"k1k2", []int{0, 1}, []int{0, 1}, [][]bool{nil, {true, true}, {false, true}}},
}

// TestHashJoinTypes: every join type x key shape (BIGINT, VARCHAR, both;
// three for SEMI, ANTI and MARK) x null-safe keys (none, all, mixed) x residual or not x null aware
// where valid, on random inputs with duplicate and NULL keys, against
// the reference.
func TestHashJoinTypes(t *testing.T) {
	keySets := append(hashJoinKeySets,
		// Three keys: a null-aware join compares two plain keys within
		// the null-safe key's group.
		hashJoinKeySet{"k1k2v", []int{0, 1, 2}, []int{0, 1, 2}, [][]bool{nil, {false, false, true}, {true, false, false}}})
	for _, typ := range allJoinTypes {
		for _, ks := range keySets {
			if len(ks.lk) == 3 && !nullAwareValid(typ) {
				continue // the pair types' several keys are k1k2's
			}
			for _, safe := range ks.safe {
				for _, residual := range []expr.Expr{nil, refResidual} {
					for _, aware := range []bool{false, true} {
						if aware && !nullAwareValid(typ) {
							continue
						}
						spec := HashJoinSpec{Type: typ, LeftKeys: ks.lk, RightKeys: ks.rk, NullSafe: safe,
							NullAware: aware, Residual: residual, Out: refOut(typ)}
						if err := spec.Validate(); err != nil {
							t.Fatal(err)
						}
						name := fmt.Sprintf("%s/%s/safe=%v/residual=%v/aware=%v", typ, ks.name, safe, residual != nil, aware)
						t.Run(name, func(t *testing.T) {
							checkJoin(t, joinRun{
								name: name,
								ref: refSpec{typ: typ, lk: ks.lk, rk: ks.rk, nullSafe: safe, nullAware: aware,
									cond: residual, keyed: true, nRight: refRightSchema.NumFields()},
								newOp: func(mem memory.Allocator) exec.Operator { return NewHashJoinSpec(spec, mem) },
							}, 4)
						})
					}
				}
			}
		}
	}
}

// TestHashJoinBuildOnlyTypes: RIGHT SEMI and RIGHT ANTI (the right, build
// rows with or without a match; no residual) x key shape x null-safe
// keys, against the reference.
func TestHashJoinBuildOnlyTypes(t *testing.T) {
	for _, typ := range []JoinType{RightSemi, RightAnti} {
		for _, ks := range hashJoinKeySets {
			for _, safe := range ks.safe {
				spec := HashJoinSpec{Type: typ, LeftKeys: ks.lk, RightKeys: ks.rk, NullSafe: safe, Out: refOut(typ)}
				if err := spec.Validate(); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/safe=%v", typ, ks.name, safe)
				t.Run(name, func(t *testing.T) {
					checkJoin(t, joinRun{
						name:  name,
						ref:   refSpec{typ: typ, lk: ks.lk, rk: ks.rk, nullSafe: safe, keyed: true, nRight: refRightSchema.NumFields()},
						newOp: func(mem memory.Allocator) exec.Operator { return NewHashJoinSpec(spec, mem) },
					}, 4)
				})
			}
		}
	}
	bad := HashJoinSpec{Type: RightSemi, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: refResidual, Out: refOut(RightSemi)}
	if bad.Validate() == nil {
		t.Error("a RIGHT SEMI join with a residual was accepted")
	}
}

// TestNestedLoopJoinTypes: every join type x condition (none: a cross
// join; an inequality; an equality AND an inequality; an equality alone,
// which a null-aware join reads as IN) x null aware where valid.
func TestNestedLoopJoinTypes(t *testing.T) {
	eq := tCmp{op: "=", a: 0, b: 3} // l.k1 = r.rk1
	conds := []struct {
		name string
		on   expr.Expr
	}{
		{"cross", nil},
		{"v<w", refResidual},
		{"k1=rk1&v<w", tAnd{eq, refResidual}},
		{"k1=rk1", eq},
	}
	for _, typ := range allJoinTypes {
		for _, c := range conds {
			for _, aware := range []bool{false, true} {
				if aware && !nullAwareValid(typ) {
					continue
				}
				spec := NestedLoopJoinSpec{Type: typ, On: c.on, NullAware: aware, Out: refOut(typ)}
				if err := spec.Validate(); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/aware=%v", typ, c.name, aware)
				t.Run(name, func(t *testing.T) {
					checkJoin(t, joinRun{
						name:  name,
						ref:   refSpec{typ: typ, nullAware: aware, cond: c.on, nRight: refRightSchema.NumFields()},
						newOp: func(mem memory.Allocator) exec.Operator { return NewNestedLoopJoin(spec, mem) },
					}, 4)
				})
			}
		}
	}
}
