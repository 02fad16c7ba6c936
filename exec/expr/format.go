package expr

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
)

// FormatValue renders a row-form value of type t the way the shell prints
// it and CAST(... AS VARCHAR) produces it:
//
//   - NULL as "NULL", booleans as TRUE/FALSE;
//   - DECIMAL(p,s) with exactly s fraction digits;
//   - FLOAT/DOUBLE in the shortest form that reads back to the same value,
//     laid out as Java (and so Flink) prints doubles: plain notation with at
//     least one fraction digit for 1e-3 <= |x| < 1e7 ("3.0", "0.25"),
//     otherwise scientific ("1.0E7", "1.5E-5"); NaN, Infinity, -Infinity;
//   - TIMESTAMP as 'YYYY-MM-DD HH:MM:SS' plus a fraction only when it is
//     non-zero, trailing zeros trimmed ('... 00:00:05.12' for 120ms);
//   - DATE as 'YYYY-MM-DD'; BYTES as x'hex'.
func FormatValue(v any, t arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return formatFloat(float64(x), 32)
	case float64:
		return formatFloat(x, 64)
	case decimal128.Num:
		var s int32
		if d, ok := t.(*arrow.Decimal128Type); ok {
			s = d.Scale
		}
		return decToString(x, s)
	case string:
		return x
	case []byte:
		return "x'" + hex.EncodeToString(x) + "'"
	case arrow.Timestamp:
		u := arrow.Microsecond
		if ts, ok := t.(*arrow.TimestampType); ok {
			u = ts.Unit
		}
		return formatTimestamp(int64(x), u)
	case arrow.Date32:
		return formatDate(int64(x))
	case arrow.Duration:
		return "INTERVAL '" + time.Duration(x).String() + "'"
	case exec.Row:
		parts := make([]string, len(x))
		st, _ := t.(*arrow.StructType)
		for i, f := range x {
			var ft arrow.DataType = arrow.Null
			if st != nil && i < st.NumFields() {
				ft = st.Field(i).Type
			}
			parts[i] = FormatValue(f, ft)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case []any:
		parts := make([]string, len(x))
		var et arrow.DataType = arrow.Null
		if lt, ok := t.(*arrow.ListType); ok {
			et = lt.Elem()
		}
		for i, e := range x {
			parts[i] = FormatValue(e, et)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, bitSize)
		if !strings.ContainsRune(s, '.') {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bitSize) // 1.5E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.ContainsRune(mant, '.') {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's algorithm; exact for every int64 day we can hold).
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysInMonth(y int64, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func formatDate(days int64) string {
	y, m, d := civilFromDays(days)
	var b [16]byte
	return string(appendDate(b[:0], y, m, d))
}

func appendDate(b []byte, y int64, m, d int) []byte {
	if y < 0 {
		b = append(b, '-')
		y = -y
	}
	if y < 1000 {
		b = append(b, "000"[:4-len(strconv.FormatInt(y, 10))]...)
	}
	b = strconv.AppendInt(b, y, 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return b
}

func unitsPerSecond(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1e6
	}
	return 1e9
}

func formatTimestamp(v int64, u arrow.TimeUnit) string {
	var b [40]byte
	return string(appendTimestamp(b[:0], v, u))
}

func appendTimestamp(b []byte, v int64, u arrow.TimeUnit) []byte {
	ups := unitsPerSecond(u)
	secs := floorDiv(v, ups)
	frac := v - secs*ups
	days := floorDiv(secs, 86400)
	sod := secs - days*86400
	y, m, d := civilFromDays(days)
	b = appendDate(b, y, m, d)
	h, mi, s := sod/3600, sod/60%60, sod%60
	b = append(b, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	if frac != 0 {
		digits := tsPrecision(u)
		var f [9]byte
		for i := digits - 1; i >= 0; i-- {
			f[i] = byte('0' + frac%10)
			frac /= 10
		}
		n := digits
		for n > 0 && f[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, f[:n]...)
	}
	return b
}

// parseDigits reads 1..max decimal digits at s[i:].
func parseDigits(s string, i, maxDigits int) (v int64, next int, ok bool) {
	j := i
	for j < len(s) && j-i < maxDigits && s[j] >= '0' && s[j] <= '9' {
		v = v*10 + int64(s[j]-'0')
		j++
	}
	return v, j, j > i
}

// parseDateAt reads YYYY-MM-DD (month and day may have one digit) at the
// start of s and returns the days since the epoch and where it stopped.
func parseDateAt(s string) (days int64, next int, ok bool) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	y, i, ok1 := parseDigits(s, i, 9)
	if !ok1 || i >= len(s) || s[i] != '-' {
		return 0, 0, false
	}
	m, i, ok2 := parseDigits(s, i+1, 2)
	if !ok2 || i >= len(s) || s[i] != '-' {
		return 0, 0, false
	}
	d, i, ok3 := parseDigits(s, i+1, 2)
	if !ok3 {
		return 0, 0, false
	}
	if neg {
		y = -y
	}
	if m < 1 || m > 12 || d < 1 || int(d) > daysInMonth(y, int(m)) {
		return 0, 0, false
	}
	return daysFromCivil(y, int(m), int(d)), i, true
}

// parseDate reads 'YYYY-MM-DD' (surrounding spaces allowed).
func parseDate(str string) (arrow.Date32, error) {
	s := strings.TrimSpace(str)
	days, i, ok := parseDateAt(s)
	if !ok || i != len(s) || days < math.MinInt32 || days > math.MaxInt32 {
		return 0, fmt.Errorf("invalid DATE value '%s'", str)
	}
	return arrow.Date32(days), nil
}

// parseTimestamp reads 'YYYY-MM-DD[ HH:MM[:SS[.fffffffff]]]', also with 'T'
// between date and time and an optional trailing 'Z' (ISO-8601). Digits
// past the unit's precision are truncated, as Flink does.
func parseTimestamp(str string, u arrow.TimeUnit) (arrow.Timestamp, error) {
	bad := func() (arrow.Timestamp, error) {
		return 0, fmt.Errorf("invalid %s value '%s'", typeName(&arrow.TimestampType{Unit: u}), str)
	}
	s := strings.TrimSpace(str)
	s = strings.TrimSuffix(s, "Z")
	days, i, ok := parseDateAt(s)
	if !ok {
		return bad()
	}
	var sod, nanos int64
	if i < len(s) {
		if s[i] != ' ' && s[i] != 'T' {
			return bad()
		}
		h, j, ok1 := parseDigits(s, i+1, 2)
		if !ok1 || j >= len(s) || s[j] != ':' {
			return bad()
		}
		mi, j, ok2 := parseDigits(s, j+1, 2)
		if !ok2 {
			return bad()
		}
		var sec int64
		if j < len(s) && s[j] == ':' {
			var ok3 bool
			sec, j, ok3 = parseDigits(s, j+1, 2)
			if !ok3 {
				return bad()
			}
			if j < len(s) && s[j] == '.' {
				k := j + 1
				digits := 0
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					if digits < 9 {
						nanos = nanos*10 + int64(s[k]-'0')
						digits++
					}
					k++
				}
				if k == j+1 {
					return bad()
				}
				nanos *= pow10Int[9-digits]
				j = k
			}
		}
		if j != len(s) || h > 23 || mi > 59 || sec > 59 {
			return bad()
		}
		sod = h*3600 + mi*60 + sec
	}
	ups := unitsPerSecond(u)
	// Range: nanoseconds hold about +-292 years around 1970.
	if limit := math.MaxInt64/ups/86400 - 1; days > limit || days < -limit {
		return bad()
	}
	v := (days*86400+sod)*ups + nanos/(1e9/ups)
	return arrow.Timestamp(v), nil
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }
