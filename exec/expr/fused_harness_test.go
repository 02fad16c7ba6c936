package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// checkFused evaluates e over rec with a Fused (as a value and, for a
// BOOLEAN e, as a selection) and fails unless it agrees with the row
// path's values want (or its error wantErr). The Fused's scratch comes
// from mem, which the caller checks for leaks.
func checkFused(t *testing.T, mem memory.Allocator, e Expr, rec arrow.RecordBatch, want []any, wantErr error) FusedStats {
	t.Helper()
	f := NewFused(e, mem)
	defer f.Release()
	arr, err := f.Eval(mem, rec)
	if f.b.err != nil {
		t.Fatalf("%s: a fused kernel panicked: %v", e, f.b.err)
	}
	if (err == nil) != (wantErr == nil) {
		if arr != nil {
			arr.Release()
		}
		t.Fatalf("%s: row error %v, fused error %v", e, wantErr, err)
	}
	if err != nil {
		if err.Error() != wantErr.Error() {
			t.Fatalf("%s: different errors: row %q, fused %q", e, wantErr, err)
		}
	} else {
		checkArray(t, "fused", e, arr, want)
		arr.Release()
	}
	if strictFallback && wantErr == nil && f.Stats().Fallbacks > 0 {
		t.Errorf("%s: the fused path fell back on a batch the row path evaluates without error", e)
	}
	if e.Type().ID() != arrow.BOOL {
		return f.Stats()
	}
	sel, err := f.Select(mem, rec, nil)
	if f.b.err != nil {
		t.Fatalf("%s: a fused kernel panicked: %v", e, f.b.err)
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%s: row error %v, fused selection error %v", e, wantErr, err)
	}
	if err != nil {
		return f.Stats()
	}
	if strictFallback && f.Stats().Fallbacks > 0 {
		t.Errorf("%s: the fused selection fell back on a batch the row path evaluates without error", e)
	}
	var exp []int32
	for i, v := range want {
		if v == true {
			exp = append(exp, int32(i))
		}
	}
	if len(sel) != len(exp) {
		t.Fatalf("%s: fused selection has %d rows, the row path %d (%v vs %v)", e, len(sel), len(exp), head(sel), head(exp))
	}
	for i := range sel {
		if sel[i] != exp[i] {
			t.Fatalf("%s: fused selection row %d is %d, row path %d", e, i, sel[i], exp[i])
		}
	}
	return f.Stats()
}

// strictFallback: a batch the row path evaluates without error must not
// fall back. It holds for the curated cases, where every subtree under an
// AND, OR, CASE or COALESCE has a fused kernel; a subtree without one is
// evaluated over every row of the batch and may fail on a row the row
// path never evaluates it on, which the random trees produce.
var strictFallback = true

func head(s []int32) []int32 { return s[:min(len(s), 20)] }

// checkArray compares an evaluated array with the row path's values.
func checkArray(t *testing.T, path string, e Expr, arr arrow.Array, want []any) {
	t.Helper()
	if arr.Len() != len(want) {
		t.Fatalf("%s: %s gave %d values for %d rows", e, path, arr.Len(), len(want))
	}
	if arr.DataType().ID() != arrow.NULL && !arrow.TypeEqual(arr.DataType(), e.Type()) {
		t.Fatalf("%s: %s type %s, expression type %s", e, path, arr.DataType(), e.Type())
	}
	if v, ok := arr.(interface{ ValidateFull() error }); ok {
		if err := v.ValidateFull(); err != nil {
			t.Fatalf("%s: %s: invalid array: %v", e, path, err)
		}
	}
	if nn := countNulls(arr); nn != arr.NullN() {
		t.Fatalf("%s: %s: NullN %d but %d values are null", e, path, arr.NullN(), nn)
	}
	for i := range want {
		if cv := exec.Value(arr, i); !sameValue(want[i], cv) {
			t.Fatalf("%s: %s: row %d: row path %#v, %s %#v", e, path, i, want[i], path, cv)
		}
	}
}
