package expr

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The string built-ins that predate the registry (lower, upper, length,
// substring, concat) and abs / mod / coalesce, registered in
// builtins_string.go and builtins_math.go:
//
//	length(s), char_length(s)     INT, in characters (not bytes)
//	substring(s, start[, len])    1-based; SQL-standard window semantics: the
//	substr(...)                   characters at positions [start, start+len)
//	                              that exist, so start <= 0 eats into len;
//	                              a negative len is an error
//	concat(a, ...)                VARCHAR; NULL if any argument is NULL (as
//	                              Flink); non-string arguments are cast
//	abs(x)                        same numeric type; abs of the smallest
//	                              integer is an overflow error

func stringArg(fn string, e Expr) (Expr, error) {
	if !isString(e.Type()) && !isNull(e.Type()) {
		return nil, fmt.Errorf("cannot apply %s to %s", fn, typeName(e.Type()))
	}
	return Coerce(e, arrow.BinaryTypes.String)
}

// caseFunc is lower / upper (Unicode-aware; ASCII columns take a byte
// loop over the whole data buffer).
type caseFunc struct {
	name string
	e    Expr
}

func (f *caseFunc) Type() arrow.DataType { return arrow.BinaryTypes.String }
func (f *caseFunc) String() string       { return fmt.Sprintf("%s(%s)", f.name, f.e) }

func (f *caseFunc) conv(s string) string {
	if f.name == "lower" {
		return strings.ToLower(s)
	}
	return strings.ToUpper(s)
}

func (f *caseFunc) EvalRow(r exec.Row) (any, error) {
	v, err := f.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	return f.conv(v.(string)), nil
}

func (f *caseFunc) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := f.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	s, ok := a.(*array.String)
	if !ok {
		return nullArray(mem, f.Type(), a.Len()), nil
	}
	n := s.Len()
	data := s.ValueBytes()
	ascii := true
	for _, c := range data {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		return mapValues(mem, s, f.Type(), func(v any) (any, error) { return f.conv(v.(string)), nil })
	}
	// ASCII: same lengths, so rebase the offsets and map the bytes.
	offs := s.ValueOffsets()
	obuf, oo := newValues[int32](mem, n+1)
	for i, o := range offs {
		oo[i] = o - offs[0]
	}
	dbuf := memory.NewResizableBuffer(mem)
	dbuf.Resize(len(data))
	out := dbuf.Bytes()
	var delta byte = 'a' - 'A'
	lo, hi := byte('A'), byte('Z')
	if f.name == "upper" {
		lo, hi = 'a', 'z'
	}
	for i, c := range data {
		if c >= lo && c <= hi {
			if f.name == "lower" {
				c += delta
			} else {
				c -= delta
			}
		}
		out[i] = c
	}
	if len(offs) == 0 { // an empty array may carry no offsets at all
		oo[0] = 0
	}
	valid, nulls := andValidity(mem, n, s)
	return finish(f.Type(), n, valid, nulls, obuf, dbuf), nil
}

// lengthFunc is the character count of a string.
type lengthFunc struct {
	name string
	e    Expr
}

func (f *lengthFunc) Type() arrow.DataType { return arrow.PrimitiveTypes.Int32 }
func (f *lengthFunc) String() string       { return fmt.Sprintf("%s(%s)", f.name, f.e) }

func (f *lengthFunc) EvalRow(r exec.Row) (any, error) {
	v, err := f.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	return int32(utf8.RuneCountInString(v.(string))), nil
}

func (f *lengthFunc) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := f.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	s, ok := a.(*array.String)
	if !ok {
		return nullArray(mem, f.Type(), a.Len()), nil
	}
	n := s.Len()
	buf, out := newValues[int32](mem, n)
	offs := s.ValueOffsets()
	data := s.ValueBytes()
	base := int32(0)
	if n > 0 {
		base = offs[0]
	}
	for i := range out {
		out[i] = int32(utf8.RuneCount(data[offs[i]-base : offs[i+1]-base]))
	}
	valid, nulls := andValidity(mem, n, s)
	return finish(f.Type(), n, valid, nulls, buf), nil
}

