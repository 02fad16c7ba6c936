package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// INTERVAL values: arrow.MonthDayNanoInterval (row form), so that
// INTERVAL '1' MONTH, '30' DAY and '720' HOUR stay three different values
// as in PostgreSQL and DuckDB: a month is as long as the month it is added
// to, a day is a calendar day. Only comparison normalises (30 days = 1
// month, 24 hours = 1 day, as PostgreSQL's interval_cmp does), so '1 month'
// = '30 days' is TRUE while adding them to 2024-01-31 gives different dates.

// IntervalType is the type of an INTERVAL.
var IntervalType arrow.DataType = arrow.FixedWidthTypes.MonthDayNanoInterval

type mdn = arrow.MonthDayNanoInterval

const nsPerDay = int64(86400e9)

func isInterval(t arrow.DataType) bool { return t.ID() == arrow.INTERVAL_MONTH_DAY_NANO }

// intervalCmp orders intervals as PostgreSQL's interval_cmp (see
// exec.IntervalKey: 30 days = 1 month, 24 hours = 1 day).
func intervalCmp(a, b mdn) int { return exec.CompareIntervals(a, b) }

// intervalUnits are the units an INTERVAL literal and interval text may
// name (singular, plural and DuckDB's abbreviations), with what one of
// them is.
var intervalUnits = map[string]mdn{}

func init() {
	for names, v := range map[string]mdn{
		"millennium millennia millenniums millenium mil mils": {Months: 12000},
		"century centuries cent c":                            {Months: 1200},
		"decade decades dec decs":                             {Months: 120},
		"year years yr yrs y":                                 {Months: 12},
		"quarter quarters":                                    {Months: 3},
		"month months mon mons":                               {Months: 1},
		"week weeks w":                                        {Days: 7},
		"day days d":                                          {Days: 1},
		"hour hours hr hrs h":                                 {Nanoseconds: 3600e9},
		"minute minutes min mins m":                           {Nanoseconds: 60e9},
		"second seconds sec secs s":                           {Nanoseconds: 1e9},
		"millisecond milliseconds ms msec msecs":              {Nanoseconds: 1e6},
		"microsecond microseconds us usec usecs":              {Nanoseconds: 1e3},
		"nanosecond nanoseconds ns":                           {Nanoseconds: 1},
	} {
		for _, n := range strings.Fields(names) {
			intervalUnits[n] = v
		}
	}
}

// IntervalOf is the interval of value units of unit (INTERVAL '1.5' DAY):
// the binder's helper for INTERVAL 'n' UNIT literals. A fraction cascades
// to the next smaller part as PostgreSQL does (1.5 months = 1 month 15
// days, 1.5 days = 1 day 12:00:00).
func IntervalOf(value, unit string) (arrow.MonthDayNanoInterval, error) {
	u, ok := intervalUnits[strings.ToLower(strings.TrimSpace(unit))]
	if !ok {
		return mdn{}, fmt.Errorf("INTERVAL '%s' %s: unknown unit", value, unit)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return mdn{}, fmt.Errorf("INTERVAL '%s' %s: the value is not a number", value, unit)
	}
	v, ok := scaleInterval(u, f, false)
	if !ok {
		return mdn{}, fmt.Errorf("INTERVAL '%s' %s is out of range", value, unit)
	}
	return v, nil
}

// ParseInterval reads interval text: what the formatter writes ('1 year 2
// months 3 days 04:05:06.5', '-1 day -01:00:00') and PostgreSQL's verbose
// input ('3 days 4 hours', '1.5 hours', '3days'), with the units and
// abbreviations of IntervalOf.
func ParseInterval(text string) (arrow.MonthDayNanoInterval, error) {
	bad := func() (mdn, error) { return mdn{}, fmt.Errorf("invalid INTERVAL value '%s'", text) }
	fields := strings.Fields(strings.ToLower(text))
	if len(fields) == 0 {
		return bad()
	}
	var out mdn
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			ns, ok := parseClock(f)
			if !ok {
				return bad()
			}
			var ok2 bool
			if out.Nanoseconds, ok2 = addI64(out.Nanoseconds, ns); !ok2 {
				return bad()
			}
			continue
		}
		num, unit := f, ""
		if j := strings.IndexFunc(f, func(r rune) bool { return r >= 'a' && r <= 'z' }); j > 0 {
			num, unit = f[:j], f[j:] // '3days'
		} else if i+1 < len(fields) {
			i++
			unit = fields[i]
		}
		v, err := IntervalOf(num, unit)
		if err != nil {
			return bad()
		}
		var ok bool
		if out, ok = addIntervals(out, v); !ok {
			return bad()
		}
	}
	return out, nil
}

// parseClock reads [-]H+:MM[:SS[.fffffffff]] as nanoseconds.
func parseClock(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || m > 59 || h > math.MaxInt64/int64(3600e9)-1 {
		return 0, false
	}
	ns := h*3600e9 + m*60e9
	if len(parts) == 3 {
		sec, frac, _ := strings.Cut(parts[2], ".")
		sv, err := strconv.ParseInt(sec, 10, 64)
		if err != nil || sv > 59 || len(frac) > 9 {
			return 0, false
		}
		ns += sv * 1e9
		if frac != "" {
			fv, err := strconv.ParseInt(frac, 10, 64)
			if err != nil {
				return 0, false
			}
			ns += fv * pow10Int[9-len(frac)]
		}
	}
	if neg {
		ns = -ns
	}
	return ns, true
}

