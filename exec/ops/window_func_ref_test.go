package ops

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
)

// The reference implementation of window functions: rows, O(n^2) per
// partition, each function read off its definition (PostgreSQL's manual
// and its nodeWindowAgg.c rules for RANGE offsets around NULLs). It shares
// no code with the operator: its own comparator, frame membership tested
// row against row, sums in math/big, time arithmetic in package time.

// refCmp orders two non-NULL row-form values as ORDER BY does (NaN after
// every number and equal to NaN).
func refCmp(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		y := b.(float64)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case decimal128.Num:
		return x.BigInt().Cmp(b.(decimal128.Num).BigInt())
	case arrow.Date32:
		return refCmp(int64(x), int64(b.(arrow.Date32)))
	case arrow.Timestamp:
		return refCmp(int64(x), int64(b.(arrow.Timestamp)))
	}
	panic(fmt.Sprintf("refCmp %T", a))
}

// refKeyCmp compares rows on sort keys, NULL placement absolute.
func refKeyCmp(a, b exec.Row, keys []SortKey) int {
	for _, k := range keys {
		x, y := a[k.Col], b[k.Col]
		if x == nil || y == nil {
			if x == nil && y == nil {
				continue
			}
			if (x == nil) == k.NullsFirst {
				return -1
			}
			return 1
		}
		c := refCmp(x, y)
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// refOver computes spec over rows. Output: every row followed by one
// value per function, partition after partition in order of their first
// row, each ordered by ORDER BY, ties in input order. An error is expected
// where the operator must fail (a sum out of range).
func refOver(rows []exec.Row, spec WindowFuncsSpec, out *arrow.Schema) ([]exec.Row, error) {
	var partKeys []SortKey
	for _, c := range spec.PartitionBy {
		partKeys = append(partKeys, SortKey{Col: c})
	}
	var parts [][]exec.Row
next:
	for _, r := range rows {
		for p := range parts {
			if refKeyCmp(parts[p][0], r, partKeys) == 0 {
				parts[p] = append(parts[p], r)
				continue next
			}
		}
		parts = append(parts, []exec.Row{r})
	}
	nIn := out.NumFields() - len(spec.Funcs)
	var res []exec.Row
	for _, part := range parts {
		sort.SliceStable(part, func(i, j int) bool { return refKeyCmp(part[i], part[j], spec.OrderBy) < 0 })
		for i := range part {
			r := append(exec.Row(nil), part[i]...)
			for f, fn := range spec.Funcs {
				v, err := refFunc(part, i, spec.OrderBy, fn, out.Field(nIn+f).Type)
				if err != nil {
					return nil, err
				}
				r = append(r, v)
			}
			res = append(res, r)
		}
	}
	return res, nil
}

func refPeers(a, b exec.Row, order []SortKey) bool { return refKeyCmp(a, b, order) == 0 }

// refGroup is the index of row i's peer group within the partition.
func refGroup(part []exec.Row, i int, order []SortKey) int {
	g := 0
	for j := 1; j <= i; j++ {
		if !refPeers(part[j-1], part[j], order) {
			g++
		}
	}
	return g
}

func refFunc(part []exec.Row, i int, order []SortKey, fn WindowFunc, typ arrow.DataType) (any, error) {
	n := len(part)
	switch fn.Func {
	case "row_number":
		return int64(i + 1), nil
	case "rank":
		r := 1
		for j := 0; j < i; j++ {
			if !refPeers(part[j], part[i], order) {
				r++
			}
		}
		return int64(r), nil
	case "dense_rank":
		return int64(refGroup(part, i, order) + 1), nil
	case "percent_rank":
		if n == 1 {
			return 0.0, nil
		}
		r, _ := refFunc(part, i, order, WindowFunc{Func: "rank"}, nil)
		return float64(r.(int64)-1) / float64(n-1), nil
	case "cume_dist":
		c := 0
		for j := range part {
			if j <= i || refPeers(part[j], part[i], order) {
				c++
			}
		}
		return float64(c) / float64(n), nil
	case "ntile":
		// Hand the rows out bucket by bucket: the first n%buckets buckets
		// get one row more.
		b, size, rem := int64(1), int64(n)/fn.Param, int64(n)%fn.Param
		left := size
		if rem > 0 {
			left++
		}
		for j := 0; j < i; j++ {
			left--
			if left == 0 {
				b++
				left = size
				if b <= rem {
					left++
				}
			}
		}
		return b, nil
	case "lag", "lead":
		return refLag(part, i, fn), nil
	}
	frame := defaultFrame
	if fn.Frame != nil {
		frame = *fn.Frame
	}
	var in []exec.Row
	for j := range part {
		if refInFrame(part, i, j, order, frame) {
			in = append(in, part[j])
		}
	}
	var vals []any // the argument's values over the frame, in order
	if len(fn.Args) > 0 {
		for _, r := range in {
			vals = append(vals, r[fn.Args[0]])
		}
	}
	nonNull := func() []any {
		var nn []any
		for _, v := range vals {
			if v != nil {
				nn = append(nn, v)
			}
		}
		return nn
	}
	switch fn.Func {
	case "first_value", "last_value", "nth_value":
		vs := vals
		if fn.IgnoreNulls {
			vs = nonNull()
		}
		k := int64(1)
		switch fn.Func {
		case "last_value":
			k = int64(len(vs))
		case "nth_value":
			k = fn.Param
		}
		if k < 1 || k > int64(len(vs)) {
			return nil, nil
		}
		return vs[k-1], nil
	case "count_star":
		return int64(len(in)), nil
	}
	nn := nonNull()
	if fn.Distinct {
		var d []any
		for _, v := range nn {
			dup := false
			for _, w := range d {
				dup = dup || refCmp(v, w) == 0
			}
			if !dup {
				d = append(d, v)
			}
		}
		nn = d
	}
	switch fn.Func {
	case "count":
		return int64(len(nn)), nil
	}
	if len(nn) == 0 {
		return nil, nil
	}
	switch fn.Func {
	case "min", "max":
		best := nn[0]
		for _, v := range nn[1:] {
			c := refCmp(v, best)
			if (fn.Func == "min" && c < 0) || (fn.Func == "max" && c > 0) {
				best = v
			}
		}
		return best, nil
	case "bool_and", "every", "bool_or":
		all, any := true, false
		for _, v := range nn {
			all = all && v.(bool)
			any = any || v.(bool)
		}
		if fn.Func != "bool_or" {
			return all, nil
		}
		return any, nil
	case "var_samp", "variance", "var_pop", "stddev_samp", "stddev", "stddev_pop":
		return refStat(fn.Func, nn), nil
	case "sum", "avg":
		return refSum(nn, fn.Func == "avg", typ)
	}
	return nil, fmt.Errorf("reference: unknown function %q", fn.Func)
}

// refSum sums exactly (math/big) and converts to the result type.
func refSum(nn []any, avg bool, typ arrow.DataType) (any, error) {
	if _, ok := nn[0].(float64); ok {
		s := 0.0
		for _, v := range nn {
			s += v.(float64)
		}
		if avg {
			return s / float64(len(nn)), nil
		}
		return s, nil
	}
	sum := new(big.Int)
	inScale := int32(0)
	for _, v := range nn {
		switch x := v.(type) {
		case int64:
			sum.Add(sum, big.NewInt(x))
		case decimal128.Num:
			sum.Add(sum, x.BigInt())
			inScale = 2 // the tests' DECIMAL(12,2)
		}
	}
	cnt := big.NewInt(int64(len(nn)))
	switch t := typ.(type) {
	case *arrow.Int64Type:
		if !sum.IsInt64() {
			return nil, fmt.Errorf("BIGINT out of range")
		}
		return sum.Int64(), nil
	case *arrow.Float64Type:
		f, _ := new(big.Float).SetInt(sum).Float64()
		if avg {
			f /= float64(len(nn))
		}
		return f, nil
	case *arrow.Decimal128Type:
		v := new(big.Int).Mul(sum, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale-inScale)), nil))
		if avg {
			// Round half away from zero.
			q, r := new(big.Int).QuoRem(v, cnt, new(big.Int))
			if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(cnt) >= 0 {
				q.Add(q, big.NewInt(int64(v.Sign())))
			}
			v = q
		}
		if v.CmpAbs(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision)), nil)) >= 0 {
			return nil, fmt.Errorf("DECIMAL out of range")
		}
		return decimal128.FromBigInt(v), nil
	}
	return nil, fmt.Errorf("reference: sum into %s", typ)
}

