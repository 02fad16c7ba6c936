package expr

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date, time and interval arithmetic (PostgreSQL's operators; DuckDB's
// result types where they differ):
//
//	DATE ± INTERVAL            TIMESTAMP(6): the date at midnight, shifted
//	TIMESTAMP(p) ± INTERVAL    TIMESTAMP(p): months first (clamped to the end
//	INTERVAL + DATE|TIMESTAMP  of the month: 2024-01-31 + 1 month =
//	                           2024-02-29), then days, then the time; a part
//	                           of the time finer than p is floored away (a
//	                           constant one is refused when planning)
//	DATE ± INT|BIGINT          DATE (days)
//	INT|BIGINT + DATE          DATE
//	DATE - DATE                BIGINT days (DuckDB; PostgreSQL: integer)
//	TIMESTAMP - TIMESTAMP      INTERVAL of days and time (63 days 15:00:00);
//	(a DATE meets a TIMESTAMP  the finer unit when they differ
//	as its midnight)
//	INTERVAL ± INTERVAL        INTERVAL, part by part
//	INTERVAL * number,         INTERVAL: integers scale each part exactly;
//	number * INTERVAL,         other numbers as PostgreSQL (fractions of
//	INTERVAL / number          months cascade into days at 30 a month, of
//	                           days into the time at 24 hours); division
//	                           by zero is NULL, as for numbers
//	- INTERVAL                 INTERVAL
//	TIME(p) ± INTERVAL,        TIME(p): the interval's time part only (its
//	INTERVAL + TIME(p)         months and days are whole days, which leave a
//	                           time of day where it was), wrapping around
//	                           midnight as PostgreSQL (23:00 + 2 hours =
//	                           01:00); a part finer than p is floored away
//	DATE + TIME(p),            TIMESTAMP(p): the date's midnight plus the
//	TIME(p) + DATE             time (DuckDB and PostgreSQL)
//	TIME - TIME                INTERVAL of the time between them, negative
//	                           when the first is earlier (PostgreSQL:
//	                           10:00 - 12:30 = -02:30:00); the finer unit
//
// NULL in, NULL out; a result out of range is an error naming the
// expression.

var tTimestampUs arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond}

func isDate(t arrow.DataType) bool      { return t.ID() == arrow.DATE32 }
func isTimestamp(t arrow.DataType) bool { return t.ID() == arrow.TIMESTAMP }

// newTemporalArith builds + - * / when a DATE, TIMESTAMP or INTERVAL takes
// part; handled is false when none does (plain arithmetic).
func newTemporalArith(op string, l, r Expr) (e Expr, handled bool, err error) {
	lt, rt := l.Type(), r.Type()
	temporal := func(t arrow.DataType) bool { return isTemporal(t) || isInterval(t) || isTime(t) }
	if !temporal(lt) && !temporal(rt) {
		return nil, false, nil
	}
	text := fmt.Sprintf("(%s %s %s)", l, op, r)
	fail := func() (Expr, bool, error) { return nil, true, sqlTypeErr(op, lt, rt) }
	switch op {
	case "+", "-":
		switch {
		case isTime(lt) && (isInterval(rt) || isNull(rt)):
			e, err := newTimeShift(op, l, r, text)
			return e, true, err
		case isInterval(lt) && isTime(rt) && op == "+":
			e, err := newTimeShift(op, r, l, text)
			return e, true, err
		case isDate(lt) && isTime(rt) && op == "+":
			e, err := newDateAtTime(l, r, text)
			return e, true, err
		case isTime(lt) && isDate(rt) && op == "+":
			e, err := newDateAtTime(r, l, text)
			return e, true, err
		case isTime(lt) && isTime(rt) && op == "-":
			e, err := newTimeDiff(l, r, text)
			return e, true, err
		case isTemporal(lt) && (isInterval(rt) || isNull(rt)):
			e, err := newShift(op, l, r, text)
			return e, true, err
		case isInterval(lt) && isTemporal(rt) && op == "+":
			e, err := newShift(op, r, l, text)
			return e, true, err
		case isDate(lt) && (isInt(rt) || (isNull(rt) && op == "+")):
			e, err := newDateDays(op, l, r, text)
			return e, true, err
		case isInt(lt) && isDate(rt) && op == "+":
			e, err := newDateDays(op, r, l, text)
			return e, true, err
		case isDate(lt) && isDate(rt) && op == "-":
			row, col := kernel2(func(a, b arrow.Date32) (int64, bool, error) { return int64(a) - int64(b), true, nil })
			return named(newCall("-", []Expr{l, r}, tInt64, row, col))(text)
		case isTemporal(lt) && isTemporal(rt) && op == "-":
			e, err := newTimestampDiff(l, r, text)
			return e, true, err
		case isInterval(lt) && (isInterval(rt) || isNull(rt)), isNull(lt) && isInterval(rt):
			e, err := newIntervalAdd(op, l, r, text)
			return e, true, err
		}
	case "*":
		switch {
		case isInterval(lt) && (isNumeric(rt) || isNull(rt)):
			e, err := newIntervalScale(l, r, false, text)
			return e, true, err
		case (isNumeric(lt) || isNull(lt)) && isInterval(rt):
			e, err := newIntervalScale(r, l, false, text)
			return e, true, err
		}
	case "/":
		if isInterval(lt) && (isNumeric(rt) || isNull(rt)) {
			e, err := newIntervalScale(l, r, true, text)
			return e, true, err
		}
	}
	return fail()
}

