package expr

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// ColRef reads input column Index.
type ColRef struct {
	Index int
	T     arrow.DataType
	Name  string
}

// Col references input column idx of type t; name is what String prints.
func Col(idx int, t arrow.DataType, name string) *ColRef {
	return &ColRef{Index: idx, T: t, Name: name}
}

func (c *ColRef) Type() arrow.DataType { return c.T }

// ColumnIndex is the referenced column: a projection hands that column on
// as it is, dictionary encoding included (EvalColumnar decodes it).
func (c *ColRef) ColumnIndex() int { return c.Index }

func (c *ColRef) String() string {
	if c.Name == "" {
		return fmt.Sprintf("$%d", c.Index)
	}
	return c.Name
}

func (c *ColRef) EvalRow(r exec.Row) (any, error) {
	if c.Index < 0 || c.Index >= len(r) {
		return nil, fmt.Errorf("column %s (#%d) is outside a row of %d values", c, c.Index, len(r))
	}
	return r[c.Index], nil
}

func (c *ColRef) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	if c.Index < 0 || c.Index >= int(rec.NumCols()) {
		return nil, fmt.Errorf("column %s (#%d) is outside a record of %d columns", c, c.Index, rec.NumCols())
	}
	a := rec.Column(c.Index)
	if a.DataType().ID() == arrow.DICTIONARY && c.T.ID() != arrow.DICTIONARY {
		// A dictionary-encoded VARCHAR (the planner sends those to GROUP BY
		// keys, which read codes): the kernels read plain values.
		return exec.PlainArray(mem, a)
	}
	a.Retain()
	return a, nil
}

// Literal is a constant. Kernels read it as a scalar and never build an
// array for it; only a bare literal evaluated on its own is broadcast.
type Literal struct {
	v    any
	t    arrow.DataType
	text string // how it was written, when folded from a CAST
	// from is the expression a fold computed the constant from: its text
	// is what String shows, built only when asked. depth counts the folds
	// under it: past maxFoldText the value stands for itself, since the
	// text of a long chain of folded operators (1 + 1 + ... + 1) is built
	// by nested formatting, quadratic in its length.
	from  Expr
	depth int
}

// Lit is a constant of type t; v is its row-form value (see exec.Row) or
// nil for NULL, with t = arrow.Null for an untyped NULL.
func Lit(v any, t arrow.DataType) *Literal {
	if t == nil {
		t = arrow.Null
	}
	return &Literal{v: v, t: t}
}

// Value is the constant in row form (nil for NULL).
func (l *Literal) Value() any { return l.v }

func (l *Literal) Type() arrow.DataType { return l.t }

func (l *Literal) String() string {
	if l.text != "" {
		return l.text
	}
	if l.from != nil {
		return l.from.String()
	}
	return sqlLiteral(l.v, l.t)
}

func (l *Literal) EvalRow(exec.Row) (any, error) { return l.v, nil }

func (l *Literal) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	if l.v == nil {
		return nullArray(mem, l.t, n), nil
	}
	b := array.NewBuilder(mem, l.t)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if err := appendValue(b, l.v); err != nil {
			return nil, fmt.Errorf("literal %s: %w", l, err)
		}
	}
	return b.NewArray(), nil
}

// sqlLiteral renders a constant as SQL source.
func sqlLiteral(v any, t arrow.DataType) string {
	if v == nil {
		return "NULL"
	}
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case arrow.Timestamp:
		return "TIMESTAMP '" + FormatValue(v, t) + "'"
	case arrow.Date32:
		return "DATE '" + FormatValue(v, t) + "'"
	case arrow.Time64:
		return "TIME '" + FormatValue(v, t) + "'"
	case []byte:
		return "X'" + hex.EncodeToString(x) + "'"
	case float32, float64:
		s := FormatValue(v, t)
		if s == "nan" || strings.HasSuffix(s, "inf") {
			return "CAST('" + s + "' AS " + typeName(t) + ")"
		}
		if !strings.ContainsAny(s, "eE") {
			s += "E0"
		}
		return s
	case arrow.MonthDayNanoInterval:
		return "INTERVAL '" + FormatValue(v, t) + "'"
	}
	return FormatValue(v, t)
}

// NumberLit types a SQL numeric literal as Flink does: an integer is INT
// when it fits, else BIGINT, else DECIMAL(p, 0); a literal with a point is
// an exact DECIMAL with its written digits ('0.908' is DECIMAL(3, 3),
// '12.50' DECIMAL(4, 2)); one with an exponent ('1e3') is DOUBLE.
func NumberLit(text string) (*Literal, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, fmt.Errorf("empty numeric literal")
	}
	if strings.ContainsAny(t, "eE") {
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("invalid numeric literal %q", text)
		}
		return &Literal{v: f, t: arrow.PrimitiveTypes.Float64, text: t}, nil
	}
	body := strings.TrimLeft(t, "+-")
	intPart, frac, hasPoint := strings.Cut(body, ".")
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return nil, fmt.Errorf("invalid numeric literal %q", text)
			}
		}
	}
	if intPart == "" && frac == "" {
		return nil, fmt.Errorf("invalid numeric literal %q", text)
	}
	if !hasPoint {
		v, err := strconv.ParseInt(t, 10, 64)
		if err == nil {
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return Lit(int32(v), arrow.PrimitiveTypes.Int32), nil
			}
			return Lit(v, arrow.PrimitiveTypes.Int64), nil
		}
	}
	digits := strings.TrimLeft(intPart, "0")
	p := int32(len(digits) + len(frac))
	s := int32(len(frac))
	if p == 0 {
		p = 1
	}
	if p > maxPrecision {
		return nil, fmt.Errorf("numeric literal %q has more than %d digits", text, maxPrecision)
	}
	n, err := parseDecimal(t, p, s)
	if err != nil {
		return nil, fmt.Errorf("numeric literal %q: %w", text, err)
	}
	return &Literal{v: n, t: decType(p, s), text: t}, nil
}
