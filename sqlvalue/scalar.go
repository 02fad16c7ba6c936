package sqlvalue

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// AppendBool appends true or false.
func AppendBool(buf []byte, b bool) []byte { return strconv.AppendBool(buf, b) }

// AppendFloat appends f in DuckDB's layout (see the package comment);
// bits is 32 for FLOAT (its own shortest digits) or 64.
func AppendFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "nan"...)
	case math.IsInf(f, 1):
		return append(buf, "inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(buf, "-0.0"...)
		}
		return append(buf, "0.0"...)
	}
	// The shortest digits and the decimal exponent decide the layout; the
	// plain form is laid out from the same digits (one conversion).
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits) // -d.ddde±xx
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	k := len(e) - 1
	for e[k] != 'e' {
		k--
	}
	mant, exp := e[:k], 0
	for _, c := range e[k+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[k+1] == '-' {
		exp = -exp
	}
	if neg {
		buf = append(buf, '-')
	}
	if exp < -4 || exp > 15 {
		buf = append(buf, mant...)
		buf = append(buf, 'e')
		if exp < 0 {
			buf = append(buf, '-')
			exp = -exp
		} else {
			buf = append(buf, '+')
		}
		if exp < 10 {
			buf = append(buf, '0')
		}
		return strconv.AppendInt(buf, int64(exp), 10)
	}
	var digits [24]byte
	d := append(digits[:0], mant[0])
	if len(mant) > 2 {
		d = append(d, mant[2:]...) // skip the point
	}
	if exp < 0 {
		buf = append(buf, '0', '.')
		for i := -1; i > exp; i-- {
			buf = append(buf, '0')
		}
		return append(buf, d...)
	}
	for i := 0; i <= exp; i++ {
		if i < len(d) {
			buf = append(buf, d[i])
		} else {
			buf = append(buf, '0')
		}
	}
	buf = append(buf, '.')
	if exp+1 >= len(d) {
		return append(buf, '0')
	}
	return append(buf, d[exp+1:]...)
}

