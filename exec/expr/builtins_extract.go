package expr

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// EXTRACT, date_trunc and the statement clock.
//
//	extract(field, x), date_part(field, x)
//	    x is DATE, TIMESTAMP(p), TIME(p) or INTERVAL; field a constant string. The
//	    binder maps EXTRACT(field FROM x) onto extract('field', x). Types and
//	    meanings are DuckDB's (its date part table, duckdb.org/docs
//	    sql/functions/datepart): BIGINT for every field but epoch, which is
//	    DOUBLE seconds with the fraction. second is the whole seconds (44 for
//	    11:59:44.123456), millisecond and microsecond count from the start of
//	    the minute (44123 and 44123456), as DuckDB; PostgreSQL's
//	    EXTRACT(SECOND) would be numeric 44.123456 instead. Fields: year,
//	    quarter, month, week (ISO), day, dow (0 = Sunday), isodow (1 =
//	    Monday), doy, hour, minute, second, millisecond, microsecond, epoch,
//	    decade, century, millennium, isoyear, with DuckDB's synonyms (yr,
//	    mon, dayofmonth, dayofweek, weekday, dayofyear, ...). A DATE has no
//	    time-of-day fields (a planning error) but has an epoch; an INTERVAL
//	    has year..day, the time fields and epoch (a month counts 30 days, as
//	    DuckDB), not the calendar ones (dow, doy, week, isoyear). A TIME
//	    has the time fields (hour .. microsecond) and epoch, the seconds
//	    since midnight, as DuckDB.
//	date_trunc(unit, x)
//	    TIMESTAMP(p) for a TIMESTAMP(p), TIMESTAMP(6) for a DATE (DuckDB
//	    since 1.5 and PostgreSQL: always a timestamp); units millennium,
//	    century, decade (DuckDB: 2021 -> 2000-01-01 for century), year,
//	    quarter, month, week (the ISO week's Monday), day, hour, minute,
//	    second, millisecond, microsecond.
//	current_date                  DATE
//	current_timestamp, now(),     TIMESTAMP(6)
//	localtimestamp
//	    One reading of the clock per statement: see WithStatementTime. clink
//	    timestamps carry no zone and there is no session zone, so all three
//	    read the UTC wall clock.
func init() {
	mustAdd(&funcDef{name: "extract", aliases: []string{"date_part", "datepart"},
		desc: "a field of a date, timestamp or interval (EXTRACT(field FROM x)); BIGINT, epoch DOUBLE",
		sigs: []sig{sg("BIGINT (epoch: DOUBLE)", p(kString), p(kAny))}, optRule: extractType, build: buildExtract})
	mustAdd(&funcDef{name: "date_trunc", desc: "a date or timestamp truncated to a unit, as TIMESTAMP",
		sigs: []sig{sg("TIMESTAMP", p(kString), p(kTemporal))}, optRule: truncType, build: buildDateTrunc})
	clock := func(name, desc string, t arrow.DataType, aliases ...string) {
		mustAdd(&funcDef{name: name, aliases: aliases, desc: desc, sigs: []sig{{ret: typeName(t)}}, rule: fixed(t),
			now: func(name string, now time.Time) Expr {
				now = now.UTC()
				days := floorDiv(now.Unix(), 86400)
				if isDate(t) {
					return &Literal{v: arrow.Date32(days), t: t, text: name}
				}
				return &Literal{v: arrow.Timestamp(now.UnixMicro()), t: t, text: name}
			}})
	}
	clock("current_date", "today's date (one reading per statement)", tDate32)
	clock("current_timestamp", "the current date and time (one reading per statement)", tTimestampUs, "now")
	clock("localtimestamp", "the current date and time (one reading per statement)", tTimestampUs)
}

type stmtTimeKey struct{}

// WithStatementTime returns ctx carrying t as the statement's clock: the
// engine reads the clock once per statement and binds it with
// NewFuncContext, so current_timestamp, now() and current_date agree
// within a statement however often they are written (as PostgreSQL's
// transaction-start time) and are constants the planner can fold.
func WithStatementTime(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, stmtTimeKey{}, t)
}

