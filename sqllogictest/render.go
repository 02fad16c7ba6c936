package sqllogictest

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// The corpus was generated with SQLite through slt_sqlite.c, which renders
// each value by the column type the record declares, whatever the value's
// own type: 'I' as sqlite3_column_int64 converts it, 'R' as
// sqlite3_column_double does with "%.3f", 'T' as sqlite3_column_text does,
// with "(empty)" for the empty string and '@' for every byte outside
// 0x20-0x7e. The functions here do the same with clink's row-form values
// (exec.Row's Go types), so a result compares as SQLite's would.

// render renders v, a row-form value of a column of Arrow type t (nil for
// NULL), as the type character c ('I', 'R' or 'T').
func render(v any, t arrow.DataType, c byte) string {
	if v == nil {
		return "NULL"
	}
	switch c {
	case 'I':
		return strconv.FormatInt(asInt(v, t), 10)
	case 'R':
		return formatReal(asReal(v, t))
	}
	return printable(asText(v, t))
}

// asInt is sqlite3_column_int64: integers as they are, reals truncated
// toward zero (clamped to the int64 range), text by its leading integer
// (0 when it has none).
func asInt(v any, t arrow.DataType) int64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int32:
		return int64(x)
	case int64:
		return x
	case float32:
		return realToInt(float64(x))
	case float64:
		return realToInt(x)
	case decimal128.Num:
		return decimalToInt(x, decimalScale(t))
	case string:
		return textToInt(x)
	case []byte:
		return textToInt(string(x))
	}
	return textToInt(expr.FormatValue(v, t))
}

// asReal is sqlite3_column_double: text by its leading number (0 when it
// has none).
func asReal(v any, t arrow.DataType) float64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	case decimal128.Num:
		return x.ToFloat64(decimalScale(t))
	case string:
		return textToReal(x)
	case []byte:
		return textToReal(string(x))
	}
	return textToReal(expr.FormatValue(v, t))
}

// asText is sqlite3_column_text: integers in decimal, reals as SQLite
// prints them ("%!.15g"), booleans as the integers SQLite has for them,
// BYTES as their bytes, and the rest as clink prints it.
func asText(v any, t arrow.DataType) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float32:
		return sqliteRealText(float64(x))
	case float64:
		return sqliteRealText(x)
	case string:
		return x
	case []byte:
		return string(x)
	}
	return expr.FormatValue(v, t)
}

// printable is the T column's final form: "(empty)" for the empty string,
// and '@' for each byte that is a control character or not ASCII.
func printable(s string) string {
	if s == "" {
		return "(empty)"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] < ' ' || b[j] > '~' {
					b[j] = '@'
				}
			}
			return string(b)
		}
	}
	return s
}

func decimalScale(t arrow.DataType) int32 {
	if d, ok := t.(*arrow.Decimal128Type); ok {
		return d.Scale
	}
	return 0
}

// realToInt is SQLite's doubleToInt64: truncation toward zero, clamped.
func realToInt(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x <= math.MinInt64:
		return math.MinInt64
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(x)
}

// decimalToInt truncates a decimal toward zero, clamped to int64.
func decimalToInt(x decimal128.Num, scale int32) int64 {
	n := x.BigInt()
	if scale > 0 {
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	} else if scale < 0 {
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	if n.IsInt64() {
		return n.Int64()
	}
	if n.Sign() < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

// textToInt is sqlite3Atoi64 as sqlite3_column_int64 uses it: leading
// white space, a sign and digits; what follows is ignored, no digits is 0,
// and an overflow clamps.
func textToInt(s string) int64 {
	i := skipSpace(s, 0)
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var n uint64
	over := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			over = true
			continue
		}
		n = n*10 + d
	}
	switch {
	case neg && (over || n > 1<<63):
		return math.MinInt64
	case neg:
		return -int64(n)
	case over || n > math.MaxInt64:
		return math.MaxInt64
	}
	return int64(n)
}

// textToReal is sqlite3AtoF as sqlite3_column_double uses it: the longest
// leading number (sign, digits, fraction, exponent); none is 0.
func textToReal(s string) float64 {
	start := skipSpace(s, 0)
	i := start
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	end := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		k := j
		for ; k < len(s) && s[k] >= '0' && s[k] <= '9'; k++ {
		}
		if k > j {
			end = k
		}
	}
	f, err := strconv.ParseFloat(s[start:end], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return f // ±Inf or 0 on a range error, as strtod gives
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
		i++
	}
	return i
}

// formatReal is "%.3f" as SQLite's printf does it: correctly rounded,
// except that an exact tie rounds away from zero (glibc and Go round it to
// even), so it works on the exact binary value.
func formatReal(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	r := new(big.Rat).SetFloat64(math.Abs(x))
	r.Mul(r, big.NewRat(1000, 1))
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Lsh(m, 1).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if len(digits) < 4 {
		digits = strings.Repeat("0", 4-len(digits)) + digits
	}
	s := digits[:len(digits)-3] + "." + digits[len(digits)-3:]
	if x < 0 {
		s = "-" + s
	}
	return s
}

// sqliteRealText is how SQLite turns a REAL into text: "%!.15g", where '!'
// keeps a decimal point in every number ("1.0", "1.0e+20").
func sqliteRealText(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	s := strconv.FormatFloat(x, 'g', 15, 64)
	mant, exp, hasExp := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if hasExp {
		return mant + "e" + exp
	}
	return mant
}

// maxValues bounds a result the runner keeps: a query gone wrong (a
// cross join without its predicate) fails instead of exhausting memory.
const maxValues = 20_000_000

// collector is the ResultWriter of one record: it renders each value as it
// arrives, reading columnar batches through exec.Value, so collecting a
// result never materialises a batch into rows. With types "" it only
// counts (a statement's result is discarded).
type collector struct {
	types   string
	discard bool
	fields  []arrow.Field
	values  []string
	rows    int
}

// Columns checks the column count against the record's type string and
// refuses a result that would never end.
func (c *collector) Columns(schema *arrow.Schema, bounded bool) error {
	if !bounded {
		return errors.New("sqllogictest: the result is unbounded (a streaming query never ends)")
	}
	c.fields = schema.Fields()
	if !c.discard && len(c.fields) != len(c.types) {
		return fmt.Errorf("wrong number of result columns: the record declares %d (%s), the query has %d",
			len(c.types), c.types, len(c.fields))
	}
	return nil
}

// Batch renders the batch's values, row by row.
func (c *collector) Batch(b *exec.Batch) error {
	n := b.Len()
	c.rows += n
	if c.discard || n == 0 {
		return nil
	}
	if len(c.values)+n*len(c.fields) > maxValues {
		return fmt.Errorf("sqllogictest: the result has more than %d values", maxValues)
	}
	if b.IsColumnar() {
		rec := b.Record()
		for i := 0; i < n; i++ {
			for col, f := range c.fields {
				c.values = append(c.values, render(exec.Value(rec.Column(col), i), f.Type, c.types[col]))
			}
		}
		return nil
	}
	for _, row := range b.Rows() {
		for col, f := range c.fields {
			c.values = append(c.values, render(row[col], f.Type, c.types[col]))
		}
	}
	return nil
}
