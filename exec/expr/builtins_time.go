package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date and time built-ins. TIMESTAMP(p) is a zone-less local date-time (as
// Flink's TIMESTAMP); results are computed in the proleptic Gregorian
// calendar.
//
//	year(t), quarter(t), month(t), dayofmonth(t), dayofyear(t),
//	dayofweek(t) (1 = Sunday .. 7 = Saturday), week(t) (ISO week)
//	                                 BIGINT; t is TIMESTAMP or DATE
//	hour(ts), minute(ts), second(ts) BIGINT; ts is TIMESTAMP or TIME
//	extract / date_part(field, t)    see builtins_extract.go
//	date_format(ts, fmt)             VARCHAR in a Java SimpleDateFormat
//	                                 pattern (see compileDateFormat)
//	ts + INTERVAL, ts - INTERVAL,    TIMESTAMP(p) of ts's precision; the
//	INTERVAL + ts                    interval must be a whole number of
//	                                 units of p (else a planning error);
//	                                 overflow is an error
//
// INTERVAL: the old dialect layer rewrites INTERVAL '4' SECOND into
// __clink_interval('4', 'SECOND'), a constant of type INTERVAL
// (interval.go: months, days and nanoseconds; IntervalOf reads the unit).
func init() {
	tmp := p(kTemporal)
	ts := p(kTimestamp)
	clock := p(kClock)
	parts := []struct {
		name, desc string
		args       param
	}{
		{"year", "the year", tmp}, {"quarter", "the quarter (1-4)", tmp}, {"month", "the month (1-12)", tmp},
		{"dayofmonth", "the day of the month (1-31)", tmp}, {"dayofyear", "the day of the year (1-366)", tmp},
		{"dayofweek", "the day of the week (1 = Sunday)", tmp}, {"week", "the ISO week of the year (1-53)", tmp},
		{"hour", "the hour (0-23)", clock}, {"minute", "the minute (0-59)", clock}, {"second", "the second (0-59)", clock},
	}
	for _, pt := range parts {
		f := fieldOf[pt.name]
		mustAdd(&funcDef{name: pt.name, desc: pt.desc + " of a date-time, as BIGINT",
			sigs: []sig{sg("BIGINT", pt.args)}, rule: fixed(tInt64),
			build: func(name string, args []Expr, t arrow.DataType) (Expr, error) {
				return buildPart(name, f, args[0], t)
			}})
	}
	mustAdd(&funcDef{name: "date_format", desc: "format a timestamp with a Java SimpleDateFormat pattern",
		sigs: []sig{sg("VARCHAR", ts, p(kString))}, rule: fixed(tString), build: buildDateFormat})
	mustAdd(&funcDef{name: "__clink_interval", hidden: true, desc: "an INTERVAL literal",
		sigs: []sig{sg("INTERVAL", p(kString), p(kString))}, rule: fixed(IntervalType), build: buildInterval})
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

// buildPart is one of the field functions (year(t), hour(ts), ...):
// extract's field, except dayofweek, which counts 1 = Sunday as Flink
// where extract's dow counts 0.
func buildPart(name string, f field, x Expr, t arrow.DataType) (Expr, error) {
	if isNull(x.Type()) {
		return Lit(nil, t), nil
	}
	var plus int64
	if name == "dayofweek" {
		plus = 1
	}
	return civilField(name, f, x, t, plus)
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
