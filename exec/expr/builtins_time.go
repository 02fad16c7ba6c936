package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date and time built-ins. TIMESTAMP(p) is a zone-less local date-time (as
// Flink's TIMESTAMP); results are computed in the proleptic Gregorian
// calendar.
//
//	year(t), quarter(t), month(t), dayofmonth(t), dayofyear(t),
//	dayofweek(t) (1 = Sunday .. 7 = Saturday), week(t) (ISO week)
//	                                 BIGINT; t is TIMESTAMP or DATE
//	hour(ts), minute(ts), second(ts) BIGINT; ts is TIMESTAMP
//	extract / date_part(field, t)    see builtins_extract.go
//	date_format(ts, fmt)             VARCHAR in a Java SimpleDateFormat
//	                                 pattern (see compileDateFormat)
//	ts + INTERVAL, ts - INTERVAL,    TIMESTAMP(p) of ts's precision; the
//	INTERVAL + ts                    interval must be a whole number of
//	                                 units of p (else a planning error);
//	                                 overflow is an error
//
// INTERVAL: the dialect layer rewrites INTERVAL '4' SECOND into
// __clink_interval('4', 'SECOND'), which is a constant of type INTERVAL,
// stored as an Arrow DURATION in nanoseconds (row form arrow.Duration).
// Day-time intervals only (MILLISECOND, SECOND, MINUTE, HOUR, DAY), which is
// what the dialect accepts; a DURATION, not MonthDayNano, because every
// such interval is a fixed length and adds to a timestamp by one integer
// addition.
func init() {
	tmp := p(kTemporal)
	ts := p(kTimestamp)
	parts := []struct {
		name, desc string
		args       param
	}{
		{"year", "the year", tmp}, {"quarter", "the quarter (1-4)", tmp}, {"month", "the month (1-12)", tmp},
		{"dayofmonth", "the day of the month (1-31)", tmp}, {"dayofyear", "the day of the year (1-366)", tmp},
		{"dayofweek", "the day of the week (1 = Sunday)", tmp}, {"week", "the ISO week of the year (1-53)", tmp},
		{"hour", "the hour (0-23)", ts}, {"minute", "the minute (0-59)", ts}, {"second", "the second (0-59)", ts},
	}
	for _, pt := range parts {
		unit := pt.name
		mustAdd(&funcDef{name: pt.name, desc: pt.desc + " of a date-time, as BIGINT",
			sigs: []sig{sg("BIGINT", pt.args)}, rule: fixed(tInt64),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				return buildPart(name, partOf[unit], args[0], t)
			}})
	}
	mustAdd(&funcDef{name: "date_format", desc: "format a timestamp with a Java SimpleDateFormat pattern",
		sigs: []sig{sg("VARCHAR", ts, p(kString))}, rule: fixed(tString), build: buildDateFormat})
	mustAdd(&funcDef{name: "__clink_interval", hidden: true, desc: "an INTERVAL literal",
		sigs: []sig{sg("INTERVAL", p(kString), p(kString))}, rule: fixed(IntervalType), build: buildInterval})
}

type part uint8

const (
	pYear part = iota
	pQuarter
	pMonth
	pWeek
	pDay
	pDoy
	pDow
	pHour // parts from here on need a time of day
	pMinute
	pSecond
	pMilli
	pMicro
)

var partOf = map[string]part{
	"year": pYear, "quarter": pQuarter, "month": pMonth, "week": pWeek, "day": pDay, "dayofmonth": pDay,
	"doy": pDoy, "dayofyear": pDoy, "dow": pDow, "dayofweek": pDow, "hour": pHour, "minute": pMinute,
	"second": pSecond, "millisecond": pMilli, "microsecond": pMicro,
}

// civil splits a timestamp into days since the epoch and the nanoseconds
// into the day.
func civil(v int64, u arrow.TimeUnit) (days, nanos int64) {
	ups := unitsPerSecond(u)
	secs := floorDiv(v, ups)
	sub := v - secs*ups
	days = floorDiv(secs, 86400)
	return days, (secs-days*86400)*1e9 + sub*(1e9/ups)
}

func dateField(k part, days int64) int64 {
	y, m, d := civilFromDays(days)
	switch k {
	case pYear:
		return y
	case pQuarter:
		return int64(m-1)/3 + 1
	case pMonth:
		return int64(m)
	case pDay:
		return int64(d)
	case pDoy:
		return days - daysFromCivil(y, 1, 1) + 1
	case pDow:
		return ((days+4)%7+7)%7 + 1 // 1970-01-01 was a Thursday (5)
	case pWeek:
		_, w := time.Date(int(y), time.Month(m), d, 0, 0, 0, 0, time.UTC).ISOWeek()
		return int64(w)
	}
	return 0
}

func timeField(k part, nanos int64) int64 {
	switch k {
	case pHour:
		return nanos / 3600e9
	case pMinute:
		return nanos / 60e9 % 60
	case pSecond:
		return nanos / 1e9 % 60
	case pMilli:
		return nanos / 1e6 % 60000 // Flink: seconds and fraction, in ms
	case pMicro:
		return nanos / 1e3 % 60000000
	}
	return 0
}

func buildPart(name string, k part, x Expr, t arrow.DataType) (Expr, error) {
	switch xt := x.Type().(type) {
	case *arrow.TimestampType:
		u := xt.Unit
		row, col := kernel1(func(v arrow.Timestamp) (int64, bool, error) {
			days, nanos := civil(int64(v), u)
			if k >= pHour {
				return timeField(k, nanos), true, nil
			}
			return dateField(k, days), true, nil
		})
		return newCall(name, []Expr{x}, t, row, col)
	case *arrow.Date32Type:
		row, col := kernel1(func(v arrow.Date32) (int64, bool, error) { return dateField(k, int64(v)), true, nil })
		return newCall(name, []Expr{x}, t, row, col)
	}
	if isNull(x.Type()) {
		return Lit(nil, t), nil
	}
	return nil, fmt.Errorf("%s: cannot apply to %s", name, typeName(x.Type()))
}

func buildInterval(_ string, args []Expr, _ arrow.DataType) (Expr, error) {
	v, _ := args[0].(*Literal)
	u, _ := args[1].(*Literal)
	if v == nil || u == nil || v.v == nil || u.v == nil {
		return nil, fmt.Errorf("INTERVAL needs a constant value and unit")
	}
	text, unit := v.v.(string), strings.ToUpper(u.v.(string))
	iv, err := IntervalOf(text, unit)
	if err != nil {
		return nil, err
	}
	return &Literal{v: iv, t: IntervalType, text: fmt.Sprintf("INTERVAL '%s' %s", text, unit)}, nil
}