// substrFunc is SUBSTRING(s FROM start [FOR len]).
type substrFunc struct {
	name string
	s    Expr
	args []Expr // start [, len] as BIGINT
}

func (f *substrFunc) Type() arrow.DataType { return arrow.BinaryTypes.String }

func (f *substrFunc) String() string {
	return fmt.Sprintf("%s(%s, %s)", f.name, f.s, joinExprs(f.args))
}

// substr is the SQL-standard window: characters at 1-based positions in
// [start, start+length) that exist.
func substr(s string, start int64, length int64, hasLen bool) (string, error) {
	if hasLen && length < 0 {
		return "", fmt.Errorf("substring: negative length %d", length)
	}
	first := max(start, 1)
	end := int64(math.MaxInt64)
	if hasLen {
		if start > math.MaxInt64-length {
			end = math.MaxInt64
		} else {
			end = start + length
		}
	}
	if end <= first {
		return "", nil
	}
	pos := int64(1)
	bi := 0
	for bi < len(s) && pos < first {
		_, size := utf8.DecodeRuneInString(s[bi:])
		bi += size
		pos++
	}
	from := bi
	for bi < len(s) && pos < end {
		_, size := utf8.DecodeRuneInString(s[bi:])
		bi += size
		pos++
	}
	return s[from:bi], nil
}

func (f *substrFunc) EvalRow(r exec.Row) (any, error) {
	v, err := f.s.EvalRow(r)
	if err != nil {
		return nil, err
	}
	vals := make([]int64, len(f.args))
	null := v == nil
	for i, a := range f.args {
		x, err := a.EvalRow(r)
		if err != nil {
			return nil, err
		}
		if x == nil {
			null = true
		} else {
			vals[i] = x.(int64)
		}
	}
	if null {
		return nil, nil
	}
	var length int64
	if len(vals) > 1 {
		length = vals[1]
	}
	return substr(v.(string), vals[0], length, len(vals) > 1)
}

func (f *substrFunc) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	so, err := evalOperand(mem, f.s, rec)
	if err != nil {
		return nil, err
	}
	defer so.release()
	ops := make([]operand, len(f.args))
	for i, a := range f.args {
		if ops[i], err = evalOperand(mem, a, rec); err != nil {
			for _, o := range ops[:i] {
				o.release()
			}
			return nil, err
		}
	}
	defer func() {
		for _, o := range ops {
			o.release()
		}
	}()
	n := int(rec.NumRows())
	for _, o := range append([]operand{so}, ops...) {
		if o.isNullScalar() {
			return nullArray(mem, f.Type(), n), nil
		}
	}
	if so.arr == nil {
		return rowFallback(mem, f, rec)
	}
	s := so.arr.(*array.String)
	start, ms := slice[int64](ops[0])
	lens, ml := []int64{0}, 0
	if len(ops) > 1 {
		lens, ml = slice[int64](ops[1])
	}
	valid, _ := andValidity(mem, n, s, ops[0].arr, func() arrow.Array {
		if len(ops) > 1 {
			return ops[1].arr
		}
		return nil
	}())
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
		defer valid.Release()
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(len(s.ValueBytes()))
	for i := 0; i < n; i++ {
		if vb != nil && vb[i>>3]&(1<<(i&7)) == 0 {
			b.AppendNull()
			continue
		}
		out, err := substr(s.Value(i), start[i&ms], lens[i&ml], len(ops) > 1)
		if err != nil {
			return nil, err
		}
		b.Append(out)
	}
	return b.NewArray(), nil
}

// concatFunc is CONCAT(a, b, ...) or a || b; NULL when any argument is
// NULL.
type concatFunc struct {
	args []Expr
	op   bool // written a || b
}

// newConcatOp is a || b: a non-string operand is cast to VARCHAR (1 + 2 ||
// 'c' is '3c', as PostgreSQL and DuckDB); NULL when either is NULL.
func newConcatOp(l, r Expr) (Expr, error) {
	f := &concatFunc{op: true}
	for _, a := range []Expr{l, r} {
		c, err := Coerce(a, arrow.BinaryTypes.String)
		if err != nil {
			return nil, fmt.Errorf("'||': %w", err)
		}
		f.args = append(f.args, c)
	}
	return fold(f, f.args...)
}