// refLag walks the partition: offset rows back (forward for lead), under
// IGNORE NULLS counting only rows whose value is not NULL.
func refLag(part []exec.Row, i int, fn WindowFunc) any {
	c := fn.Args[0]
	def := fn.Default
	if len(fn.Args) == 2 {
		def = part[i][fn.Args[1]]
	}
	off := fn.Param
	if fn.Func == "lead" {
		off = -off
	}
	if off == 0 {
		return part[i][c]
	}
	step := -1
	if off < 0 {
		step = 1
		off = -off
	}
	j := i
	for left := off; left > 0; {
		j += step
		if j < 0 || j >= len(part) {
			return def
		}
		if !fn.IgnoreNulls || part[j][c] != nil {
			left--
		}
	}
	return part[j][c]
}

// refInFrame reports whether row j of the partition is in row i's frame.
func refInFrame(part []exec.Row, i, j int, order []SortKey, f Frame) bool {
	switch f.Exclude {
	case ExcludeCurrentRow:
		if j == i {
			return false
		}
	case ExcludeGroup:
		if refPeers(part[i], part[j], order) {
			return false
		}
	case ExcludeTies:
		if j != i && refPeers(part[i], part[j], order) {
			return false
		}
	}
	return refBoundOK(part, i, j, order, f.Unit, f.Start, false) && refBoundOK(part, i, j, order, f.Unit, f.End, true)
}

