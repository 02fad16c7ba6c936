package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Scalar is the set of Go types a typed kernel (and a row-at-a-time UDF)
// reads and returns: the row-form types of exec.Row.
type Scalar interface {
	bool | int32 | int64 | float32 | float64 | string | []byte | decimal128.Num | arrow.Timestamp | arrow.Date32 | arrow.Time64 | arrow.MonthDayNanoInterval
}

// goType is the SQL type a Go scalar type stands for; nil for the types
// whose SQL type needs parameters (DECIMAL(p, s), TIMESTAMP(p), TIME(p)).
func goType[T Scalar]() arrow.DataType {
	var z T
	switch any(z).(type) {
	case bool:
		return arrow.FixedWidthTypes.Boolean
	case int32:
		return arrow.PrimitiveTypes.Int32
	case int64:
		return arrow.PrimitiveTypes.Int64
	case float32:
		return arrow.PrimitiveTypes.Float32
	case float64:
		return arrow.PrimitiveTypes.Float64
	case string:
		return arrow.BinaryTypes.String
	case []byte:
		return arrow.BinaryTypes.Binary
	case arrow.Date32:
		return arrow.FixedWidthTypes.Date32
	case arrow.MonthDayNanoInterval:
		return IntervalType
	}
	return nil
}

// reader is a typed accessor over an operand: the column's values (its
// storage for an extension column) or the constant. One type switch per
// batch, none per value.
func reader[T Scalar](o operand) (func(int) T, error) {
	if o.arr == nil {
		v, ok := o.scalar.(T)
		if !ok {
			return nil, fmt.Errorf("constant %v (%T) read as %T", o.scalar, o.scalar, *new(T))
		}
		return func(int) T { return v }, nil
	}
	var f any
	switch a := storageArray(o.arr).(type) {
	case *array.String:
		f = a.Value
	case *array.Binary:
		f = a.Value
	case *array.Int32:
		f = a.Value
	case *array.Int64:
		f = a.Value
	case *array.Float32:
		f = a.Value
	case *array.Float64:
		f = a.Value
	case *array.Boolean:
		f = a.Value
	case *array.Decimal128:
		f = a.Value
	case *array.Timestamp:
		f = a.Value
	case *array.Date32:
		f = a.Value
	case *array.Time64:
		f = a.Value
	case *array.Time32:
		// A TIME(0..3) column: its values read as the row form's Time64.
		f = func(i int) arrow.Time64 { return arrow.Time64(a.Value(i)) }
	case *array.MonthDayNanoInterval:
		f = a.Value
	}
	g, ok := f.(func(int) T)
	if !ok {
		return nil, fmt.Errorf("a %s column read as %T", typeName(o.arr.DataType()), *new(T))
	}
	return g, nil
}

// appender is a typed append into a builder of the storage type.
func appender[T Scalar](b array.Builder) (func(T), error) {
	var f any
	switch bb := b.(type) {
	case *array.StringBuilder:
		f = bb.Append
	case *array.BinaryBuilder:
		f = bb.Append
	case *array.Int32Builder:
		f = bb.Append
	case *array.Int64Builder:
		f = bb.Append
	case *array.Float32Builder:
		f = bb.Append
	case *array.Float64Builder:
		f = bb.Append
	case *array.BooleanBuilder:
		f = bb.Append
	case *array.Decimal128Builder:
		f = bb.Append
	case *array.TimestampBuilder:
		f = bb.Append
	case *array.Date32Builder:
		f = bb.Append
	case *array.Time64Builder:
		f = bb.Append
	case *array.Time32Builder:
		f = func(v arrow.Time64) { bb.Append(arrow.Time32(v)) }
	case *array.MonthDayNanoIntervalBuilder:
		f = bb.Append
	}
	g, ok := f.(func(T))
	if !ok {
		return nil, fmt.Errorf("%T written to a %s column", *new(T), typeName(b.Type()))
	}
	return g, nil
}

// rowFn is a call's row path over non-NULL argument values.
type rowFn func(vals []any) (any, error)

// colFn is a call's columnar kernel: it appends n values to b (a builder of
// the result's storage type), NULL wherever valid (nil: all valid) says an
// argument is NULL. ops hold no NULL constant.
type colFn func(ops []operand, n int, valid []byte, b array.Builder) error

// call is a scalar function call built by the registry: strict (NULL in
// any argument gives NULL without calling the function), with a row path
// and a columnar kernel that both run the same typed Go function, so they
// agree by construction. The columnar kernel reads the Arrow buffers with
// typed accessors and appends into a typed builder: no row is built and no
// value is boxed. The result column is built in the storage type and
// labelled with the logical type last.
type call struct {
	name       string
	args       []Expr
	t          arrow.DataType // logical result type
	rowAtATime bool           // a row-at-a-time UDF: EXPLAIN marks it
	row        rowFn
	col        colFn
	str        func() string // custom rendering; nil: name(args)
}

func (c *call) Type() arrow.DataType { return c.t }

func (c *call) String() string {
	s := c.name + "(" + joinExprs(c.args) + ")"
	if c.str != nil {
		s = c.str()
	}
	if c.rowAtATime {
		s += " [row-at-a-time UDF]"
	}
	return s
}