// named sets a call's EXPLAIN text to the operator as written.
func named(e Expr, err error) func(text string) (Expr, bool, error) {
	return func(text string) (Expr, bool, error) {
		if c, ok := e.(*call); ok {
			c.str = func() string { return text }
		}
		return e, true, err
	}
}

func setText(e Expr, text string) Expr {
	if c, ok := e.(*call); ok {
		c.str = func() string { return text }
	}
	return e
}

// newShift is ts ± iv (ts a DATE or TIMESTAMP, iv an INTERVAL or NULL).
func newShift(op string, ts, iv Expr, text string) (Expr, error) {
	out := tTimestampUs
	if t, ok := ts.Type().(*arrow.TimestampType); ok {
		out = t
	}
	if isNull(iv.Type()) {
		return Lit(nil, out), nil
	}
	ts, err := Coerce(ts, out)
	if err != nil {
		return nil, err
	}
	u := out.(*arrow.TimestampType).Unit
	overflow := func() error { return fmt.Errorf("%s overflow in %s", typeName(out), text) }
	if lit, ok := iv.(*Literal); ok {
		if lit.v == nil {
			return Lit(nil, out), nil
		}
		v := lit.v.(mdn)
		if op == "-" {
			var ok bool
			if v, ok = negInterval(v); !ok {
				return nil, fmt.Errorf("INTERVAL overflow in %s", text)
			}
		}
		per := 1e9 / unitsPerSecond(u)
		if v.Nanoseconds%per != 0 {
			return nil, fmt.Errorf("%s: the interval is finer than %s; CAST the timestamp to a finer precision first", text, typeName(out))
		}
		if v.Months == 0 {
			// A fixed length: one checked addition per value.
			delta, o := mulOvf(int64(v.Days), 86400*unitsPerSecond(u))
			delta2, ok := addI64(delta, v.Nanoseconds/per)
			if o || !ok {
				return nil, overflow()
			}
			row, col := kernel1(func(x arrow.Timestamp) (arrow.Timestamp, bool, error) {
				s, ok := addI64(int64(x), delta2)
				if !ok {
					return 0, false, overflow()
				}
				return arrow.Timestamp(s), true, nil
			})
			e, err := newCall(op, []Expr{ts}, out, row, col)
			return setText(e, text), err
		}
		row, col := kernel1(func(x arrow.Timestamp) (arrow.Timestamp, bool, error) {
			s, ok := shiftTimestamp(int64(x), u, v)
			if !ok {
				return 0, false, overflow()
			}
			return arrow.Timestamp(s), true, nil
		})
		e, err := newCall(op, []Expr{ts}, out, row, col)
		return setText(e, text), err
	}
	neg := op == "-"
	row, col := kernel2(func(x arrow.Timestamp, v mdn) (arrow.Timestamp, bool, error) {
		if neg {
			var ok bool
			if v, ok = negInterval(v); !ok {
				return 0, false, overflow()
			}
		}
		s, ok := shiftTimestamp(int64(x), u, v)
		if !ok {
			return 0, false, overflow()
		}
		return arrow.Timestamp(s), true, nil
	})
	e, err := newCall(op, []Expr{ts, iv}, out, row, col)
	return setText(e, text), err
}

