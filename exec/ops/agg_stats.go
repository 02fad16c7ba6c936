package ops

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The statistical aggregates (var_samp, var_pop, stddev_samp, stddev_pop,
// with PostgreSQL's aliases variance and stddev) and the boolean ones
// (bool_and, bool_or, and every for bool_and), as DuckDB and PostgreSQL
// define them: DOUBLE over any number (integers and decimals are read as
// DOUBLE), NULLs skipped, NULL over no value, and the sample forms NULL
// over fewer than two values (the population forms give 0 over one).

// statKind is one of the variance family.
type statKind uint8

const (
	statVarSamp statKind = iota
	statVarPop
	statStddevSamp
	statStddevPop
)

// statFuncs maps the names (and aliases) to their kind.
var statFuncs = map[string]statKind{
	"var_samp": statVarSamp, "variance": statVarSamp, "var_pop": statVarPop,
	"stddev_samp": statStddevSamp, "stddev": statStddevSamp, "stddev_pop": statStddevPop,
}

// boolFuncs maps bool_and, every and bool_or to whether they are an AND.
var boolFuncs = map[string]bool{"bool_and": true, "every": true, "bool_or": false}

// moments is the running state of the variance family: how many values,
// their mean and the sum of squared deviations from it, kept by Welford's
// update, so no sum of squares (whose difference cancels catastrophically
// for values far from zero) is ever formed.
type moments struct{ n, mean, m2 float64 }

// add folds one value in (Welford; the same steps as DuckDB's, so a
// result read in the same order agrees to the last bit).
func (m *moments) add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / m.n
	m.m2 += (x - m.mean) * d
}

// merge is the state of both sets of values (Chan et al.'s pairwise
// combination): how a frame is assembled from precomputed pieces.
func (m moments) merge(o moments) moments {
	switch {
	case o.n == 0:
		return m
	case m.n == 0:
		return o
	}
	n := m.n + o.n
	d := o.mean - m.mean
	return moments{n: n, mean: m.mean + d*o.n/n, m2: m.m2 + o.m2 + d*d*m.n*o.n/n}
}

// result is kind's value over the state; ok is false for NULL.
func (m moments) result(k statKind) (float64, bool) {
	var v float64
	switch k {
	case statVarSamp, statStddevSamp:
		if m.n < 2 {
			return 0, false
		}
		v = m.m2 / (m.n - 1)
	default:
		if m.n < 1 {
			return 0, false
		}
		v = m.m2 / m.n
	}
	if k == statStddevSamp || k == statStddevPop {
		v = math.Sqrt(v)
	}
	return v, true
}

// statAcc is one of the variance family per group.
type statAcc struct {
	kind  statKind
	scale int32 // a DECIMAL input's scale
	m     []moments
}

func newStatAcc(kind statKind, out arrow.DataType) (*statAcc, error) {
	if out.ID() != arrow.FLOAT64 {
		return nil, fmt.Errorf("gives DOUBLE, not %s", out)
	}
	return &statAcc{kind: kind}, nil
}

func (s *statAcc) bind(in arrow.DataType) error {
	switch in.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64:
		return nil
	case arrow.DECIMAL128:
		s.scale = in.(*arrow.Decimal128Type).Scale
		return nil
	}
	return fmt.Errorf("takes a number, not %s", in)
}

func (s *statAcc) grow(n int) { s.m = growTo(s.m, n) }

func (s *statAcc) updateColumnar(arr arrow.Array, ids []int32) error {
	d := arr.Data()
	switch arr.DataType().ID() {
	case arrow.INT8:
		addMoments(s.m, arrow.GetValues[int8](d, 1), arr, ids)
	case arrow.INT16:
		addMoments(s.m, arrow.GetValues[int16](d, 1), arr, ids)
	case arrow.INT32:
		addMoments(s.m, arrow.GetValues[int32](d, 1), arr, ids)
	case arrow.INT64:
		addMoments(s.m, arrow.GetValues[int64](d, 1), arr, ids)
	case arrow.FLOAT32:
		addMoments(s.m, arrow.GetValues[float32](d, 1), arr, ids)
	case arrow.FLOAT64:
		addMoments(s.m, arrow.GetValues[float64](d, 1), arr, ids)
	case arrow.DECIMAL128:
		vals := arrow.GetValues[decimal128.Num](d, 1)
		nulls := arr.NullN() > 0
		for i, g := range ids {
			if g >= 0 && (!nulls || arr.IsValid(i)) {
				s.m[g].add(vals[i].ToFloat64(s.scale))
			}
		}
	default:
		return fmt.Errorf("cannot aggregate a %s column", arr.DataType())
	}
	return nil
}

