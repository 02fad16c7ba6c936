package sqllogictest

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

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
	x := stored(v, t)
	switch c {
	case 'I':
		return strconv.FormatInt(x.asInt(), 10)
	case 'R':
		return formatReal(x.asReal())
	}
	return printable(x.asText())
}

// sqliteValue is a value as SQLite would hold it: an INTEGER, a REAL or
// TEXT (its storage classes; NULL is handled before).
type sqliteValue struct {
	class byte // 'i', 'r' or 't'
	i     int64
	r     float64
	s     string // TEXT; for a REAL from a DECIMAL, its exact digits
}

// stored maps clink's row-form values onto SQLite's storage classes:
// booleans and integers are INTEGERs (SQLite has no boolean), floats and
// decimals REALs (a decimal keeps its exact text for T), and the rest TEXT
// (BYTES as their bytes, dates and timestamps as clink prints them).
func stored(v any, t arrow.DataType) sqliteValue {
	switch x := v.(type) {
	case bool:
		if x {
			return sqliteValue{class: 'i', i: 1}
		}
		return sqliteValue{class: 'i'}
	case int32:
		return sqliteValue{class: 'i', i: int64(x)}
	case int64:
		return sqliteValue{class: 'i', i: x}
	case float32:
		return sqliteValue{class: 'r', r: float64(x)}
	case float64:
		return sqliteValue{class: 'r', r: x}
	case decimal128.Num:
		var scale int32
		if d, ok := t.(*arrow.Decimal128Type); ok {
			scale = d.Scale
		}
		return sqliteValue{class: 'r', r: x.ToFloat64(scale), s: expr.FormatValue(v, t)}
	case string:
		return sqliteValue{class: 't', s: x}
	case []byte:
		return sqliteValue{class: 't', s: string(x)}
	}
	return sqliteValue{class: 't', s: expr.FormatValue(v, t)}
}

// asInt is sqlite3_column_int64: a REAL truncated toward zero (clamped to
// the int64 range), TEXT by its leading integer (0 when it has none).
func (x sqliteValue) asInt() int64 {
	switch x.class {
	case 'i':
		return x.i
	case 'r':
		return realToInt(x.r)
	}
	return textToInt(x.s)
}

// asReal is sqlite3_column_double: TEXT by its leading number (0 when it
// has none).
func (x sqliteValue) asReal() float64 {
	switch x.class {
	case 'i':
		return float64(x.i)
	case 'r':
		return x.r
	}
	return textToReal(x.s)
}

// asText is sqlite3_column_text: an INTEGER in decimal, a REAL as SQLite
// prints it ("%!.15g"; a decimal's exact digits).
func (x sqliteValue) asText() string {
	switch x.class {
	case 'i':
		return strconv.FormatInt(x.i, 10)
	case 'r':
		if x.s != "" {
			return x.s
		}
		return sqliteRealText(x.r)
	}
	return x.s
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
	if s, ok := nonFinite(x); ok {
		return s
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
	if s, ok := nonFinite(x); ok {
		return s
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

// nonFinite is how SQLite's printf writes NaN and the infinities.
func nonFinite(x float64) (string, bool) {
	switch {
	case math.IsNaN(x):
		return "NaN", true
	case math.IsInf(x, 1):
		return "Inf", true
	case math.IsInf(x, -1):
		return "-Inf", true
	}
	return "", false
}
