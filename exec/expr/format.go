package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sqlvalue"
)

// FormatValue renders a row-form value of type t as CAST(... AS VARCHAR)
// produces it and error messages quote it: the canonical text of package
// sqlvalue (DuckDB's spelling: true/false, 1.0, 1e+20, 2024-01-31
// 12:00:00.5, 1 month 2 days 03:00:00), with NULL spelled NULL.
func FormatValue(v any, t arrow.DataType) string {
	if r, ok := v.(exec.Row); ok {
		v = []any(r)
	}
	s, null := sqlvalue.Format(v, t)
	if null {
		return "NULL"
	}
	return s
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date.
func civilFromDays(z int64) (int64, int, int) { return sqlvalue.CivilFromDays(z) }

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

func unitsPerSecond(u arrow.TimeUnit) int64 { return sqlvalue.UnitsPerSecond(u) }

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
		if sod, nanos, ok = parseClockOfDay(s[i+1:]); !ok {
			return bad()
		}
	}
	ups := unitsPerSecond(u)
	// Range: nanoseconds hold about +-292 years around 1970.
	if limit := math.MaxInt64/ups/86400 - 1; days > limit || days < -limit {
		return bad()
	}
	v := (days*86400+sod)*ups + nanos/(1e9/ups)
	return arrow.Timestamp(v), nil
}

// parseTime reads a TIME: 'HH:MM[:SS[.fffffffff]]' (the hour may have
// one digit), surrounding spaces allowed and a leading 'YYYY-MM-DD ' (or
// 'T') ignored, as DuckDB reads it. The fields must be in range (23:59:59
// at most: a TIME is a time of day); digits past the unit's precision are
// truncated.
func parseTime(str string, u arrow.TimeUnit) (arrow.Time64, error) {
	s := strings.TrimSpace(str)
	if _, i, ok := parseDateAt(s); ok && i < len(s) && (s[i] == ' ' || s[i] == 'T') {
		s = s[i+1:]
	}
	sod, nanos, ok := parseClockOfDay(s)
	if !ok {
		return 0, fmt.Errorf("invalid %s value '%s'", typeName(timeType(u)), str)
	}
	ups := unitsPerSecond(u)
	return arrow.Time64(sod*ups + nanos/(1e9/ups)), nil
}

// parseClockOfDay reads all of s as a time of day, HH:MM[:SS[.fffffffff]]
// (one-digit fields allowed, at most 23:59:59, fraction digits past the
// ninth ignored): the seconds since midnight and the nanoseconds past them.
func parseClockOfDay(s string) (sod, nanos int64, ok bool) {
	h, j, ok := parseDigits(s, 0, 2)
	if !ok || j >= len(s) || s[j] != ':' {
		return 0, 0, false
	}
	mi, j, ok := parseDigits(s, j+1, 2)
	if !ok {
		return 0, 0, false
	}
	var sec int64
	if j < len(s) && s[j] == ':' {
		if sec, j, ok = parseDigits(s, j+1, 2); !ok {
			return 0, 0, false
		}
		if j < len(s) && s[j] == '.' {
			k, digits := j+1, 0
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				if digits < 9 {
					nanos = nanos*10 + int64(s[k]-'0')
					digits++
				}
				k++
			}
			if k == j+1 {
				return 0, 0, false
			}
			nanos *= pow10Int[9-digits]
			j = k
		}
	}
	if j != len(s) || h > 23 || mi > 59 || sec > 59 {
		return 0, 0, false
	}
	return h*3600 + mi*60 + sec, nanos, true
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }
