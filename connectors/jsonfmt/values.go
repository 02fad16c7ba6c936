package jsonfmt

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// The scalar parsers below are shared by the columnar walk and the row
// decode: both carriers turn the same JSON text into the same value by
// calling the same function, so they cannot drift.

var (
	errNotInt     = errors.New("not an integer")
	errIntRange   = errors.New("integer out of range")
	errBadTime    = errors.New("not a timestamp ('YYYY-MM-DD HH:MM:SS[.fff]' or ISO-8601)")
	errBadDate    = errors.New("not a date ('YYYY-MM-DD')")
	errBadDecimal = errors.New("not a decimal number")
)

// parseInt parses a JSON integer literal (optional '-', digits, no leading
// zeros, no fraction or exponent) into the range of bits.
func parseInt(b []byte, bits int) (int64, error) {
	if len(b) == 0 {
		return 0, errNotInt
	}
	neg := b[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	if i == len(b) || (b[i] == '0' && len(b) > i+1) {
		return 0, errNotInt
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			return 0, errNotInt
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, errIntRange
		}
		u = u*10 + uint64(c)
	}
	lim := uint64(1) << (bits - 1)
	if neg {
		if u > lim {
			return 0, errIntRange
		}
		return -int64(u), nil
	}
	if u >= lim {
		return 0, errIntRange
	}
	return int64(u), nil
}

// parseDecimal parses a JSON number's text exactly (never via float64) into
// a decimal of precision p and scale s. Extra fractional digits round half
// away from zero, as Flink's BigDecimal HALF_UP; more than p digits is an
// error.
func parseDecimal(b []byte, p, s int32) (decimal128.Num, error) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var digits [80]byte
	nd := 0
	exp := 0 // power of ten applied to the digit string
	sawDigit, sawDot := false, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			sawDigit = true
			if nd == 0 && c == '0' {
				if sawDot {
					exp--
				}
				continue // leading zeros carry no precision
			}
			if nd == len(digits) {
				return decimal128.Num{}, errBadDecimal
			}
			digits[nd] = c - '0'
			nd++
			if sawDot {
				exp--
			}
		case c == '.' && !sawDot:
			sawDot = true
		case (c == 'e' || c == 'E') && sawDigit:
			e, err := parseInt(trimPlus(b[i+1:]), 32)
			if err != nil || e > 400 || e < -400 {
				return decimal128.Num{}, errBadDecimal
			}
			exp += int(e)
			i = len(b)
		default:
			return decimal128.Num{}, errBadDecimal
		}
	}
	if !sawDigit {
		return decimal128.Num{}, errBadDecimal
	}
	// value = digits * 10^exp; we want digits * 10^(exp+s) as an integer.
	shift := exp + int(s)
	keep := nd
	roundUp := false
	if shift < 0 {
		drop := -shift
		if drop > nd {
			keep = 0
			roundUp = false
		} else {
			keep = nd - drop
			roundUp = digits[keep] >= 5
		}
		shift = 0
	}
	if keep+shift > int(p) {
		return decimal128.Num{}, fmt.Errorf("%s does not fit DECIMAL(%d, %d)", b, p, s)
	}
	v := decimal128.Num{}
	ten := decimal128.FromU64(10)
	for k := 0; k < keep; k++ {
		v = v.Mul(ten).Add(decimal128.FromU64(uint64(digits[k])))
	}
	for k := 0; k < shift; k++ {
		v = v.Mul(ten)
	}
	if roundUp {
		v = v.Add(decimal128.FromU64(1))
		if !v.FitsInPrecision(p) {
			return decimal128.Num{}, fmt.Errorf("%s does not fit DECIMAL(%d, %d)", b, p, s)
		}
	}
	if neg {
		v = v.Negate()
	}
	return v, nil
}

func trimPlus(b []byte) []byte {
	if len(b) > 0 && b[0] == '+' {
		return b[1:]
	}
	return b
}

// parseTimestamp parses 'YYYY-MM-DD HH:MM:SS[.f...]' (Flink's SQL format)
// or ISO-8601 'YYYY-MM-DDTHH:MM:SS[.f...][Z|±HH:MM]' into the unit's ticks
// since the epoch. A zone offset is converted to UTC.
func parseTimestamp(b []byte, unit arrow.TimeUnit) (arrow.Timestamp, error) {
	return parseTimestampCached(b, unit, nil)
}

