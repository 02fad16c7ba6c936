package ops

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// ---- test-only BOOLEAN expressions over BIGINT columns, in SQL's three-valued logic ----

// tCmp is "$a op $b" (op one of = < <>); NULL when either side is.
type tCmp struct {
	op   string
	a, b int
}

func (c tCmp) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (c tCmp) String() string       { return fmt.Sprintf("$%d %s $%d", c.a, c.op, c.b) }

func (c tCmp) cmp(x, y int64) bool {
	switch c.op {
	case "=":
		return x == y
	case "<":
		return x < y
	}
	return x != y
}

func (c tCmp) EvalRow(r exec.Row) (any, error) {
	if r[c.a] == nil || r[c.b] == nil {
		return nil, nil
	}
	return c.cmp(r[c.a].(int64), r[c.b].(int64)), nil
}

func (c tCmp) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, ok1 := rec.Column(c.a).(*array.Int64)
	b, ok2 := rec.Column(c.b).(*array.Int64)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: columns are %s, %s", c, rec.Column(c.a).DataType(), rec.Column(c.b).DataType())
	}
	out := array.NewBooleanBuilder(mem)
	defer out.Release()
	out.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) || b.IsNull(i) {
			out.UnsafeAppendBoolToBitmap(false)
		} else {
			out.UnsafeAppend(c.cmp(a.Value(i), b.Value(i)))
		}
	}
	return out.NewArray(), nil
}

// tAnd is "l AND r" in three-valued logic.
type tAnd struct{ l, r expr.Expr }

func (a tAnd) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (a tAnd) String() string       { return fmt.Sprintf("(%s AND %s)", a.l, a.r) }

func and3(l, r any) any {
	if l == false || r == false {
		return false
	}
	if l == nil || r == nil {
		return nil
	}
	return true
}

func (a tAnd) EvalRow(r exec.Row) (any, error) {
	l, err := a.l.EvalRow(r)
	if err != nil {
		return nil, err
	}
	rr, err := a.r.EvalRow(r)
	if err != nil {
		return nil, err
	}
	return and3(l, rr), nil
}

func (a tAnd) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	l, err := a.l.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	r, err := a.r.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	out := array.NewBooleanBuilder(mem)
	defer out.Release()
	lb, rb := l.(*array.Boolean), r.(*array.Boolean)
	for i := 0; i < lb.Len(); i++ {
		switch v := and3(exec.Value(lb, i), exec.Value(rb, i)); v {
		case nil:
			out.AppendNull()
		default:
			out.Append(v.(bool))
		}
	}
	return out.NewArray(), nil
}

// ---- the reference: joins by nested loops over rows, from SQL's definitions ----

// refSpec is a join as the reference reads it.
type refSpec struct {
	typ       JoinType
	lk, rk    []int  // equality keys; none for a nested-loop join
	nullSafe  []bool // per key: IS NOT DISTINCT FROM
	nullAware bool
	// cond is the residual (hash join) or the ON condition (nested loop)
	// over left ++ right; nil is TRUE.
	cond   expr.Expr
	keyed  bool
	nRight int // right columns, for padding
}

// or3 is SQL's OR.
func or3(a, b any) any {
	if a == true || b == true {
		return true
	}
	if a == nil || b == nil {
		return nil
	}
	return false
}

// keyCmp is the keys' comparison: the AND of "l = r" (NULL with a NULL)
// or, for a null-safe key, "l IS NOT DISTINCT FROM r".
func (s refSpec) keyCmp(l, r exec.Row) any {
	var res any = true
	for i := range s.lk {
		a, b := l[s.lk[i]], r[s.rk[i]]
		var c any
		switch {
		case s.nullSafe != nil && s.nullSafe[i]:
			c = (a == nil && b == nil) || (a != nil && b != nil && reflect.DeepEqual(a, b))
		case a == nil || b == nil:
			c = nil
		default:
			c = reflect.DeepEqual(a, b)
		}
		res = and3(res, c)
	}
	return res
}

