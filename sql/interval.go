package sql

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/clink-sql/clink/sql/ast"
)

// Interval is the value of an interval literal, in the three fields of
// Arrow's MONTH_DAY_NANO interval: a month and a day have no fixed
// length, so they are kept apart from the rest.
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// Duration is the interval as a time.Duration (a day counted as 24
// hours); an interval with months has none.
func (iv Interval) Duration() (time.Duration, error) {
	if iv.Months != 0 {
		return 0, fmt.Errorf("interval %s has months, and a month has no fixed length", iv)
	}
	d := new(big.Int).Mul(big.NewInt(int64(iv.Days)), big.NewInt(int64(24*time.Hour)))
	d.Add(d, new(big.Int).Mul(big.NewInt(iv.Micros), big.NewInt(int64(time.Microsecond))))
	if !d.IsInt64() {
		return 0, fmt.Errorf("interval %s is too long for a duration", iv)
	}
	return time.Duration(d.Int64()), nil
}

// String renders the interval in PostgreSQL's style: 1 mon 2 days 00:00:03.5.
func (iv Interval) String() string {
	var parts []string
	if iv.Months != 0 {
		parts = append(parts, fmt.Sprintf("%d mons", iv.Months))
	}
	if iv.Days != 0 {
		parts = append(parts, fmt.Sprintf("%d days", iv.Days))
	}
	if iv.Micros != 0 || len(parts) == 0 {
		parts = append(parts, (time.Duration(iv.Micros) * time.Microsecond).String())
	}
	return strings.Join(parts, " ")
}

// units of an interval: how many months, days or microseconds one is.
type unitSize struct {
	months, days, micros int64
}

var unitSizes = map[string]unitSize{
	ast.UnitYear:        {months: 12},
	ast.UnitQuarter:     {months: 3},
	ast.UnitMonth:       {months: 1},
	ast.UnitWeek:        {days: 7},
	ast.UnitDay:         {days: 1},
	ast.UnitHour:        {micros: 3600e6},
	ast.UnitMinute:      {micros: 60e6},
	ast.UnitSecond:      {micros: 1e6},
	ast.UnitMillisecond: {micros: 1e3},
	ast.UnitMicrosecond: {micros: 1},
}

const unitList = "YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND"

// intervalUnit recognises a unit after an interval literal's value:
// singular or plural, any case (DAYS is DAY).
func intervalUnit(t *token) (string, bool) {
	if t.kind != tWord {
		return "", false
	}
	u := t.upper()
	if _, ok := unitSizes[u]; ok {
		return u, true
	}
	if s, ok := strings.CutSuffix(u, "S"); ok {
		if _, ok := unitSizes[s]; ok {
			return s, true
		}
	}
	return "", false
}

// intervalLit reads INTERVAL [-|+] 'value' [unit [(p)] [TO unit [(p)]]]
// or INTERVAL [-|+] n unit. The value is checked here (IntervalOf), so a
// literal that parses has a value.
func (p *parser) intervalLit() ast.Expr {
	lo := p.peek().start
	p.pos++ // INTERVAL
	neg := false
	if p.atOp("-") || p.atOp("+") {
		neg = p.next().text == "-"
	}
	vt := p.peek()
	if vt.kind != tString && vt.kind != tNumber {
		p.errExpected("a quoted value (INTERVAL '10' SECOND)")
	}
	p.pos++
	lit := &ast.IntervalLit{Value: vt.text}
	if u, ok := intervalUnit(p.peek()); ok {
		p.pos++
		p.unitPrecision()
		lit.From = u
		if p.accept("TO") {
			u2, ok := intervalUnit(p.peek())
			if !ok {
				p.errExpected("an interval unit (" + unitList + ")")
			}
			p.pos++
			p.unitPrecision()
			lit.To = u2
		}
	} else if vt.kind == tNumber || neg {
		p.badUnit()
	}
	if neg {
		v := strings.TrimSpace(lit.Value)
		if s, ok := strings.CutPrefix(v, "-"); ok {
			lit.Value = s
		} else {
			lit.Value = "-" + strings.TrimPrefix(v, "+")
		}
	}
	lit.Span = p.span(lo)
	if _, err := IntervalOf(lit); err != nil {
		msg := err.Error()
		var e *Error
		if errors.As(err, &e) {
			msg = e.Msg
		}
		if lit.From == "" && p.peek().kind == tWord && !ast.IsReserved(p.peek().up) {
			p.badUnit()
		}
		p.fail(vt.start, msg)
	}
	return lit
}

// badUnit fails at the word where an interval unit was expected.
func (p *parser) badUnit() {
	t := p.peek()
	if t.kind == tWord {
		p.fail(t.start, fmt.Sprintf("unknown interval unit %s: expected %s", t.upper(), unitList))
	}
	p.errExpected("an interval unit (" + unitList + ")")
}