// newDateDays is date ± n days.
func newDateDays(op string, d, n Expr, text string) (Expr, error) {
	if isNull(n.Type()) {
		return Lit(nil, tDate32), nil
	}
	n, err := Coerce(n, tInt64)
	if err != nil {
		return nil, err
	}
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	row, col := kernel2(func(x arrow.Date32, k int64) (arrow.Date32, bool, error) {
		if k == math.MinInt64 {
			return 0, false, fmt.Errorf("DATE overflow in %s", text)
		}
		r := int64(x) + sign*k
		if r != int64(int32(r)) {
			return 0, false, fmt.Errorf("DATE overflow in %s", text)
		}
		return arrow.Date32(r), true, nil
	})
	e, err := newCall(op, []Expr{d, n}, tDate32, row, col)
	return setText(e, text), err
}

var tDate32 arrow.DataType = arrow.FixedWidthTypes.Date32

// newTimestampDiff is a - b over two date-times, widened to one unit.
func newTimestampDiff(a, b Expr, text string) (Expr, error) {
	ct, err := CommonType(a.Type(), b.Type())
	if err != nil {
		return nil, err
	}
	if isDate(ct) {
		ct = tTimestampUs
	}
	if a, err = Coerce(a, ct); err != nil {
		return nil, err
	}
	if b, err = Coerce(b, ct); err != nil {
		return nil, err
	}
	u := ct.(*arrow.TimestampType).Unit
	row, col := kernel2(func(x, y arrow.Timestamp) (mdn, bool, error) {
		v, ok := diffTimestamps(int64(x), int64(y), u)
		if !ok {
			return mdn{}, false, fmt.Errorf("INTERVAL overflow in %s", text)
		}
		return v, true, nil
	})
	e, err := newCall("-", []Expr{a, b}, IntervalType, row, col)
	return setText(e, text), err
}

func newIntervalAdd(op string, a, b Expr, text string) (Expr, error) {
	if isNull(a.Type()) || isNull(b.Type()) {
		return Lit(nil, IntervalType), nil
	}
	neg := op == "-"
	row, col := kernel2(func(x, y mdn) (mdn, bool, error) {
		ok := true
		if neg {
			y, ok = negInterval(y)
		}
		r, ok2 := addIntervals(x, y)
		if !ok || !ok2 {
			return mdn{}, false, fmt.Errorf("INTERVAL overflow in %s", text)
		}
		return r, true, nil
	})
	e, err := newCall(op, []Expr{a, b}, IntervalType, row, col)
	return setText(e, text), err
}

// newIntervalScale is iv * k or iv / k.
func newIntervalScale(iv, k Expr, divide bool, text string) (Expr, error) {
	if isNull(k.Type()) {
		return Lit(nil, IntervalType), nil
	}
	op := "*"
	if divide {
		op = "/"
	}
	overflow := func() error { return fmt.Errorf("INTERVAL overflow in %s", text) }
	if isInt(k.Type()) && !divide {
		k, err := Coerce(k, tInt64)
		if err != nil {
			return nil, err
		}
		row, col := kernel2(func(x mdn, n int64) (mdn, bool, error) {
			r, ok := mulIntervalInt(x, n)
			if !ok {
				return mdn{}, false, overflow()
			}
			return r, true, nil
		})
		e, err := newCall(op, []Expr{iv, k}, IntervalType, row, col)
		return setText(e, text), err
	}
	k, err := Coerce(k, tDouble)
	if err != nil {
		return nil, err
	}
	row, col := kernel2(func(x mdn, f float64) (mdn, bool, error) {
		if divide && f == 0 {
			return mdn{}, false, nil // NULL, as x / 0 for numbers
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return mdn{}, false, overflow()
		}
		r, ok := scaleInterval(x, f, divide)
		if !ok {
			return mdn{}, false, overflow()
		}
		return r, true, nil
	})
	e, err := newCall(op, []Expr{iv, k}, IntervalType, row, col)
	return setText(e, text), err
}

// newIntervalNeg is unary minus on an INTERVAL.
func newIntervalNeg(e Expr) (Expr, error) {
	text := fmt.Sprintf("(- %s)", e)
	row, col := kernel1(func(x mdn) (mdn, bool, error) {
		r, ok := negInterval(x)
		if !ok {
			return mdn{}, false, fmt.Errorf("INTERVAL overflow in %s", text)
		}
		return r, true, nil
	})
	out, err := newCall("-", []Expr{e}, IntervalType, row, col)
	return setText(out, text), err
}

