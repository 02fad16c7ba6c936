package ops

import (
	"math"
	"reflect"

	"github.com/clink-sql/clink/exec"
)

// identical reports whether two row-form values are the same value, bit
// for bit: a retraction names the row emitted before, so NaN matches NaN
// and -0.0 does not match 0.0 (which == and reflect.DeepEqual get the other
// way round).
func identical(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	}
	return reflect.DeepEqual(a, b)
}

// SameRow reports whether a retraction's row names row b: identical over
// every column. Displays that apply a changelog use it, as the operators do.
func SameRow(a, b exec.Row) bool { return identicalRows(a, b) }

// identicalRows is identical over every column.
func identicalRows(a, b exec.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !identical(a[i], b[i]) {
			return false
		}
	}
	return true
}