// unitPrecision skips the precision after a unit: DAY(3), SECOND(3),
// SECOND(2, 6). It bounds the digits shown, not the value.
func (p *parser) unitPrecision() {
	if !p.atOp("(") || p.peekAt(1).kind != tNumber {
		return
	}
	open := p.pos
	p.pos += 2
	if p.acceptOp(",") {
		if p.peek().kind != tNumber {
			p.errExpected("a precision")
		}
		p.pos++
	}
	p.closeParen(open)
}

// IntervalOf computes an interval literal's value. YEAR, QUARTER and
// MONTH count months, WEEK and DAY days, the rest microseconds; a
// fraction carries down (INTERVAL '1.5' MONTH is 1 month 15 days, '1.5'
// DAY 1 day 12 hours, '1.5' SECOND 1,500,000 µs; below a microsecond it
// rounds). The forms:
//
//	'10' SECOND, '-1.5' HOUR      a number of the unit
//	'1-2' YEAR TO MONTH           years-months
//	'1 02:03:04.5' DAY TO SECOND  also DAY TO HOUR ('1 02') and DAY TO MINUTE ('1 02:03')
//	'02:03:04' HOUR TO SECOND     also HOUR TO MINUTE ('02:03'), MINUTE TO SECOND ('03:04.5')
//	'1 day 2 hours 3 mins'        PostgreSQL's form, without a unit after the string
//
// A leading '-' negates every field of the range forms. An error carries
// the literal's offset (ErrorAt places it in the statement).
func IntervalOf(lit *ast.IntervalLit) (Interval, error) {
	var acc intervalAcc
	var err error
	switch {
	case lit.From == "":
		err = acc.postgres(lit.Value)
	case lit.To == "":
		var v *big.Rat
		if v, err = parseDecimal(lit.Value); err == nil {
			acc.add(v, unitSizes[lit.From])
		}
	default:
		err = acc.rangeForm(lit.Value, lit.From, lit.To)
	}
	if err == nil {
		var iv Interval
		if iv, err = acc.result(); err == nil {
			return iv, nil
		}
	}
	return Interval{}, &Error{Msg: err.Error(), Offset: lit.Pos()}
}

// intervalAcc sums an interval exactly; fractions of a month become days
// (30 to the month, as in PostgreSQL) and fractions of a day microseconds.
type intervalAcc struct {
	months, days, micros big.Rat
}

func (a *intervalAcc) add(v *big.Rat, u unitSize) {
	mul := func(dst *big.Rat, n int64) {
		if n != 0 {
			dst.Add(dst, new(big.Rat).Mul(v, new(big.Rat).SetInt64(n)))
		}
	}
	mul(&a.months, u.months)
	mul(&a.days, u.days)
	mul(&a.micros, u.micros)
}

func (a *intervalAcc) result() (Interval, error) {
	months, frac := splitRat(&a.months)
	days := new(big.Rat).Add(&a.days, new(big.Rat).Mul(frac, big.NewRat(30, 1)))
	wholeDays, dfrac := splitRat(days)
	micros := new(big.Rat).Add(&a.micros, new(big.Rat).Mul(dfrac, big.NewRat(86400e6, 1)))
	us := roundRat(micros)
	if !months.IsInt64() || months.Int64() > math.MaxInt32 || months.Int64() < math.MinInt32 ||
		!wholeDays.IsInt64() || wholeDays.Int64() > math.MaxInt32 || wholeDays.Int64() < math.MinInt32 ||
		!us.IsInt64() {
		return Interval{}, fmt.Errorf("interval out of range")
	}
	return Interval{Months: int32(months.Int64()), Days: int32(wholeDays.Int64()), Micros: us.Int64()}, nil
}

// splitRat splits r into its integer part (toward zero) and the rest.
func splitRat(r *big.Rat) (*big.Int, *big.Rat) {
	q := new(big.Int).Quo(r.Num(), r.Denom())
	return q, new(big.Rat).Sub(r, new(big.Rat).SetInt(q))
}

// roundRat rounds r to the nearest integer, halves away from zero.
func roundRat(r *big.Rat) *big.Int {
	q, rest := splitRat(r)
	twice := new(big.Rat).Mul(rest, big.NewRat(2, 1))
	switch {
	case twice.Cmp(big.NewRat(1, 1)) >= 0:
		q.Add(q, big.NewInt(1))
	case twice.Cmp(big.NewRat(-1, 1)) <= 0:
		q.Sub(q, big.NewInt(1))
	}
	return q
}