// AppendDecimal appends n with exactly scale fraction digits. Values that
// fit an int64 (nearly all) are rendered without allocating.
func AppendDecimal(buf []byte, n decimal128.Num, scale int32) []byte {
	var digits []byte
	var stack [40]byte
	neg := n.Sign() < 0
	hi, lo := n.HighBits(), n.LowBits()
	if (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63) {
		v := int64(lo)
		u := uint64(v)
		if v < 0 {
			u = uint64(-v) // -MinInt64 wraps to itself, its magnitude as uint64
		}
		digits = strconv.AppendUint(stack[:0], u, 10)
	} else {
		b := n.BigInt()
		digits = new(big.Int).Abs(b).Append(stack[:0], 10)
	}
	if neg {
		buf = append(buf, '-')
	}
	if scale <= 0 {
		buf = append(buf, digits...)
		for k := int32(0); k < -scale; k++ {
			buf = append(buf, '0')
		}
		return buf
	}
	s := int(scale)
	if len(digits) <= s {
		buf = append(buf, '0', '.')
		for k := len(digits); k < s; k++ {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	buf = append(buf, digits[:len(digits)-s]...)
	buf = append(buf, '.')
	return append(buf, digits[len(digits)-s:]...)
}

const hexDigits = "0123456789abcdef"

// AppendBytes appends b in PostgreSQL's bytea hex form: \x then two
// lower-case hex digits per byte.
func AppendBytes(buf []byte, b []byte) []byte {
	buf = append(buf, '\\', 'x')
	for _, c := range b {
		buf = append(buf, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return buf
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's algorithm, exact for every int64 day we hold).
func CivilFromDays(z int64) (y int64, m, d int) {
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

// AppendDate appends a DATE given as days since 1970-01-01: YYYY-MM-DD.
func AppendDate(buf []byte, days int64) []byte {
	y, m, d := CivilFromDays(days)
	return appendYMD(buf, y, m, d)
}

func appendYMD(b []byte, y int64, m, d int) []byte {
	if y < 0 {
		b = append(b, '-')
		y = -y
	}
	for p := int64(1000); p > 1 && y < p; p /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, y, 10)
	return append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// AppendTimestamp appends a zone-less TIMESTAMP of unit u:
// YYYY-MM-DD HH:MM:SS[.fraction], the fraction only when non-zero, at the
// unit's precision with trailing zeros trimmed.
func AppendTimestamp(buf []byte, v int64, u arrow.TimeUnit) []byte {
	ups := UnitsPerSecond(u)
	secs := floorDiv(v, ups)
	frac := v - secs*ups
	days := floorDiv(secs, 86400)
	buf = AppendDate(buf, days)
	buf = append(buf, ' ')
	buf = appendClock(buf, secs-days*86400)
	return appendFraction(buf, frac, UnitPrecision(u))
}

// AppendTimestampIn appends a timestamp of unit u shown in loc (a zoned
// TIMESTAMP_LTZ column); nil loc is AppendTimestamp.
func AppendTimestampIn(buf []byte, v int64, u arrow.TimeUnit, loc *time.Location) []byte {
	if loc == nil || loc == time.UTC {
		return AppendTimestamp(buf, v, u)
	}
	ups := UnitsPerSecond(u)
	secs := floorDiv(v, ups)
	frac := v - secs*ups
	_, off := time.Unix(secs, 0).In(loc).Zone()
	local := secs + int64(off)
	days := floorDiv(local, 86400)
	buf = AppendDate(buf, days)
	buf = append(buf, ' ')
	buf = appendClock(buf, local-days*86400)
	return appendFraction(buf, frac, UnitPrecision(u))
}

// AppendTime appends a TIME of unit u (ticks since midnight) as DuckDB
// prints it: HH:MM:SS[.fraction], the fraction only when non-zero, at the
// unit's precision with trailing zeros trimmed.
func AppendTime(buf []byte, v int64, u arrow.TimeUnit) []byte {
	ups := UnitsPerSecond(u)
	secs := floorDiv(v, ups)
	buf = appendClock(buf, secs)
	return appendFraction(buf, v-secs*ups, UnitPrecision(u))
}

func appendClock(buf []byte, sod int64) []byte {
	h, mi, s := sod/3600, sod/60%60, sod%60
	if h >= 100 { // interval hours can exceed a day
		buf = strconv.AppendInt(buf, h, 10)
	} else {
		buf = append(buf, byte('0'+h/10), byte('0'+h%10))
	}
	return append(buf, ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
}

// appendFraction writes .frac at the given number of digits, trailing
// zeros trimmed; nothing when frac is zero.
func appendFraction(buf []byte, frac int64, digits int) []byte {
	if frac == 0 {
		return buf
	}
	var f [9]byte
	for i := digits - 1; i >= 0; i-- {
		f[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := digits
	for n > 0 && f[n-1] == '0' {
		n--
	}
	buf = append(buf, '.')
	return append(buf, f[:n]...)
}

// AppendInterval appends an INTERVAL as DuckDB prints it: years and months
// from the months, then days, then the time as [-]HH:MM:SS[.fraction]
// (microsecond digits kept to the nanosecond when present); parts that are
// zero are left out, and an all-zero interval is 00:00:00. Units are
// singular for 1 and -1 (1 day, -1 day), plural otherwise, as DuckDB.
func AppendInterval(buf []byte, iv arrow.MonthDayNanoInterval) []byte {
	start := len(buf)
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, ' ')
		buf = append(buf, unit...)
		if v != 1 && v != -1 {
			buf = append(buf, 's')
		}
	}
	months := int64(iv.Months)
	part(months/12, "year")
	part(months%12, "month")
	part(int64(iv.Days), "day")
	if iv.Nanoseconds != 0 || len(buf) == start {
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		ns := iv.Nanoseconds
		neg := ns < 0
		var mag uint64
		if neg {
			buf = append(buf, '-')
			mag = uint64(-ns) // MinInt64 wraps to its magnitude
		} else {
			mag = uint64(ns)
		}
		secs, frac := mag/1e9, mag%1e9
		buf = appendClockU(buf, secs)
		if frac%1000 == 0 {
			buf = appendFraction(buf, int64(frac/1000), 6)
		} else {
			buf = appendFraction(buf, int64(frac), 9)
		}
	}
	return buf
}

func appendClockU(buf []byte, secs uint64) []byte {
	h, mi, s := secs/3600, secs/60%60, secs%60
	if h < 10 {
		buf = append(buf, '0')
	}
	buf = strconv.AppendUint(buf, h, 10)
	return append(buf, ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
}