// StatementTime is the statement clock carried by ctx, if any.
func StatementTime(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(stmtTimeKey{}).(time.Time)
	return t, ok
}

type field uint8

const (
	fYear field = iota
	fQuarter
	fMonth
	fDay
	fDecade
	fCentury
	fMillennium
	fHour // the time fields (and epoch) from here; an interval has these
	fMinute
	fSecond
	fMilli
	fMicro
	fEpoch
	fWeek // the calendar fields from here: not of an interval
	fDow
	fIsoDow
	fDoy
	fIsoYear
)

var fieldOf = map[string]field{}

func init() {
	for names, f := range map[string]field{
		"year years yr yrs y":                                     fYear,
		"quarter quarters":                                        fQuarter,
		"month months mon mons":                                   fMonth,
		"day days d dayofmonth":                                   fDay,
		"decade decades dec decs":                                 fDecade,
		"century centuries cent c":                                fCentury,
		"millennium millennia millenniums millenium mil mils":     fMillennium,
		"hour hours hr hrs h":                                     fHour,
		"minute minutes min mins m":                               fMinute,
		"second seconds sec secs s":                               fSecond,
		"millisecond milliseconds ms msec msecs msecond mseconds": fMilli,
		"microsecond microseconds us usec usecs usecond useconds": fMicro,
		"epoch":                   fEpoch,
		"week weeks w weekofyear": fWeek,
		"dow dayofweek weekday":   fDow,
		"isodow":                  fIsoDow,
		"doy dayofyear":           fDoy,
		"isoyear":                 fIsoYear,
	} {
		for _, n := range strings.Fields(names) {
			fieldOf[n] = f
		}
	}
}

// constField reads the constant field / unit argument.
func constField(name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok || s == "" {
		return "", fmt.Errorf("the field must be a constant string such as 'year'")
	}
	return strings.ToLower(strings.TrimSpace(s)), nil
}

func extractField(name string, ts []arrow.DataType, consts []any) (field, error) {
	s, err := constField(name, consts[0])
	if err != nil {
		return 0, err
	}
	f, ok := fieldOf[s]
	if !ok {
		return 0, fmt.Errorf("unknown field %s", sqlLiteral(consts[0], tString))
	}
	t := ts[1]
	switch {
	case isNull(t), isTimestamp(t):
	case isDate(t):
		if f >= fHour && f < fEpoch {
			return 0, fmt.Errorf("a DATE has no %s", strings.ToUpper(s))
		}
	case isInterval(t):
		if f >= fWeek {
			return 0, fmt.Errorf("an INTERVAL has no %s", strings.ToUpper(s))
		}
	case isTime(t):
		if f < fHour || f > fEpoch {
			return 0, fmt.Errorf("a TIME has no %s", strings.ToUpper(s))
		}
	default:
		return 0, fmt.Errorf("cannot extract from %s", typeName(t))
	}
	return f, nil
}

func extractType(ts []arrow.DataType, consts []any) (arrow.DataType, error) {
	f, err := extractField("extract", ts, consts)
	if err != nil {
		return nil, err
	}
	if f == fEpoch {
		return tDouble, nil
	}
	return tInt64, nil
}