func (c *call) EvalRow(r exec.Row) (any, error) {
	vals := make([]any, len(c.args))
	for i, a := range c.args {
		v, err := a.EvalRow(r)
		if err != nil || v == nil {
			return nil, err
		}
		vals[i] = v
	}
	return c.row(vals)
}

func (c *call) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	ops := make([]operand, 0, len(c.args))
	defer func() {
		for _, o := range ops {
			o.release()
		}
	}()
	arrs := make([]arrow.Array, 0, len(c.args))
	null := false
	for _, a := range c.args {
		o, err := evalOperand(mem, a, rec)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
		if o.isNullScalar() {
			null = true
		}
		if o.arr != nil {
			arrs = append(arrs, o.arr)
		}
	}
	if null {
		return nullArray(mem, c.t, n), nil
	}
	valid, _ := andValidity(mem, n, arrs...)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
		defer valid.Release()
	}
	b := array.NewBuilder(mem, StorageType(c.t))
	defer b.Release()
	b.Reserve(n)
	if err := c.col(ops, n, vb, b); err != nil {
		return nil, err
	}
	return label(mem, c.t, b.NewArray())
}

func isValid(valid []byte, i int) bool { return valid == nil || valid[i>>3]&(1<<(i&7)) != 0 }

// The typed kernels: fn returns the value, ok=false for NULL, or an error.

func kernel1[A, R Scalar](fn func(A) (R, bool, error)) (rowFn, colFn) {
	row := func(v []any) (any, error) {
		r, ok, err := fn(v[0].(A))
		if err != nil || !ok {
			return nil, err
		}
		return r, nil
	}
	col := func(ops []operand, n int, valid []byte, b array.Builder) error {
		ga, err := reader[A](ops[0])
		if err != nil {
			return err
		}
		put, err := appender[R](b)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if !isValid(valid, i) {
				b.AppendNull()
				continue
			}
			r, ok, err := fn(ga(i))
			if err != nil {
				return err
			}
			if !ok {
				b.AppendNull()
				continue
			}
			put(r)
		}
		return nil
	}
	return row, col
}

func kernel2[A, B, R Scalar](fn func(A, B) (R, bool, error)) (rowFn, colFn) {
	row := func(v []any) (any, error) {
		r, ok, err := fn(v[0].(A), v[1].(B))
		if err != nil || !ok {
			return nil, err
		}
		return r, nil
	}
	col := func(ops []operand, n int, valid []byte, b array.Builder) error {
		ga, err := reader[A](ops[0])
		if err != nil {
			return err
		}
		gb, err := reader[B](ops[1])
		if err != nil {
			return err
		}
		put, err := appender[R](b)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if !isValid(valid, i) {
				b.AppendNull()
				continue
			}
			r, ok, err := fn(ga(i), gb(i))
			if err != nil {
				return err
			}
			if !ok {
				b.AppendNull()
				continue
			}
			put(r)
		}
		return nil
	}
	return row, col
}

func kernel3[A, B, C, R Scalar](fn func(A, B, C) (R, bool, error)) (rowFn, colFn) {
	row := func(v []any) (any, error) {
		r, ok, err := fn(v[0].(A), v[1].(B), v[2].(C))
		if err != nil || !ok {
			return nil, err
		}
		return r, nil
	}
	col := func(ops []operand, n int, valid []byte, b array.Builder) error {
		ga, err := reader[A](ops[0])
		if err != nil {
			return err
		}
		gb, err := reader[B](ops[1])
		if err != nil {
			return err
		}
		gc, err := reader[C](ops[2])
		if err != nil {
			return err
		}
		put, err := appender[R](b)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if !isValid(valid, i) {
				b.AppendNull()
				continue
			}
			r, ok, err := fn(ga(i), gb(i), gc(i))
			if err != nil {
				return err
			}
			if !ok {
				b.AppendNull()
				continue
			}
			put(r)
		}
		return nil
	}
	return row, col
}

// kernelN is a variadic kernel over arguments of one type T.
func kernelN[T, R Scalar](fn func([]T) (R, bool, error)) (rowFn, colFn) {
	row := func(v []any) (any, error) {
		xs := make([]T, len(v))
		for i, x := range v {
			xs[i] = x.(T)
		}
		r, ok, err := fn(xs)
		if err != nil || !ok {
			return nil, err
		}
		return r, nil
	}
	col := func(ops []operand, n int, valid []byte, b array.Builder) error {
		gs := make([]func(int) T, len(ops))
		for k, o := range ops {
			g, err := reader[T](o)
			if err != nil {
				return err
			}
			gs[k] = g
		}
		put, err := appender[R](b)
		if err != nil {
			return err
		}
		xs := make([]T, len(ops))
		for i := 0; i < n; i++ {
			if !isValid(valid, i) {
				b.AppendNull()
				continue
			}
			for k, g := range gs {
				xs[k] = g(i)
			}
			r, ok, err := fn(xs)
			if err != nil {
				return err
			}
			if !ok {
				b.AppendNull()
				continue
			}
			put(r)
		}
		return nil
	}
	return row, col
}

// newCall builds a strict call and folds it when every argument is a
// constant (so a constant error is reported when the query is bound).
func newCall(name string, args []Expr, t arrow.DataType, row rowFn, col colFn) (Expr, error) {
	return fold(&call{name: name, args: args, t: t, row: row, col: col}, args...)
}
