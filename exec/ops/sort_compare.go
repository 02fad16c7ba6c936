package ops

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
)

// SortKey is one ORDER BY term: an input column, its direction, and where
// NULLs go (the planner fills NullsFirst with SQL's default: NULLS LAST for
// ASC, NULLS FIRST for DESC).
type SortKey struct {
	Col              int
	Desc, NullsFirst bool
}

// compareValues orders two non-NULL row-form values of one column type.
// It must agree with the typed array comparators below.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmpOrdered(x, b.(int64))
	case int32:
		return cmpOrdered(x, b.(int32))
	case float64:
		return cmpFloat(x, b.(float64))
	case float32:
		return cmpFloat(float64(x), float64(b.(float32)))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case bool:
		return cmpOrdered(b2i(x), b2i(b.(bool)))
	case decimal128.Num:
		return x.Cmp(b.(decimal128.Num))
	case arrow.Timestamp:
		return cmpOrdered(int64(x), int64(b.(arrow.Timestamp)))
	case arrow.Date32:
		return cmpOrdered(int32(x), int32(b.(arrow.Date32)))
	case arrow.Time64:
		return cmpOrdered(int64(x), int64(b.(arrow.Time64)))
	case arrow.MonthDayNanoInterval:
		// As = compares them: '1 month' and '30 days' are peers.
		return exec.CompareIntervals(x, b.(arrow.MonthDayNanoInterval))
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// rowComparator orders rows by keys; NULL placement is absolute (NULLS
// FIRST stays first under DESC).
func rowComparator(keys []SortKey) func(a, b exec.Row) int {
	return func(a, b exec.Row) int {
		for _, k := range keys {
			if c := orderNulls(a[k.Col] == nil, b[k.Col] == nil, k); c != 0 {
				return c
			} else if a[k.Col] == nil {
				continue
			}
			c := compareValues(a[k.Col], b[k.Col])
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
}

// RowOrder orders row-form rows by keys as ORDER BY does: for result
// displays that keep an updating top-n in rank order.
func RowOrder(keys []SortKey) func(a, b exec.Row) int { return rowComparator(keys) }

// orderNulls compares by NULL-ness alone (0 when both or neither is NULL).
func orderNulls(an, bn bool, k SortKey) int {
	if an == bn {
		return 0
	}
	if an == k.NullsFirst {
		return -1
	}
	return 1
}

// columnComparator returns a typed comparator of rows i, j of arr for one
// key, reading the value buffers directly.
func columnComparator(arr arrow.Array, k SortKey) func(i, j int) int {
	var cmp func(i, j int) int
	switch a := arr.(type) {
	case *array.Int64:
		v := a.Int64Values()
		cmp = func(i, j int) int { return cmpOrdered(v[i], v[j]) }
	case *array.Int32:
		v := a.Int32Values()
		cmp = func(i, j int) int { return cmpOrdered(v[i], v[j]) }
	case *array.Float64:
		v := a.Float64Values()
		cmp = func(i, j int) int { return cmpFloat(v[i], v[j]) }
	case *array.Float32:
		v := a.Float32Values()
		cmp = func(i, j int) int { return cmpFloat(float64(v[i]), float64(v[j])) }
	case *array.String:
		cmp = func(i, j int) int { return strings.Compare(a.Value(i), a.Value(j)) }
	case *array.Binary:
		cmp = func(i, j int) int { return bytes.Compare(a.Value(i), a.Value(j)) }
	case *array.Boolean:
		cmp = func(i, j int) int { return cmpOrdered(b2i(a.Value(i)), b2i(a.Value(j))) }
	case *array.Decimal128:
		cmp = func(i, j int) int { return a.Value(i).Cmp(a.Value(j)) }
	case *array.Timestamp:
		v := arrow.GetValues[int64](a.Data(), 1)
		cmp = func(i, j int) int { return cmpOrdered(v[i], v[j]) }
	case *array.Date32:
		v := a.Date32Values()
		cmp = func(i, j int) int { return cmpOrdered(int32(v[i]), int32(v[j])) }
	case *array.Time64:
		v := arrow.GetValues[int64](a.Data(), 1)
		cmp = func(i, j int) int { return cmpOrdered(v[i], v[j]) }
	case *array.Time32:
		v := arrow.GetValues[int32](a.Data(), 1)
		cmp = func(i, j int) int { return cmpOrdered(v[i], v[j]) }
	case *array.MonthDayNanoInterval:
		v := a.MonthDayNanoIntervalValues()
		cmp = func(i, j int) int { return exec.CompareIntervals(v[i], v[j]) }
	default:
		cmp = func(i, j int) int { return compareValues(exec.Value(arr, i), exec.Value(arr, j)) }
	}
	if k.Desc {
		inner := cmp
		cmp = func(i, j int) int { return -inner(i, j) }
	}
	if arr.NullN() == 0 {
		return cmp
	}
	inner := cmp
	return func(i, j int) int {
		an, bn := arr.IsNull(i), arr.IsNull(j)
		if an || bn {
			return orderNulls(an, bn, k)
		}
		return inner(i, j)
	}
}

// recordComparator orders rows of one record by every key.
func recordComparator(cols []arrow.Array, keys []SortKey) func(i, j int32) int {
	cmps := make([]func(i, j int) int, len(keys))
	for n, k := range keys {
		cmps[n] = columnComparator(cols[k.Col], k)
	}
	if len(cmps) == 1 {
		c := cmps[0]
		return func(i, j int32) int { return c(int(i), int(j)) }
	}
	return func(i, j int32) int {
		for _, c := range cmps {
			if r := c(int(i), int(j)); r != 0 {
				return r
			}
		}
		return 0
	}
}