func buildExtract(name string, args []Expr, t arrow.DataType) (Expr, error) {
	f, err := extractField(name, []arrow.DataType{args[0].Type(), args[1].Type()}, []any{args[0].(*Literal).v})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	x := args[1]
	text := fmt.Sprintf("%s(%s, %s)", name, args[0], x)
	var e Expr
	switch xt := x.Type().(type) {
	case *arrow.NullType:
		return Lit(nil, t), nil
	case *arrow.TimestampType:
		u := xt.Unit
		if f == fEpoch {
			ups := float64(unitsPerSecond(u))
			row, col := kernel1(func(v arrow.Timestamp) (float64, bool, error) { return float64(v) / ups, true, nil })
			e, err = newCall(name, []Expr{x}, t, row, col)
			break
		}
		e, err = civilField(name, f, x, t, 0)
	case *arrow.Date32Type:
		if f == fEpoch {
			row, col := kernel1(func(v arrow.Date32) (float64, bool, error) { return float64(int64(v) * 86400), true, nil })
			e, err = newCall(name, []Expr{x}, t, row, col)
			break
		}
		e, err = civilField(name, f, x, t, 0)
	case *arrow.Time32Type, *arrow.Time64Type:
		if f == fEpoch {
			ups := float64(unitsPerSecond(timeUnit(xt)))
			row, col := kernel1(func(v arrow.Time64) (float64, bool, error) { return float64(v) / ups, true, nil })
			e, err = newCall(name, []Expr{x}, t, row, col)
			break
		}
		e, err = civilField(name, f, x, t, 0)
	case *arrow.MonthDayNanoIntervalType:
		if f == fEpoch {
			row, col := kernel1(func(v mdn) (float64, bool, error) {
				return float64(int64(v.Months)*30+int64(v.Days))*86400 + float64(v.Nanoseconds)/1e9, true, nil
			})
			e, err = newCall(name, []Expr{x}, t, row, col)
			break
		}
		row, col := kernel1(func(v mdn) (int64, bool, error) { return extractInterval(f, v), true, nil })
		e, err = newCall(name, []Expr{x}, t, row, col)
	}
	return setText(e, text), err
}

// civilField is field f (plus a constant) of a TIMESTAMP, DATE or TIME x
// (a time of day reads as one of 1970-01-01).
func civilField(name string, f field, x Expr, t arrow.DataType, plus int64) (Expr, error) {
	switch xt := x.Type().(type) {
	case *arrow.Time32Type, *arrow.Time64Type:
		per := 1e9 / unitsPerSecond(timeUnit(xt))
		row, col := kernel1(func(v arrow.Time64) (int64, bool, error) { return extractCivil(f, 0, int64(v)*per) + plus, true, nil })
		return newCall(name, []Expr{x}, t, row, col)
	case *arrow.TimestampType:
		u := xt.Unit
		row, col := kernel1(func(v arrow.Timestamp) (int64, bool, error) {
			days, nanos := civil(int64(v), u)
			return extractCivil(f, days, nanos) + plus, true, nil
		})
		return newCall(name, []Expr{x}, t, row, col)
	case *arrow.Date32Type:
		row, col := kernel1(func(v arrow.Date32) (int64, bool, error) { return extractCivil(f, int64(v), 0) + plus, true, nil })
		return newCall(name, []Expr{x}, t, row, col)
	}
	return nil, fmt.Errorf("%s: cannot apply to %s", name, typeName(x.Type()))
}

// extractCivil is field f of the date-time days (since 1970-01-01) plus
// nanos into the day.
func extractCivil(f field, days, nanos int64) int64 {
	switch f {
	case fHour:
		return nanos / 3600e9
	case fMinute:
		return nanos / 60e9 % 60
	case fSecond:
		return nanos / 1e9 % 60
	case fMilli:
		return nanos / 1e6 % 60000
	case fMicro:
		return nanos / 1e3 % 60000000
	case fDow:
		return ((days+4)%7 + 7) % 7 // 1970-01-01 was a Thursday (4)
	case fIsoDow:
		return ((days+3)%7+7)%7 + 1
	}
	y, m, d := civilFromDays(days)
	switch f {
	case fYear:
		return y
	case fQuarter:
		return int64(m-1)/3 + 1
	case fMonth:
		return int64(m)
	case fDay:
		return int64(d)
	case fDecade:
		return y / 10
	case fCentury:
		if y > 0 {
			return (y-1)/100 + 1
		}
		return y/100 - 1
	case fMillennium:
		if y > 0 {
			return (y-1)/1000 + 1
		}
		return y/1000 - 1
	case fDoy:
		return days - daysFromCivil(y, 1, 1) + 1
	case fWeek, fIsoYear:
		iy, w := time.Date(int(y), time.Month(m), d, 0, 0, 0, 0, time.UTC).ISOWeek()
		if f == fWeek {
			return int64(w)
		}
		return int64(iy)
	}
	return 0
}

