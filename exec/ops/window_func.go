package ops

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// FrameUnit is how a window frame's offsets count: rows, ORDER BY values
// (RANGE) or peer groups (GROUPS).
type FrameUnit int

// Frame units.
const (
	FrameRange FrameUnit = iota // the SQL default
	FrameRows
	FrameGroups
)

func (u FrameUnit) String() string {
	switch u {
	case FrameRows:
		return "ROWS"
	case FrameGroups:
		return "GROUPS"
	}
	return "RANGE"
}

// BoundKind is one end of a window frame.
type BoundKind int

// Frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame. Offset is set for OffsetPreceding and
// OffsetFollowing: for ROWS and GROUPS an int64 >= 0; for RANGE a value
// of the single ORDER BY key's kind: int64 (or int32) for integer keys,
// float64 for DOUBLE / FLOAT keys, decimal128.Num at the key's scale (or
// an int64 count of units) for DECIMAL keys, and for DATE and TIMESTAMP
// keys an interval, arrow.MonthDayNanoInterval or arrow.Duration
// (nanoseconds).
type FrameBound struct {
	Kind   BoundKind
	Offset any
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case OffsetPreceding:
		return fmt.Sprintf("%v PRECEDING", b.Offset)
	case CurrentRow:
		return "CURRENT ROW"
	case OffsetFollowing:
		return fmt.Sprintf("%v FOLLOWING", b.Offset)
	}
	return "UNBOUNDED FOLLOWING"
}

// FrameExclude is a frame's EXCLUDE clause.
type FrameExclude int

// Frame exclusions.
const (
	ExcludeNoOthers FrameExclude = iota
	ExcludeCurrentRow
	ExcludeGroup // the current row and its peers
	ExcludeTies  // the current row's peers, not the row itself
)

// Frame is a window frame: Unit BETWEEN Start AND End [EXCLUDE ...].
type Frame struct {
	Unit       FrameUnit
	Start, End FrameBound
	Exclude    FrameExclude
}

// defaultFrame is SQL's frame when none is written: with ORDER BY the
// rows up to the current row's last peer; without, all rows are peers, so
// the same frame is the whole partition.
var defaultFrame = Frame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}

func (f Frame) String() string {
	s := fmt.Sprintf("%s BETWEEN %s AND %s", f.Unit, f.Start, f.End)
	switch f.Exclude {
	case ExcludeCurrentRow:
		s += " EXCLUDE CURRENT ROW"
	case ExcludeGroup:
		s += " EXCLUDE GROUP"
	case ExcludeTies:
		s += " EXCLUDE TIES"
	}
	return s
}

// WindowFunc is one window function call over the operator's window.
//
// Func is one of row_number rank dense_rank percent_rank cume_dist ntile
// lag lead first_value last_value nth_value count count_star sum avg min
// max bool_and (every) bool_or var_samp (variance) var_pop stddev_samp
// (stddev) stddev_pop. Args are input columns: none for the ranking
// functions and count_star; the value for the others; lag and lead may
// name a second column holding each row's default (the same type as the
// value). Param is lag/lead's offset (the planner writes 1 for lag(x)),
// ntile's bucket count and nth_value's n, always explicit. Default is
// lag/lead's constant default in row form (nil: NULL) when Args has one
// column. Distinct is count/sum/avg(DISTINCT x) (min/max ignore it).
// IgnoreNulls applies to lag, lead, first_value, last_value, nth_value.
// Frame is nil for SQL's default frame; ranking functions and lag/lead
// ignore it. Type is the result type the planner chose; it must equal the
// output column's type (nil: take the output column's).
type WindowFunc struct {
	Func        string
	Args        []int
	Param       int64
	Default     any
	Distinct    bool
	IgnoreNulls bool
	Frame       *Frame
	Type        arrow.DataType
}