// refBoundOK: is row j on the inside of row i's frame start (or end)?
func refBoundOK(part []exec.Row, i, j int, order []SortKey, unit FrameUnit, b FrameBound, isEnd bool) bool {
	switch b.Kind {
	case UnboundedPreceding, UnboundedFollowing:
		return true
	}
	switch unit {
	case FrameRows, FrameGroups:
		di, dj := int64(i), int64(j)
		if unit == FrameGroups {
			di, dj = int64(refGroup(part, i, order)), int64(refGroup(part, j, order))
		}
		var n int64
		if b.Offset != nil {
			n = b.Offset.(int64)
		}
		switch {
		case b.Kind == CurrentRow && !isEnd:
			return dj >= di
		case b.Kind == CurrentRow:
			return dj <= di
		case b.Kind == OffsetPreceding && !isEnd:
			return di-dj <= n
		case b.Kind == OffsetPreceding:
			return di-dj >= n
		case !isEnd:
			return dj-di >= n
		default:
			return dj-di <= n
		}
	}
	// RANGE.
	if b.Kind == CurrentRow {
		if refPeers(part[i], part[j], order) {
			return true
		}
		return (j > i) != isEnd
	}
	k := order[0]
	ki, kj := part[i][k.Col], part[j][k.Col]
	if ki == nil {
		// The current row's frame is its NULL peers.
		if isEnd {
			return kj == nil || !k.NullsFirst
		}
		return kj == nil || k.NullsFirst
	}
	if kj == nil {
		// NULLs are never within an offset of a value.
		if isEnd {
			return k.NullsFirst
		}
		return !k.NullsFirst
	}
	sub, less := b.Kind == OffsetPreceding, isEnd
	if k.Desc {
		sub, less = !sub, !less
	}
	return refInRange(kj, ki, b.Offset, sub, less)
}