func (f *concatFunc) Type() arrow.DataType { return arrow.BinaryTypes.String }

func (f *concatFunc) String() string {
	if f.op {
		return "(" + f.args[0].String() + " || " + f.args[1].String() + ")"
	}
	return "concat(" + joinExprs(f.args) + ")"
}

func (f *concatFunc) EvalRow(r exec.Row) (any, error) {
	var b strings.Builder
	null := false
	for _, a := range f.args {
		v, err := a.EvalRow(r)
		if err != nil {
			return nil, err
		}
		if v == nil {
			null = true
			continue
		}
		b.WriteString(v.(string))
	}
	if null {
		return nil, nil
	}
	return b.String(), nil
}

func (f *concatFunc) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	ops := make([]operand, 0, len(f.args))
	defer func() {
		for _, o := range ops {
			o.release()
		}
	}()
	arrs := make([]arrow.Array, 0, len(f.args))
	total := 0
	for _, a := range f.args {
		o, err := evalOperand(mem, a, rec)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
		if o.isNullScalar() {
			return nullArray(mem, f.Type(), n), nil
		}
		if o.arr != nil {
			arrs = append(arrs, o.arr)
			total += len(o.arr.(*array.String).ValueBytes())
		} else {
			total += n * len(o.scalar.(string))
		}
	}
	valid, _ := andValidity(mem, n, arrs...)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
		defer valid.Release()
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(total)
	var scratch []byte
	for i := 0; i < n; i++ {
		if vb != nil && vb[i>>3]&(1<<(i&7)) == 0 {
			b.AppendNull()
			continue
		}
		scratch = scratch[:0]
		for _, o := range ops {
			if o.arr != nil {
				scratch = append(scratch, o.arr.(*array.String).Value(i)...)
			} else {
				scratch = append(scratch, o.scalar.(string)...)
			}
		}
		b.BinaryBuilder.Append(scratch)
	}
	return b.NewArray(), nil
}

// absFunc is ABS(x).
type absFunc struct{ e Expr }

func (f *absFunc) Type() arrow.DataType { return f.e.Type() }
func (f *absFunc) String() string       { return fmt.Sprintf("abs(%s)", f.e) }

func absValue(v any, t arrow.DataType) (any, error) {
	switch x := v.(type) {
	case int32:
		if x < 0 {
			if x == math.MinInt32 {
				return nil, fmt.Errorf("INT overflow in abs(%d)", x)
			}
			return -x, nil
		}
		return x, nil
	case int64:
		if x < 0 {
			if x == math.MinInt64 {
				return nil, fmt.Errorf("BIGINT overflow in abs(%d)", x)
			}
			return -x, nil
		}
		return x, nil
	case float32:
		return float32(math.Abs(float64(x))), nil
	case float64:
		return math.Abs(x), nil
	case decimal128.Num:
		return x.Abs(), nil
	}
	return v, nil
}

func (f *absFunc) EvalRow(r exec.Row) (any, error) {
	v, err := f.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	return absValue(v, f.e.Type())
}

func (f *absFunc) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := f.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	t := f.e.Type()
	var out arrow.Array
	ok := false
	switch t.ID() {
	case arrow.INT32:
		out, ok = convert(mem, a, t, func(v int32) (int32, bool) {
			if v < 0 {
				return -v, v != math.MinInt32
			}
			return v, true
		})
	case arrow.INT64:
		out, ok = convert(mem, a, t, func(v int64) (int64, bool) {
			if v < 0 {
				return -v, v != math.MinInt64
			}
			return v, true
		})
	case arrow.FLOAT64:
		out, ok = convert(mem, a, t, func(v float64) (float64, bool) { return math.Abs(v), true })
	case arrow.DECIMAL128:
		out, ok = convert(mem, a, t, func(v decimal128.Num) (decimal128.Num, bool) { return v.Abs(), true })
	}
	if ok {
		return out, nil
	}
	return mapValues(mem, a, t, func(v any) (any, error) { return absValue(v, t) })
}