func (f WindowFunc) String() string {
	var b strings.Builder
	b.WriteString(f.Func)
	b.WriteByte('(')
	if f.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, a := range f.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", a)
	}
	switch f.Func {
	case "lag", "lead", "ntile", "nth_value":
		if len(f.Args) > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", f.Param)
	}
	b.WriteByte(')')
	if f.IgnoreNulls {
		b.WriteString(" IGNORE NULLS")
	}
	return b.String()
}

// WindowFuncsSpec is one window (PARTITION BY, ORDER BY) and the functions
// evaluated over it.
type WindowFuncsSpec struct {
	PartitionBy []int
	OrderBy     []SortKey
	Funcs       []WindowFunc
}

// fnKind is what a function computes, which decides its kernel.
type fnKind int

const (
	fnRowNumber fnKind = iota
	fnRank
	fnDenseRank
	fnPercentRank
	fnCumeDist
	fnNtile
	fnLag // lag and lead (lead is a lag by -offset)
	fnFirst
	fnLast
	fnNth
	fnCountStar
	fnCount
	fnSum
	fnAvg
	fnMin
	fnMax
	fnBoolAnd
	fnBoolOr
	fnStat // the variance family: winFn.stat says which
)

var fnKinds = map[string]fnKind{
	"row_number": fnRowNumber, "rank": fnRank, "dense_rank": fnDenseRank,
	"percent_rank": fnPercentRank, "cume_dist": fnCumeDist, "ntile": fnNtile,
	"lag": fnLag, "lead": fnLag, "first_value": fnFirst, "last_value": fnLast,
	"nth_value": fnNth, "count_star": fnCountStar, "count": fnCount, "sum": fnSum,
	"avg": fnAvg, "min": fnMin, "max": fnMax, "bool_and": fnBoolAnd, "every": fnBoolAnd, "bool_or": fnBoolOr,
}

func init() {
	for name := range statFuncs {
		fnKinds[name] = fnStat
	}
}

// usesFrame reports whether the kind reads the frame (SQL: aggregates and
// the frame's value functions; ranking and lag/lead see the partition).
func (k fnKind) usesFrame() bool { return k >= fnFirst }

// winFn is one function compiled against the input schema.
type winFn struct {
	spec   WindowFunc
	kind   fnKind
	typ    arrow.DataType // result type
	arg    int            // value column, -1 for none
	defCol int            // lag/lead: column of per-row defaults, -1 for none
	back   int64          // lag/lead: rows to look back (negative: ahead)
	frame  Frame
	sum    sumPlan  // sum / avg
	stat   statKind // fnStat
}

func (f *winFn) name() string { return f.spec.String() }