// dayCache remembers the last valid date prefix: a stream's timestamps
// mostly share their day, and the calendar arithmetic is then skipped.
type dayCache struct {
	date [10]byte
	days int64
	ok   bool
}

func parseTimestampCached(b []byte, unit arrow.TimeUnit, dc *dayCache) (arrow.Timestamp, error) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' {
		return 0, errBadTime
	}
	var days int64
	if dc != nil && dc.ok && string(dc.date[:]) == string(b[:10]) {
		days = dc.days
	} else {
		var ok bool
		if days, ok = civilDays(b); !ok {
			return 0, errBadTime
		}
		if dc != nil {
			copy(dc.date[:], b[:10])
			dc.days, dc.ok = days, true
		}
	}
	hh, ok1 := two(b[11:13])
	mm, ok2 := two(b[14:16])
	ss, ok3 := two(b[17:19])
	if !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 59 {
		return 0, errBadTime
	}
	var nanos int64
	i := 19
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		scale := int64(100_000_000)
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if i-start < 9 {
				nanos += int64(b[i]-'0') * scale
				scale /= 10
			}
			i++
		}
		if i == start {
			return 0, errBadTime
		}
	}
	var off int64
	if i < len(b) {
		switch b[i] {
		case 'Z', 'z':
			i++
		case '+', '-':
			if len(b)-i != 6 || b[i+3] != ':' {
				return 0, errBadTime
			}
			oh, ok1 := two(b[i+1 : i+3])
			om, ok2 := two(b[i+4 : i+6])
			if !ok1 || !ok2 {
				return 0, errBadTime
			}
			off = int64(oh*3600 + om*60)
			if b[i] == '-' {
				off = -off
			}
			i += 6
		}
	}
	if i != len(b) {
		return 0, errBadTime
	}
	secs := days*86400 + int64(hh*3600+mm*60+ss) - off
	switch unit {
	case arrow.Second:
		return arrow.Timestamp(secs), nil
	case arrow.Millisecond:
		return arrow.Timestamp(secs*1e3 + nanos/1e6), nil
	case arrow.Microsecond:
		return arrow.Timestamp(secs*1e6 + nanos/1e3), nil
	}
	return arrow.Timestamp(secs*1e9 + nanos), nil
}

// parseDate parses 'YYYY-MM-DD'.
func parseDate(b []byte) (arrow.Date32, error) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return 0, errBadDate
	}
	d, ok := civilDays(b)
	if !ok {
		return 0, errBadDate
	}
	return arrow.Date32(d), nil
}

// civilDays converts the 'YYYY-MM-DD' prefix of b to days since the epoch
// (Howard Hinnant's days_from_civil), validating the day of the month.
func civilDays(b []byte) (int64, bool) {
	y1, ok1 := two(b[0:2])
	y2, ok2 := two(b[2:4])
	m, ok3 := two(b[5:7])
	d, ok4 := two(b[8:10])
	if !ok1 || !ok2 || !ok3 || !ok4 || m < 1 || m > 12 || d < 1 {
		return 0, false
	}
	y := int64(y1*100 + y2)
	if d > daysIn(y, m) {
		return 0, false
	}
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468, true
}

func daysIn(y int64, m int) int {
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

func two(b []byte) (int, bool) {
	a, c := b[0]-'0', b[1]-'0'
	if a > 9 || c > 9 {
		return 0, false
	}
	return int(a)*10 + int(c), true
}

// appendTimestamp formats ts as Flink's SQL format: 'YYYY-MM-DD HH:MM:SS'
// plus the unit's fractional digits.
func appendTimestamp(dst []byte, ts int64, unit arrow.TimeUnit) []byte {
	var secs, frac int64
	digits := 0
	switch unit {
	case arrow.Second:
		secs = ts
	case arrow.Millisecond:
		secs, frac, digits = floorDiv(ts, 1e3), floorMod(ts, 1e3), 3
	case arrow.Microsecond:
		secs, frac, digits = floorDiv(ts, 1e6), floorMod(ts, 1e6), 6
	default:
		secs, frac, digits = floorDiv(ts, 1e9), floorMod(ts, 1e9), 9
	}
	t := time.Unix(secs, 0).UTC()
	dst = t.AppendFormat(dst, "2006-01-02 15:04:05")
	if digits > 0 {
		dst = append(dst, '.')
		var tmp [9]byte
		for i := digits - 1; i >= 0; i-- {
			tmp[i] = byte('0' + frac%10)
			frac /= 10
		}
		dst = append(dst, tmp[:digits]...)
	}
	return dst
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