func addMoments[T int8 | int16 | int32 | int64 | float32 | float64](m []moments, vals []T, arr arrow.Array, ids []int32) {
	nulls := arr.NullN() > 0
	for i, g := range ids {
		if g >= 0 && (!nulls || arr.IsValid(i)) {
			m[g].add(float64(vals[i]))
		}
	}
}

func (s *statAcc) updateRow(v any, g int32) error {
	switch x := v.(type) {
	case nil:
	case int32:
		s.m[g].add(float64(x))
	case int64:
		s.m[g].add(float64(x))
	case float32:
		s.m[g].add(float64(x))
	case float64:
		s.m[g].add(x)
	case decimal128.Num:
		s.m[g].add(x.ToFloat64(s.scale))
	default:
		return fmt.Errorf("cannot aggregate %v (%T)", v, v)
	}
	return nil
}

func (s *statAcc) value(g int) any {
	if v, ok := s.m[g].result(s.kind); ok {
		return v
	}
	return nil
}

func (s *statAcc) build(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for g := 0; g < n; g++ {
		if v, ok := s.m[g].result(s.kind); ok {
			b.UnsafeAppend(v)
		} else {
			b.UnsafeAppendBoolToBitmap(false)
		}
	}
	return b.NewArray(), nil
}

// boolAcc is bool_and (every) or bool_or per group.
type boolAcc struct {
	and  bool
	set  []bool // the group has seen a non-NULL input
	vals []bool
}

func newBoolAcc(and bool, out arrow.DataType) (*boolAcc, error) {
	if out.ID() != arrow.BOOL {
		return nil, fmt.Errorf("gives BOOLEAN, not %s", out)
	}
	return &boolAcc{and: and}, nil
}

func (b *boolAcc) bind(in arrow.DataType) error {
	if in.ID() != arrow.BOOL {
		return fmt.Errorf("takes BOOLEAN, not %s", in)
	}
	return nil
}

func (b *boolAcc) grow(n int) {
	b.set = growTo(b.set, n)
	b.vals = growTo(b.vals, n)
}

func (b *boolAcc) put(g int32, v bool) {
	if !b.set[g] {
		b.set[g], b.vals[g] = true, v
		return
	}
	if b.and {
		b.vals[g] = b.vals[g] && v
	} else {
		b.vals[g] = b.vals[g] || v
	}
}

func (b *boolAcc) updateColumnar(arr arrow.Array, ids []int32) error {
	a, ok := arr.(*array.Boolean)
	if !ok {
		return fmt.Errorf("input column is %s, not BOOLEAN", arr.DataType())
	}
	nulls := a.NullN() > 0
	for i, g := range ids {
		if g >= 0 && (!nulls || a.IsValid(i)) {
			b.put(g, a.Value(i))
		}
	}
	return nil
}

func (b *boolAcc) updateRow(v any, g int32) error {
	switch x := v.(type) {
	case nil:
	case bool:
		b.put(g, x)
	default:
		return fmt.Errorf("cannot aggregate %v (%T): not BOOLEAN", v, v)
	}
	return nil
}

func (b *boolAcc) value(g int) any {
	if !b.set[g] {
		return nil
	}
	return b.vals[g]
}

func (b *boolAcc) build(mem memory.Allocator, n int) (arrow.Array, error) {
	bb := array.NewBooleanBuilder(mem)
	defer bb.Release()
	bb.Reserve(n)
	for g := 0; g < n; g++ {
		if b.set[g] {
			bb.UnsafeAppend(b.vals[g])
		} else {
			bb.UnsafeAppendBoolToBitmap(false)
		}
	}
	return bb.NewArray(), nil
}