// dateBound rewrites date_col op TIMESTAMP-constant into a comparison of
// DATEs, so the column is compared as it is stored (int32 days) instead of
// being widened to a timestamp per row: date_col < DATE '1998-12-01' -
// INTERVAL '90' DAY folds its right side to a TIMESTAMP and then compares
// days. d < T is d <= day(T) when T has a time of day (d stands for its
// midnight), d < day(T) when T is a midnight. ok is false when no such
// rewrite applies (= and <> against a T with a time of day keep the cast).
func dateBound(op cmpOp, d Expr, lit *Literal) (cmpOp, *Literal, bool) {
	tt, ok := lit.t.(*arrow.TimestampType)
	if !ok || lit.v == nil {
		return op, nil, false
	}
	perDay := unitsPerSecond(tt.Unit) * 86400
	v := int64(lit.v.(arrow.Timestamp))
	day := floorDiv(v, perDay)
	if day != int64(int32(day)) {
		return op, nil, false
	}
	bound := &Literal{v: arrow.Date32(day), t: tDate32, text: lit.String()}
	if v == day*perDay {
		return op, bound, true
	}
	switch op {
	case opLt, opLe:
		return opLe, bound, true
	case opGt, opGe:
		return opGt, bound, true
	}
	return op, nil, false
}

// newTimeShift is t ± iv (t a TIME, iv an INTERVAL or NULL): the
// interval's time part moves the time of day around the clock.
func newTimeShift(op string, t, iv Expr, text string) (Expr, error) {
	out := t.Type()
	if isNull(iv.Type()) {
		return Lit(nil, out), nil
	}
	u := timeUnit(out)
	day := unitsPerSecond(u) * 86400
	per := 1e9 / unitsPerSecond(u)
	neg := op == "-"
	// The time part in ticks, reduced modulo a day: no overflow below.
	ticks := func(v mdn) int64 {
		d := floorDiv(v.Nanoseconds, per) % day
		if neg {
			d = -d
		}
		return d
	}
	shift := func(x arrow.Time64, d int64) arrow.Time64 {
		r := (int64(x) + d) % day
		if r < 0 {
			r += day
		}
		return arrow.Time64(r)
	}
	if lit, ok := iv.(*Literal); ok {
		if lit.v == nil {
			return Lit(nil, out), nil
		}
		d := ticks(lit.v.(mdn))
		row, col := kernel1(func(x arrow.Time64) (arrow.Time64, bool, error) { return shift(x, d), true, nil })
		e, err := newCall(op, []Expr{t}, out, row, col)
		return setText(e, text), err
	}
	row, col := kernel2(func(x arrow.Time64, v mdn) (arrow.Time64, bool, error) { return shift(x, ticks(v)), true, nil })
	e, err := newCall(op, []Expr{t, iv}, out, row, col)
	return setText(e, text), err
}

// newDateAtTime is d + t: the TIMESTAMP of the time's precision at time t
// of day d.
func newDateAtTime(d, t Expr, text string) (Expr, error) {
	u := timeUnit(t.Type())
	out := &arrow.TimestampType{Unit: u}
	perDay := unitsPerSecond(u) * 86400
	row, col := kernel2(func(x arrow.Date32, y arrow.Time64) (arrow.Timestamp, bool, error) {
		base, o := mulOvf(int64(x), perDay)
		if o {
			return 0, false, fmt.Errorf("%s overflow in %s", typeName(out), text)
		}
		r, ok := addI64(base, int64(y))
		if !ok {
			return 0, false, fmt.Errorf("%s overflow in %s", typeName(out), text)
		}
		return arrow.Timestamp(r), true, nil
	})
	e, err := newCall("+", []Expr{d, t}, out, row, col)
	return setText(e, text), err
}

// newTimeDiff is a - b over two TIMEs, widened to the finer unit: an
// INTERVAL of time only (less than a day either way).
func newTimeDiff(a, b Expr, text string) (Expr, error) {
	ct, err := CommonType(a.Type(), b.Type())
	if err != nil {
		return nil, err
	}
	if a, err = Coerce(a, ct); err != nil {
		return nil, err
	}
	if b, err = Coerce(b, ct); err != nil {
		return nil, err
	}
	per := 1e9 / unitsPerSecond(timeUnit(ct))
	row, col := kernel2(func(x, y arrow.Time64) (mdn, bool, error) {
		return mdn{Nanoseconds: (int64(x) - int64(y)) * per}, true, nil
	})
	e, err := newCall("-", []Expr{a, b}, IntervalType, row, col)
	return setText(e, text), err
}