// compileFunc checks one function against the input columns (in) and its
// output column, and resolves its kernel.
func compileFunc(f WindowFunc, in *arrow.Schema, out arrow.Field, orderBy []SortKey) (winFn, error) {
	kind, ok := fnKinds[f.Func]
	if !ok {
		return winFn{}, fmt.Errorf("unknown window function %q", f.Func)
	}
	fn := winFn{spec: f, kind: kind, typ: out.Type, arg: -1, defCol: -1, frame: defaultFrame}
	if f.Type != nil && !arrow.TypeEqual(f.Type, out.Type) {
		return fn, fmt.Errorf("type %s differs from output column type %s", f.Type, out.Type)
	}
	for _, a := range f.Args {
		if a < 0 || a >= in.NumFields() {
			return fn, fmt.Errorf("argument column %d out of range (input has %d columns)", a, in.NumFields())
		}
	}
	nargs := 1
	switch kind {
	case fnRowNumber, fnRank, fnDenseRank, fnPercentRank, fnCumeDist, fnNtile, fnCountStar:
		nargs = 0
	case fnLag:
		if len(f.Args) == 2 {
			nargs = 2
		}
	}
	if len(f.Args) != nargs {
		return fn, fmt.Errorf("takes %d argument column(s), got %d", nargs, len(f.Args))
	}
	var argT arrow.DataType
	if nargs > 0 {
		fn.arg = f.Args[0]
		argT = in.Field(fn.arg).Type
	}
	if f.IgnoreNulls && kind != fnLag && kind != fnFirst && kind != fnLast && kind != fnNth {
		return fn, fmt.Errorf("IGNORE NULLS applies to lag, lead, first_value, last_value and nth_value only")
	}
	if f.Distinct {
		switch kind {
		case fnCount, fnSum, fnAvg, fnMin, fnMax:
		default:
			return fn, fmt.Errorf("DISTINCT applies to count, sum, avg, min and max only")
		}
	}
	if f.Default != nil && kind != fnLag {
		return fn, fmt.Errorf("only lag and lead take a default")
	}
	want := func(t arrow.DataType) error {
		if !arrow.TypeEqual(out.Type, t) {
			return fmt.Errorf("gives %s, not %s", t, out.Type)
		}
		return nil
	}
	var err error
	switch kind {
	case fnRowNumber, fnRank, fnDenseRank, fnCountStar, fnCount:
		err = want(arrow.PrimitiveTypes.Int64)
	case fnPercentRank, fnCumeDist:
		err = want(arrow.PrimitiveTypes.Float64)
	case fnNtile:
		err = want(arrow.PrimitiveTypes.Int64)
		if err == nil && f.Param <= 0 {
			err = fmt.Errorf("argument of ntile must be greater than zero (got %d)", f.Param)
		}
	case fnLag:
		err = want(argT)
		if err == nil {
			err = fn.compileLag(f, in, argT)
		}
	case fnFirst, fnLast:
		err = want(argT)
	case fnNth:
		err = want(argT)
		if err == nil && f.Param <= 0 {
			err = fmt.Errorf("argument of nth_value must be greater than zero (got %d)", f.Param)
		}
	case fnSum, fnAvg:
		fn.sum, err = newSumPlan(kind == fnAvg, argT, out.Type)
	case fnMin, fnMax:
		err = want(argT)
		if err == nil && !orderable(argT) {
			err = fmt.Errorf("min/max over %s is not supported", argT)
		}
	case fnBoolAnd, fnBoolOr:
		if argT.ID() != arrow.BOOL {
			err = fmt.Errorf("takes BOOLEAN, not %s", argT)
		} else {
			err = want(arrow.FixedWidthTypes.Boolean)
		}
	case fnStat:
		fn.stat = statFuncs[f.Func]
		switch argT.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			err = want(arrow.PrimitiveTypes.Float64)
		default:
			err = fmt.Errorf("takes a number, not %s", argT)
		}
	}
	if err != nil {
		return fn, err
	}
	if kind.usesFrame() && f.Frame != nil {
		fn.frame = *f.Frame
	}
	if kind.usesFrame() {
		if err := checkFrame(fn.frame, in, orderBy); err != nil {
			return fn, err
		}
	}
	if f.Distinct && (kind == fnCount || kind == fnSum || kind == fnAvg) {
		if fn.frame.Exclude != ExcludeNoOthers {
			return fn, fmt.Errorf("DISTINCT with a frame EXCLUDE clause is not supported")
		}
		if kind != fnCount && fn.sum.dom == domFloat {
			return fn, fmt.Errorf("%s(DISTINCT) over floating point values is not supported", f.Func)
		}
		if kind == fnCount && !orderable(argT) {
			return fn, fmt.Errorf("count(DISTINCT) over %s is not supported", argT)
		}
	}
	return fn, nil
}