// extractInterval is field f of an interval: years and months from the
// months, days as given, the time fields from the nanoseconds (signs kept,
// truncated toward zero as PostgreSQL and DuckDB).
func extractInterval(f field, v mdn) int64 {
	mo, ns := int64(v.Months), v.Nanoseconds
	switch f {
	case fYear:
		return mo / 12
	case fQuarter:
		return mo%12/3 + 1
	case fMonth:
		return mo % 12
	case fDay:
		return int64(v.Days)
	case fDecade:
		return mo / 120
	case fCentury:
		return mo / 1200
	case fMillennium:
		return mo / 12000
	case fHour:
		return ns / 3600e9
	case fMinute:
		return ns / 60e9 % 60
	case fSecond:
		return ns / 1e9 % 60
	case fMilli:
		return ns / 1e6 % 60000
	case fMicro:
		return ns / 1e3 % 60000000
	}
	return 0
}

type truncUnit uint8

const (
	tuMillennium truncUnit = iota
	tuCentury
	tuDecade
	tuYear
	tuQuarter
	tuMonth
	tuWeek
	tuDay // the time-of-day units from here
	tuHour
	tuMinute
	tuSecond
	tuMilli
	tuMicro
)

var truncOf = map[field]truncUnit{
	fMillennium: tuMillennium, fCentury: tuCentury, fDecade: tuDecade, fYear: tuYear, fQuarter: tuQuarter,
	fMonth: tuMonth, fWeek: tuWeek, fDay: tuDay, fHour: tuHour, fMinute: tuMinute, fSecond: tuSecond,
	fMilli: tuMilli, fMicro: tuMicro,
}

func truncUnitOf(v any) (truncUnit, error) {
	s, err := constField("date_trunc", v)
	if err != nil {
		return 0, err
	}
	if f, ok := fieldOf[s]; ok {
		if u, ok := truncOf[f]; ok {
			return u, nil
		}
	}
	return 0, fmt.Errorf("unknown unit %s", sqlLiteral(v, tString))
}

func truncType(ts []arrow.DataType, consts []any) (arrow.DataType, error) {
	if _, err := truncUnitOf(consts[0]); err != nil {
		return nil, err
	}
	if t, ok := ts[1].(*arrow.TimestampType); ok {
		return t, nil
	}
	return tTimestampUs, nil
}

func buildDateTrunc(name string, args []Expr, t arrow.DataType) (Expr, error) {
	tu, _ := truncUnitOf(args[0].(*Literal).v)
	x, err := Coerce(args[1], t)
	if err != nil {
		return nil, err
	}
	u := t.(*arrow.TimestampType).Unit
	ups := unitsPerSecond(u)
	perDay := ups * 86400
	// Units of the day floor the time of day to a whole step.
	step := map[truncUnit]int64{tuDay: perDay, tuHour: 3600 * ups, tuMinute: 60 * ups, tuSecond: ups,
		tuMilli: max(ups/1e3, 1), tuMicro: max(ups/1e6, 1)}[tu]
	row, col := kernel1(func(v arrow.Timestamp) (arrow.Timestamp, bool, error) {
		days := floorDiv(int64(v), perDay)
		tod := int64(v) - days*perDay
		if tu >= tuDay {
			return arrow.Timestamp(days*perDay + tod/step*step), true, nil
		}
		return arrow.Timestamp(truncDays(tu, days) * perDay), true, nil
	})
	e, err := newCall(name, []Expr{x}, t, row, col)
	return setText(e, fmt.Sprintf("%s(%s, %s)", name, args[0], args[1])), err
}

// truncDays is the first day of the unit (year .. week) holding days.
func truncDays(tu truncUnit, days int64) int64 {
	if tu == tuWeek {
		return days - ((days+3)%7+7)%7 // back to Monday
	}
	y, m, _ := civilFromDays(days)
	switch tu {
	case tuMillennium:
		y = y / 1000 * 1000
		m = 1
	case tuCentury:
		y = y / 100 * 100
		m = 1
	case tuDecade:
		y = y / 10 * 10
		m = 1
	case tuYear:
		m = 1
	case tuQuarter:
		m = (m-1)/3*3 + 1
	}
	return daysFromCivil(y, m, 1)
}