// refInRange: is val <= (less) or >= base ± off?
func refInRange(val, base, off any, sub, less bool) bool {
	switch v := val.(type) {
	case float64:
		b, o := base.(float64), off.(float64)
		if math.IsNaN(v) {
			return math.IsNaN(b) || !less
		}
		if math.IsNaN(b) {
			return less
		}
		if math.IsInf(o, 1) && math.IsInf(b, 0) && (b > 0) == sub {
			return true
		}
		s := b + o
		if sub {
			s = b - o
		}
		if less {
			return v <= s
		}
		return v >= s
	case arrow.Date32, arrow.Timestamp:
		t, bt := refTime(val), refTime(base)
		iv := off.(arrow.MonthDayNanoInterval)
		sign := 1
		if sub {
			sign = -1
		}
		bt = refAddMonths(bt, sign*int(iv.Months))
		bt = bt.Add(time.Duration(sign) * 24 * time.Hour * time.Duration(iv.Days))
		bt = bt.Add(time.Duration(sign) * time.Duration(iv.Nanoseconds))
		if less {
			return !t.After(bt)
		}
		return !t.Before(bt)
	}
	bi := func(x any) *big.Int {
		switch y := x.(type) {
		case int64:
			return big.NewInt(y)
		case decimal128.Num:
			return y.BigInt()
		}
		panic(fmt.Sprintf("refInRange %T", x))
	}
	s := bi(base)
	if sub {
		s.Sub(s, bi(off))
	} else {
		s.Add(s, bi(off))
	}
	c := bi(val).Cmp(s)
	if less {
		return c <= 0
	}
	return c >= 0
}

// refTime reads the tests' DATE and TIMESTAMP(µs) values.
func refTime(v any) time.Time {
	switch x := v.(type) {
	case arrow.Date32:
		return time.Unix(int64(x)*86400, 0).UTC()
	case arrow.Timestamp:
		return time.UnixMicro(int64(x)).UTC()
	}
	panic(fmt.Sprintf("refTime %T", v))
}

// refAddMonths adds calendar months, clamping the day to the month's end
// (2024-01-31 + 1 month = 2024-02-29).
func refAddMonths(t time.Time, m int) time.Time {
	first := time.Date(t.Year(), t.Month()+time.Month(m), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(t.Day(), last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// winRowsEqual compares rows value by value, NaN equal to NaN.
func winRowsEqual(a, b []exec.Row) (bool, string) {
	if len(a) != len(b) {
		return false, fmt.Sprintf("%d rows, want %d", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false, fmt.Sprintf("row %d: %d values, want %d", i, len(a[i]), len(b[i]))
		}
		for c := range a[i] {
			x, y := a[i][c], b[i][c]
			if fx, ok := x.(float64); ok {
				if fy, ok := y.(float64); ok && math.IsNaN(fx) && math.IsNaN(fy) {
					continue
				}
			}
			if !reflect.DeepEqual(x, y) {
				return false, fmt.Sprintf("row %d column %d: got %v (%T), want %v (%T)\n got row  %v\n want row %v", i, c, x, x, y, y, a[i], b[i])
			}
		}
	}
	return true, ""
}

// refStat is the variance family by the textbook two-pass formula, in
// exact arithmetic (math/big): the mean, then the squared deviations from
// it; decimals are the tests' DECIMAL(12, 2).
func refStat(name string, nn []any) any {
	n := len(nn)
	samp := !strings.HasSuffix(name, "_pop")
	if n == 0 || (samp && n < 2) {
		return nil
	}
	xs := make([]*big.Rat, n)
	sum := new(big.Rat)
	for i, v := range nn {
		switch x := v.(type) {
		case int64:
			xs[i] = new(big.Rat).SetInt64(x)
		case float64:
			xs[i] = new(big.Rat).SetFloat64(x)
		case decimal128.Num:
			xs[i] = new(big.Rat).SetFrac(x.BigInt(), big.NewInt(100))
		}
		sum.Add(sum, xs[i])
	}
	mean := new(big.Rat).Quo(sum, big.NewRat(int64(n), 1))
	ss := new(big.Rat)
	for _, x := range xs {
		d := new(big.Rat).Sub(x, mean)
		ss.Add(ss, d.Mul(d, d))
	}
	div := int64(n)
	if samp {
		div--
	}
	v, _ := ss.Quo(ss, big.NewRat(div, 1)).Float64()
	if strings.HasPrefix(name, "stddev") {
		return math.Sqrt(v)
	}
	return v
}