// compileLag resolves lag/lead's direction and default.
func (fn *winFn) compileLag(f WindowFunc, in *arrow.Schema, argT arrow.DataType) error {
	off := f.Param
	if f.Func == "lead" {
		if off == -1<<63 {
			off++ // no partition is that long either way
		}
		off = -off
	}
	fn.back = off
	if len(f.Args) == 2 {
		if f.Default != nil {
			return fmt.Errorf("a default column and a default value")
		}
		fn.defCol = f.Args[1]
		if t := in.Field(fn.defCol).Type; !arrow.TypeEqual(t, argT) {
			return fmt.Errorf("default column is %s, the value %s", t, argT)
		}
		return nil
	}
	if f.Default == nil {
		return nil
	}
	b := array.NewBuilder(memory.DefaultAllocator, argT)
	defer b.Release()
	if err := exec.AppendValue(b, f.Default); err != nil {
		return fmt.Errorf("default: %w", err)
	}
	return nil
}

// orderable reports whether values of t can be compared (min, max, count
// DISTINCT, RANGE keys).
func orderable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.BINARY, arrow.BOOL, arrow.DATE32, arrow.TIMESTAMP,
		arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}

// checkFrame rejects the frames SQL rejects (PostgreSQL's messages) and
// RANGE offsets the ORDER BY key cannot take.
func checkFrame(f Frame, in *arrow.Schema, orderBy []SortKey) error {
	s, e := f.Start.Kind, f.End.Kind
	switch {
	case s < UnboundedPreceding || s > UnboundedFollowing || e < UnboundedPreceding || e > UnboundedFollowing:
		return fmt.Errorf("frame %s: unknown bound kind", f)
	case f.Unit < FrameRange || f.Unit > FrameGroups:
		return fmt.Errorf("frame %s: unknown unit", f)
	case f.Exclude < ExcludeNoOthers || f.Exclude > ExcludeTies:
		return fmt.Errorf("frame %s: unknown EXCLUDE", f)
	case s == UnboundedFollowing:
		return fmt.Errorf("frame %s: frame start cannot be UNBOUNDED FOLLOWING", f)
	case e == UnboundedPreceding:
		return fmt.Errorf("frame %s: frame end cannot be UNBOUNDED PRECEDING", f)
	case s == CurrentRow && e == OffsetPreceding:
		return fmt.Errorf("frame %s: frame starting from current row cannot have preceding rows", f)
	case s == OffsetFollowing && (e == OffsetPreceding || e == CurrentRow):
		return fmt.Errorf("frame %s: frame starting from following row cannot have preceding rows", f)
	}
	hasOffset := s == OffsetPreceding || s == OffsetFollowing || e == OffsetPreceding || e == OffsetFollowing
	if f.Unit == FrameGroups && len(orderBy) == 0 {
		return fmt.Errorf("frame %s: GROUPS mode requires an ORDER BY clause", f)
	}
	if !hasOffset {
		return nil
	}
	for _, b := range []FrameBound{f.Start, f.End} {
		if b.Kind != OffsetPreceding && b.Kind != OffsetFollowing {
			continue
		}
		if b.Offset == nil {
			return fmt.Errorf("frame %s: the offset is NULL", f)
		}
		if f.Unit != FrameRange {
			n, ok := b.Offset.(int64)
			if !ok {
				return fmt.Errorf("frame %s: %s offset must be a BIGINT, not %T", f, f.Unit, b.Offset)
			}
			if n < 0 {
				return fmt.Errorf("frame %s: frame offset must not be negative", f)
			}
		}
	}
	if f.Unit != FrameRange {
		return nil
	}
	if len(orderBy) != 1 {
		return fmt.Errorf("frame %s: RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column (got %d)", f, len(orderBy))
	}
	k := orderBy[0].Col
	if k < 0 || k >= in.NumFields() {
		return fmt.Errorf("frame %s: ORDER BY column %d out of range", f, k)
	}
	for _, b := range []FrameBound{f.Start, f.End} {
		if b.Kind == OffsetPreceding || b.Kind == OffsetFollowing {
			if _, err := newRangeOffset(in.Field(k).Type, b.Offset); err != nil {
				return fmt.Errorf("frame %s: ORDER BY column %q: %w", f, in.Field(k).Name, err)
			}
		}
	}
	return nil
}