func (s refSpec) condOf(t testing.TB, l, r exec.Row) any {
	if s.cond == nil {
		return true
	}
	v, err := s.cond.EvalRow(append(append(exec.Row{}, l...), r...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refJoinSQL answers the join, or errScalar for a SINGLE join whose
// left row has two matches.
func refJoinSQL(t testing.TB, s refSpec, left, right []exec.Row) ([]exec.Row, error) {
	var out []exec.Row
	rightMatched := make([]bool, len(right))
	pad := func(n int) exec.Row { return make(exec.Row, n) }
	for _, l := range left {
		var matches []exec.Row
		var mark any = false // the three-valued IN (null-aware)
		for ri, r := range right {
			k, c := s.keyCmp(l, r), s.condOf(t, l, r)
			if k == true && c == true {
				matches = append(matches, r)
				rightMatched[ri] = true
			}
			switch {
			case !s.keyed:
				mark = or3(mark, c) // the ON condition is the comparison
			case c == true:
				mark = or3(mark, k) // the residual picks the rows compared
			}
		}
		switch s.typ {
		case Inner, Left, Right, Full, Single:
			if s.typ == Single && len(matches) > 1 {
				return nil, ErrScalarSubqueryRows
			}
			for _, r := range matches {
				out = append(out, append(append(exec.Row{}, l...), r...))
			}
			if len(matches) == 0 && (s.typ == Left || s.typ == Full || s.typ == Single) {
				out = append(out, append(append(exec.Row{}, l...), pad(s.nRight)...))
			}
		case Semi:
			if len(matches) > 0 {
				out = append(out, append(exec.Row{}, l...))
			}
		case Anti:
			if (!s.nullAware && len(matches) == 0) || (s.nullAware && mark == false) {
				out = append(out, append(exec.Row{}, l...))
			}
		case Mark:
			var m any = len(matches) > 0
			if s.nullAware {
				m = mark
			}
			out = append(out, append(append(exec.Row{}, l...), m))
		}
	}
	if s.typ == Right || s.typ == Full {
		for ri, r := range right {
			if !rightMatched[ri] {
				out = append(out, append(pad(refLeftSchema.NumFields()), r...))
			}
		}
	}
	if s.typ == RightSemi || s.typ == RightAnti {
		for ri, r := range right {
			if rightMatched[ri] == (s.typ == RightSemi) {
				out = append(out, append(exec.Row{}, r...))
			}
		}
	}
	return out, nil
}

// ---- random inputs: small key domains (duplicates), NULLs everywhere ----

var refLeftSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k1", Type: i64, Nullable: true},
	{Name: "k2", Type: str, Nullable: true},
	{Name: "v", Type: i64, Nullable: true},
}, nil)

var refRightSchema = arrow.NewSchema([]arrow.Field{
	{Name: "rk1", Type: i64, Nullable: true},
	{Name: "rk2", Type: str, Nullable: true},
	{Name: "w", Type: i64, Nullable: true},
}, nil)

func refRows(rng *rand.Rand, n int) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		r := exec.Row{int64(rng.IntN(4)), []string{"a", "b", "c"}[rng.IntN(3)], int64(rng.IntN(10))}
		for c := range r {
			if rng.IntN(7) == 0 {
				r[c] = nil
			}
		}
		rows[i] = r
	}
	return rows
}

// refOut is the join's output schema.
func refOut(typ JoinType) *arrow.Schema {
	if typ == RightSemi || typ == RightAnti {
		return refRightSchema
	}
	fields := append([]arrow.Field{}, refLeftSchema.Fields()...)
	switch typ {
	case Semi, Anti:
	case Mark:
		fields = append(fields, arrow.Field{Name: "mark", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	default:
		fields = append(fields, refRightSchema.Fields()...)
	}
	return arrow.NewSchema(fields, nil)
}

// ---- running a join and expecting its error ----

// runJoinErr feeds a join the way runOp does and returns the first error.
func runJoinErr(t *testing.T, mem memory.Allocator, op exec.Operator, ins []input, size int, colIn bool) error {
	t.Helper()
	ctx := context.Background()
	defer op.Close()
	var firstErr error
	for i := len(ins) - 1; i >= 0; i-- { // the build side first: its Finish replays nothing
		bs := makeBatches(t, mem, ins[i], size, colIn)
		for _, b := range bs {
			if firstErr == nil {
				_, firstErr = exec.Dispatch(ctx, op, true, i, b, discard{})
			}
			b.Release()
		}
		if firstErr == nil {
			firstErr = op.Finish(ctx, i, discard{})
		}
	}
	return firstErr
}

// joinRun is one configuration of a join under test.
type joinRun struct {
	name  string
	ref   refSpec
	newOp func(mem memory.Allocator) exec.Operator
}

// checkJoin runs jr over inputs drawn from seed (plus the empty build,
// empty probe and both-empty cases) at batch sizes 1, 5 and 1024, row and
// columnar input, columnar output off and on, against the reference.
func checkJoin(t *testing.T, jr joinRun, seeds int) {
	if testing.Short() {
		seeds = 1 // -short (the -race run): one random case and the empty ones
	}
	for seed := 0; seed < seeds+3; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		left, right := refRows(rng, 1+rng.IntN(50)), refRows(rng, 1+rng.IntN(30))
		switch seed - seeds {
		case 0:
			right = nil
		case 1:
			left = nil
		case 2:
			left, right = nil, nil
		}
		want, wantErr := refJoinSQL(t, jr.ref, left, right)
		want = sortedRows(want)
		ins := []input{{refLeftSchema, left}, {refRightSchema, right}}
		for _, size := range []int{1, 5, 1024} {
			for _, colIn := range []bool{false, true} {
				for _, colOn := range []bool{false, true} {
					name := fmt.Sprintf("%s/seed=%d/size=%d/colIn=%v/colOn=%v", jr.name, seed, size, colIn, colOn)
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					newOp := jr.newOp
					if size == 5 {
						// Small pair chunks: a row's candidates span several.
						newOp = func(mem memory.Allocator) exec.Operator {
							op := jr.newOp(mem)
							op.(interface{ setPairChunk(int) }).setPairChunk(7)
							return op
						}
					}
					if wantErr != nil {
						err := runJoinErr(t, mem, newOp(mem), ins, size, colIn)
						if !errors.Is(err, wantErr) {
							t.Errorf("%s: error %v, want %v", name, err, wantErr)
						}
						mem.AssertSize(t, 0)
						continue
					}
					res := runOp(t, mem, newOp(mem), ins, size, colIn, colOn)
					if got := sortedRows(res.rows); !rowsEqual(got, want) {
						t.Errorf("%s:\ngot  %d rows %v\nwant %d rows %v", name, len(got), trunc(got), len(want), trunc(want))
					}
					if colIn && colOn && len(want) > 0 && res.outCol == 0 {
						t.Errorf("%s: no output batch born columnar", name)
					}
					mem.AssertSize(t, 0)
				}
			}
		}
	}
}