// parseDecimal reads a signed decimal number: 10, -1.5, .5, 1e3. It
// refuses the forms big.Rat would take beyond SQL's (fractions a/b, hex).
func parseDecimal(s string) (*big.Rat, error) {
	t := strings.TrimSpace(s)
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 || body == "" || !isDigit(body[0]) && body[0] != '.' {
		return nil, fmt.Errorf("interval value %s is not a number", quoteStr(s))
	}
	if end := scanNumber(body, 0); end != len(body) || body == "." {
		return nil, fmt.Errorf("interval value %s is not a number", quoteStr(s))
	}
	// Bound the size before big.Rat expands an exponent: 1e999999999
	// would take all memory.
	mant, exp, _ := strings.Cut(strings.ToLower(body), "e")
	if len(mant) > 60 || len(strings.TrimLeft(exp, "+-")) > 2 {
		return nil, fmt.Errorf("interval out of range")
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return nil, fmt.Errorf("interval value %s is not a number", quoteStr(s))
	}
	return r, nil
}

func quoteStr(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// rangeForm reads the value of X TO Y: 'Y-M', 'D H[:M[:S]]', 'H:M[:S]',
// 'M:S'.
func (a *intervalAcc) rangeForm(value, from, to string) error {
	usage := map[string]string{
		"YEAR TO MONTH":    "'years-months', e.g. '1-2'",
		"DAY TO HOUR":      "'days hours', e.g. '1 02'",
		"DAY TO MINUTE":    "'days hours:minutes', e.g. '1 02:03'",
		"DAY TO SECOND":    "'days hours:minutes:seconds', e.g. '1 02:03:04.5'",
		"HOUR TO MINUTE":   "'hours:minutes', e.g. '02:03'",
		"HOUR TO SECOND":   "'hours:minutes:seconds', e.g. '02:03:04.5'",
		"MINUTE TO SECOND": "'minutes:seconds', e.g. '03:04.5'",
	}[from+" TO "+to]
	if usage == "" {
		return fmt.Errorf("INTERVAL %s TO %s is not a valid range: use YEAR TO MONTH, DAY TO HOUR|MINUTE|SECOND, HOUR TO MINUTE|SECOND or MINUTE TO SECOND", from, to)
	}
	bad := fmt.Errorf("interval value %s does not match %s TO %s: write %s", quoteStr(value), from, to, usage)
	v := strings.TrimSpace(value)
	neg := false
	if s, ok := strings.CutPrefix(v, "-"); ok {
		v, neg = s, true
	} else {
		v = strings.TrimPrefix(v, "+")
	}
	// The fields, most significant first, and the units they count.
	var fields []string
	var units []string
	switch from {
	case ast.UnitYear:
		y, m, ok := strings.Cut(v, "-")
		if !ok {
			return bad
		}
		fields, units = []string{y, m}, []string{ast.UnitYear, ast.UnitMonth}
	case ast.UnitDay:
		d, rest, ok := strings.Cut(v, " ")
		if !ok {
			return bad
		}
		fields, units = []string{d}, []string{ast.UnitDay}
		tf := strings.Split(strings.TrimSpace(rest), ":")
		want := map[string]int{ast.UnitHour: 1, ast.UnitMinute: 2, ast.UnitSecond: 3}[to]
		if len(tf) != want {
			return bad
		}
		fields = append(fields, tf...)
		units = append(units, []string{ast.UnitHour, ast.UnitMinute, ast.UnitSecond}[:want]...)
	default:
		tf := strings.Split(v, ":")
		all := []string{ast.UnitHour, ast.UnitMinute, ast.UnitSecond}
		if from == ast.UnitMinute {
			all = all[1:]
		}
		n := 2
		if from == ast.UnitHour && to == ast.UnitSecond {
			n = 3
		}
		if len(tf) != n {
			return bad
		}
		fields, units = tf, all[:n]
	}
	for i, f := range fields {
		f = strings.TrimSpace(f)
		// Only seconds take a fraction; every field is unsigned.
		if f == "" || f[0] == '-' || f[0] == '+' || units[i] != ast.UnitSecond && strings.ContainsAny(f, ".eE") {
			return bad
		}
		r, err := parseDecimal(f)
		if err != nil {
			return bad
		}
		if i > 0 && !fieldInRange(r, units[i]) {
			return fmt.Errorf("interval value %s: %s field %s is out of range", quoteStr(value), strings.ToLower(units[i]), f)
		}
		if neg {
			r.Neg(r)
		}
		a.add(r, unitSizes[units[i]])
	}
	return nil
}

// fieldInRange checks a field after the first of a range form: months
// below 12, hours below 24, minutes and seconds below 60.
func fieldInRange(r *big.Rat, unit string) bool {
	limit := map[string]int64{ast.UnitMonth: 12, ast.UnitHour: 24, ast.UnitMinute: 60, ast.UnitSecond: 60}[unit]
	return r.Cmp(new(big.Rat).SetInt64(limit)) < 0
}

// pgUnits are the unit words of PostgreSQL's interval strings.
var pgUnits = map[string]string{
	"y": ast.UnitYear, "yr": ast.UnitYear, "yrs": ast.UnitYear, "year": ast.UnitYear, "years": ast.UnitYear,
	"quarter": ast.UnitQuarter, "quarters": ast.UnitQuarter, "qtr": ast.UnitQuarter,
	"mon": ast.UnitMonth, "mons": ast.UnitMonth, "month": ast.UnitMonth, "months": ast.UnitMonth,
	"w": ast.UnitWeek, "week": ast.UnitWeek, "weeks": ast.UnitWeek,
	"d": ast.UnitDay, "day": ast.UnitDay, "days": ast.UnitDay,
	"h": ast.UnitHour, "hr": ast.UnitHour, "hrs": ast.UnitHour, "hour": ast.UnitHour, "hours": ast.UnitHour,
	"m": ast.UnitMinute, "min": ast.UnitMinute, "mins": ast.UnitMinute, "minute": ast.UnitMinute, "minutes": ast.UnitMinute,
	"s": ast.UnitSecond, "sec": ast.UnitSecond, "secs": ast.UnitSecond, "second": ast.UnitSecond, "seconds": ast.UnitSecond,
	"ms": ast.UnitMillisecond, "msec": ast.UnitMillisecond, "msecs": ast.UnitMillisecond,
	"millisecond": ast.UnitMillisecond, "milliseconds": ast.UnitMillisecond,
	"us": ast.UnitMicrosecond, "usec": ast.UnitMicrosecond, "usecs": ast.UnitMicrosecond,
	"microsecond": ast.UnitMicrosecond, "microseconds": ast.UnitMicrosecond,
}

// postgres reads PostgreSQL's interval string: number-unit pairs ('1 day
// 2 hours', '1.5h', '-3 mins') and an optional time of day ('1 day
// 02:03:04').
func (a *intervalAcc) postgres(value string) error {
	words := strings.Fields(value)
	if len(words) == 0 {
		return fmt.Errorf("interval value '' is empty: write e.g. INTERVAL '1' DAY or INTERVAL '1 day'")
	}
	seenTime := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.Contains(w, ":") {
			if seenTime {
				return fmt.Errorf("interval value %s has two times of day", quoteStr(value))
			}
			seenTime = true
			if err := a.timeOfDay(w, value); err != nil {
				return err
			}
			continue
		}
		// The number, and the unit glued to it ('10s') or in the next word.
		end := 0
		for end < len(w) && (isDigit(w[end]) || strings.IndexByte("+-.", w[end]) >= 0) {
			end++
		}
		num, unit := w[:end], strings.ToLower(w[end:])
		if num == "" {
			return fmt.Errorf("interval value %s: %s is not a number", quoteStr(value), quoteStr(w))
		}
		if unit == "" {
			if i+1 >= len(words) {
				return fmt.Errorf("interval value %s needs a unit after %s: write e.g. INTERVAL '%s' DAY or INTERVAL '%s days'", quoteStr(value), num, num, num)
			}
			i++
			unit = strings.ToLower(words[i])
		}
		r, err := parseDecimal(num)
		if err != nil {
			return fmt.Errorf("interval value %s: %s is not a number", quoteStr(value), quoteStr(num))
		}
		u, ok := pgUnits[unit]
		if !ok {
			return fmt.Errorf("interval value %s: unknown unit %s", quoteStr(value), quoteStr(unit))
		}
		a.add(r, unitSizes[u])
	}
	return nil
}

// timeOfDay adds [-]H:M[:S[.f]] of an interval string.
func (a *intervalAcc) timeOfDay(w, value string) error {
	neg := strings.HasPrefix(w, "-")
	parts := strings.Split(strings.TrimLeft(w, "+-"), ":")
	units := []string{ast.UnitHour, ast.UnitMinute, ast.UnitSecond}
	if len(parts) > 3 {
		return fmt.Errorf("interval value %s: %s is not a time of day", quoteStr(value), w)
	}
	for i, f := range parts {
		if f == "" || f[0] == '-' || f[0] == '+' || units[i] != ast.UnitSecond && strings.ContainsAny(f, ".eE") {
			return fmt.Errorf("interval value %s: %s is not a time of day", quoteStr(value), w)
		}
		r, err := parseDecimal(f)
		if err != nil || i > 0 && !fieldInRange(r, units[i]) {
			return fmt.Errorf("interval value %s: %s is not a time of day", quoteStr(value), w)
		}
		if neg {
			r.Neg(r)
		}
		a.add(r, unitSizes[units[i]])
	}
	return nil
}