// sumPlan is how sum / avg compute: in exact integers (BIGINT, DECIMAL
// inputs, kept as unscaled values at the input's scale) or in float64.
type sumPlan struct {
	avg     bool
	dom     sumDomain
	inScale int32
	out     arrow.DataType
}

func newSumPlan(avg bool, in, out arrow.DataType) (sumPlan, error) {
	p := sumPlan{avg: avg, out: out}
	switch in.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		p.dom = domInt
	case arrow.DECIMAL128:
		p.dom = domDecimal
		p.inScale = in.(*arrow.Decimal128Type).Scale
	case arrow.FLOAT32, arrow.FLOAT64:
		p.dom = domFloat
	default:
		return p, fmt.Errorf("cannot sum %s", in)
	}
	ok := false
	switch out.ID() {
	case arrow.INT64:
		ok = p.dom == domInt && !avg
	case arrow.FLOAT64:
		ok = p.dom != domDecimal
	case arrow.DECIMAL128:
		ok = p.dom != domFloat
	}
	if !ok {
		return p, fmt.Errorf("%s input cannot give %s", in, out)
	}
	return p, nil
}

// rangeOffset is a RANGE frame offset in the ORDER BY key's arithmetic:
// exact (integers, decimals, and dates and timestamps in nanoseconds) or
// float64.
type rangeOffset struct {
	exact    i192
	flt      float64
	interval *arrow.MonthDayNanoInterval // DATE / TIMESTAMP keys
}

// newRangeOffset checks a RANGE offset against the key type.
func newRangeOffset(key arrow.DataType, off any) (rangeOffset, error) {
	var o rangeOffset
	neg := false
	switch key.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		switch v := off.(type) {
		case int64:
			o.exact, neg = i192From64(v), v < 0
		case int32:
			o.exact, neg = i192From64(int64(v)), v < 0
		default:
			return o, fmt.Errorf("offset %v (%T) does not fit an integer key", off, off)
		}
	case arrow.FLOAT32, arrow.FLOAT64:
		switch v := off.(type) {
		case float64:
			o.flt = v
		case float32:
			o.flt = float64(v)
		case int64:
			o.flt = float64(v)
		default:
			return o, fmt.Errorf("offset %v (%T) does not fit a floating point key", off, off)
		}
		if o.flt != o.flt {
			return o, fmt.Errorf("invalid preceding or following size in window function: NaN")
		}
		neg = o.flt < 0
	case arrow.DECIMAL128:
		switch v := off.(type) {
		case decimal128.Num:
			o.exact, neg = i192FromDec(v), v.Sign() < 0
		case int64:
			o.exact, neg = i192From64(v).mulPow10(key.(*arrow.Decimal128Type).Scale), v < 0
		default:
			return o, fmt.Errorf("offset %v (%T) does not fit a DECIMAL key", off, off)
		}
	case arrow.DATE32, arrow.TIMESTAMP:
		var iv arrow.MonthDayNanoInterval
		switch v := off.(type) {
		case arrow.MonthDayNanoInterval:
			iv = v
		case arrow.Duration:
			iv.Nanoseconds = int64(v)
		default:
			return o, fmt.Errorf("offset %v (%T) is not an interval", off, off)
		}
		o.interval = &iv
		// PostgreSQL's sign test: months count 30 days.
		span := i192From64(int64(iv.Months)).mulSmall(30).add(i192From64(int64(iv.Days))).mulSmall(nanosPerDay).add(i192From64(iv.Nanoseconds))
		neg = span.sign() < 0
	default:
		return o, fmt.Errorf("RANGE with an offset over %s is not supported (numeric, DATE or TIMESTAMP keys)", key)
	}
	if neg {
		return o, fmt.Errorf("invalid preceding or following size in window function: %v is negative", off)
	}
	return o, nil
}