func addI64(a, b int64) (int64, bool) {
	r := a + b
	return r, (a^r)&(b^r) >= 0
}

func addI32(a, b int32) (int32, bool) {
	r := int64(a) + int64(b)
	return int32(r), r == int64(int32(r))
}

func addIntervals(a, b mdn) (mdn, bool) {
	m, ok1 := addI32(a.Months, b.Months)
	d, ok2 := addI32(a.Days, b.Days)
	n, ok3 := addI64(a.Nanoseconds, b.Nanoseconds)
	return mdn{Months: m, Days: d, Nanoseconds: n}, ok1 && ok2 && ok3
}

func negInterval(a mdn) (mdn, bool) {
	ok := a.Months != math.MinInt32 && a.Days != math.MinInt32 && a.Nanoseconds != math.MinInt64
	return mdn{Months: -a.Months, Days: -a.Days, Nanoseconds: -a.Nanoseconds}, ok
}

// mulIntervalInt multiplies every part by k, exactly.
func mulIntervalInt(a mdn, k int64) (mdn, bool) {
	m, o1 := mulOvf(int64(a.Months), k)
	d, o2 := mulOvf(int64(a.Days), k)
	n, o3 := mulOvf(a.Nanoseconds, k)
	ok := !o1 && !o2 && !o3 && m == int64(int32(m)) && d == int64(int32(d))
	return mdn{Months: int32(m), Days: int32(d), Nanoseconds: n}, ok
}

// scaleInterval multiplies (or divides) by a fraction as PostgreSQL's
// interval_mul and interval_div do: each part is scaled and truncated, the
// fraction of the months cascades into days (30 a month) and that of the
// days into the time, rounded to the microsecond on the way.
func scaleInterval(a mdn, f float64, divide bool) (mdn, bool) {
	sc := func(x float64) float64 {
		if divide {
			return x / f
		}
		return x * f
	}
	tsRound := func(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }
	mf := sc(float64(a.Months))
	df := sc(float64(a.Days))
	if math.IsNaN(mf) || math.IsNaN(df) || math.Abs(mf) > math.MaxInt32 || math.Abs(df) > math.MaxInt32 {
		return mdn{}, false
	}
	months, days := int32(mf), int32(df)
	monthRemDays := tsRound((mf - float64(months)) * 30)
	secRem := tsRound((df - float64(days) + monthRemDays - math.Trunc(monthRemDays)) * 86400)
	dd := int64(days)
	if math.Abs(secRem) >= 86400 {
		whole := math.Trunc(secRem / 86400)
		dd += int64(whole)
		secRem -= whole * 86400
	}
	dd += int64(monthRemDays)
	ns := math.RoundToEven(sc(float64(a.Nanoseconds)) + secRem*1e9)
	if dd != int64(int32(dd)) || math.IsNaN(ns) || math.Abs(ns) >= math.MaxInt64 {
		return mdn{}, false
	}
	return mdn{Months: months, Days: int32(dd), Nanoseconds: int64(ns)}, true
}

// addMonths moves a date by months, clamping the day to the end of the
// month it lands in (2024-01-31 + 1 month = 2024-02-29).
func addMonths(days int64, months int32) int64 {
	if months == 0 {
		return days
	}
	y, m, d := civilFromDays(days)
	t := y*12 + int64(m-1) + int64(months)
	ny := floorDiv(t, 12)
	nm := int(t-ny*12) + 1
	return daysFromCivil(ny, nm, min(d, daysInMonth(ny, nm)))
}

// shiftTimestamp is v (a timestamp of unit u) plus iv: months first (on
// the calendar, clamped), then days, then the time, as PostgreSQL applies
// them. A part of the time finer than u is floored away. ok is false when
// the result does not fit.
func shiftTimestamp(v int64, u arrow.TimeUnit, iv mdn) (int64, bool) {
	ups := unitsPerSecond(u)
	perDay := ups * 86400
	days := floorDiv(v, perDay)
	tod := v - days*perDay
	days = addMonths(days, iv.Months) + int64(iv.Days)
	base, o := mulOvf(days, perDay)
	if o {
		return 0, false
	}
	r, ok := addI64(base, tod)
	if !ok {
		return 0, false
	}
	return addI64(r, floorDiv(iv.Nanoseconds, 1e9/ups))
}

// diffTimestamps is a - b (both of unit u) as an INTERVAL of days and
// time, the time carrying the sign of the whole (PostgreSQL's
// justify_hours): 63 days 15:00:00, -1 days -02:00:00.
func diffTimestamps(a, b int64, u arrow.TimeUnit) (mdn, bool) {
	d, ok := addI64(a, -b)
	if !ok || b == math.MinInt64 {
		return mdn{}, false
	}
	ups := unitsPerSecond(u)
	perDay := ups * 86400
	days, rem := d/perDay, d%perDay
	if days != int64(int32(days)) {
		return mdn{}, false
	}
	return mdn{Days: int32(days), Nanoseconds: rem * (1e9 / ups)}, true
}
