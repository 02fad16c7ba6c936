package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// IntervalFunc is the function the dialect layer rewrites an interval
// literal into: INTERVAL '10' SECOND becomes __clink_interval('10', 'SECOND')
// (value and unit as string literals, the unit upper-cased). A call keeps the
// operand boundaries explicit where sqlparser's own INTERVAL rule would bind
// by MySQL precedence.
const IntervalFunc = "__clink_interval"

// FilterFunc is the function an aggregate's FILTER clause is rewritten into:
// COUNT(*) FILTER (WHERE p) becomes __clink_filter(COUNT(*), p).
const FilterFunc = "__clink_filter"

// WindowTablePrefix marks a table name that stands for a window table
// function. FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '10' SECOND))
// is rewritten to FROM `__clink_window:TUMBLE:bid:ts::10 SECOND` (fields:
// kind, table, time column, PARTITION BY columns joined by ',', then one
// field per interval argument "value UNIT"; ':' ',' '%' and '`' inside a
// field are %-escaped). ParseWindowTable reads the name back.
const WindowTablePrefix = "__clink_window:"

// intervalUnits are the units an interval literal may use: the ones with a
// fixed length, which is what event-time windows and watermarks need.
var intervalUnits = map[string]time.Duration{
	"MILLISECOND": time.Millisecond,
	"SECOND":      time.Second,
	"MINUTE":      time.Minute,
	"HOUR":        time.Hour,
	"DAY":         24 * time.Hour,
}

// Interval is one INTERVAL 'Value' Unit literal.
type Interval struct {
	Value string // as written, e.g. "10" or "1.5"
	Unit  string // upper-cased: MILLISECOND, SECOND, MINUTE, HOUR, DAY
}

// String renders the interval in SQL terms.
func (iv Interval) String() string { return fmt.Sprintf("INTERVAL '%s' %s", iv.Value, iv.Unit) }

// Duration converts the interval to a time.Duration.
func (iv Interval) Duration() (time.Duration, error) {
	unit, ok := intervalUnits[iv.Unit]
	if !ok {
		return 0, fmt.Errorf("unsupported interval unit %s", iv.Unit)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(iv.Value), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("interval value '%s' is not a number", iv.Value)
	}
	d := v * float64(unit)
	if math.Abs(d) > math.MaxInt64 {
		return 0, fmt.Errorf("interval %s is too large", iv)
	}
	return time.Duration(d), nil
}

// WindowTVF is a window table function call as written in FROM:
//
//	TUMBLE(TABLE t, DESCRIPTOR(c), size [, offset])
//	HOP(TABLE t, DESCRIPTOR(c), slide, size [, offset])
//	CUMULATE(TABLE t, DESCRIPTOR(c), step, size [, offset])
//	SESSION(TABLE t [PARTITION BY k, ...], DESCRIPTOR(c), gap)
type WindowTVF struct {
	Kind        string // TUMBLE, HOP, CUMULATE, SESSION
	Table       string // the input table or view
	TimeCol     string // the DESCRIPTOR column
	PartitionBy []string
	Intervals   []Interval // in argument order
}

// windowArity is the allowed number of interval arguments per kind.
var windowArity = map[string][2]int{
	"TUMBLE":   {1, 2},
	"HOP":      {2, 3},
	"CUMULATE": {2, 3},
	"SESSION":  {1, 1},
}

// TableName is the encoded name the dialect layer puts in FROM.
func (w *WindowTVF) TableName() string {
	fields := []string{w.Kind, escapeField(w.Table), escapeField(w.TimeCol)}
	parts := make([]string, len(w.PartitionBy))
	for i, k := range w.PartitionBy {
		parts[i] = escapeField(k)
	}
	fields = append(fields, strings.Join(parts, ","))
	for _, iv := range w.Intervals {
		fields = append(fields, escapeField(iv.Value)+" "+iv.Unit)
	}
	return WindowTablePrefix + strings.Join(fields, ":")
}

// String renders the call in SQL terms, for EXPLAIN.
func (w *WindowTVF) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(TABLE %s", w.Kind, quoteIdent(w.Table))
	if len(w.PartitionBy) > 0 {
		q := make([]string, len(w.PartitionBy))
		for i, k := range w.PartitionBy {
			q[i] = quoteIdent(k)
		}
		b.WriteString(" PARTITION BY " + strings.Join(q, ", "))
	}
	fmt.Fprintf(&b, ", DESCRIPTOR(%s)", quoteIdent(w.TimeCol))
	for _, iv := range w.Intervals {
		b.WriteString(", " + iv.String())
	}
	b.WriteString(")")
	return b.String()
}

// ParseWindowTable decodes a table name made by the dialect layer from a
// window table function. It returns (nil, nil) for any other name.
func ParseWindowTable(name string) (*WindowTVF, error) {
	rest, ok := strings.CutPrefix(name, WindowTablePrefix)
	if !ok {
		return nil, nil
	}
	fields := strings.Split(rest, ":")
	bad := func(why string) error { return fmt.Errorf("malformed window table name %q: %s", name, why) }
	if len(fields) < 5 {
		return nil, bad("too few fields")
	}
	w := &WindowTVF{Kind: fields[0]}
	arity, ok := windowArity[w.Kind]
	if !ok {
		return nil, bad("unknown window kind")
	}
	var err error
	if w.Table, err = unescapeField(fields[1]); err != nil {
		return nil, bad(err.Error())
	}
	if w.TimeCol, err = unescapeField(fields[2]); err != nil {
		return nil, bad(err.Error())
	}
	if fields[3] != "" {
		for _, k := range strings.Split(fields[3], ",") {
			u, err := unescapeField(k)
			if err != nil {
				return nil, bad(err.Error())
			}
			w.PartitionBy = append(w.PartitionBy, u)
		}
	}
	for _, f := range fields[4:] {
		sp := strings.LastIndexByte(f, ' ')
		if sp < 0 {
			return nil, bad("interval without unit")
		}
		v, err := unescapeField(f[:sp])
		if err != nil {
			return nil, bad(err.Error())
		}
		w.Intervals = append(w.Intervals, Interval{Value: v, Unit: f[sp+1:]})
	}
	if n := len(w.Intervals); n < arity[0] || n > arity[1] {
		return nil, bad("wrong number of intervals")
	}
	return w, nil
}

var fieldEscaper = strings.NewReplacer("%", "%25", ":", "%3A", ",", "%2C", "`", "%60")

func escapeField(s string) string { return fieldEscaper.Replace(s) }

func unescapeField(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// windowTVF reads TABLE(KIND(TABLE t [PARTITION BY k, ...], DESCRIPTOR(c),
// INTERVAL ..., ...)) from tokens [i, end).
func (w *rewriter) windowTVF(i, end int) (*WindowTVF, error) {
	toks, match := w.p.toks, w.p.match
	q := &parser{text: w.p.text, toks: toks, match: match, pos: i + 2, end: end - 1}
	kt := q.peek()
	kind := strings.ToUpper(kt.text)
	arity, ok := windowArity[kind]
	if kt.kind != tkWord || !ok {
		return nil, q.errAt(kt.start, "expected TUMBLE, HOP, CUMULATE or SESSION in TABLE(...), found "+describe(kt))
	}
	q.pos++
	if !q.peek().isOp("(") || match[q.pos] != end-2 {
		return nil, q.errExpected("'('", "after "+kind+" (one window function call inside TABLE(...))")
	}
	usage := map[string]string{
		"TUMBLE":   "TUMBLE(TABLE t, DESCRIPTOR(col), size [, offset])",
		"HOP":      "HOP(TABLE t, DESCRIPTOR(col), slide, size [, offset])",
		"CUMULATE": "CUMULATE(TABLE t, DESCRIPTOR(col), step, size [, offset])",
		"SESSION":  "SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(col), gap)",
	}[kind]
	q.pos++
	q.end = end - 2
	wt := &WindowTVF{Kind: kind}
	if err := q.expect("TABLE", "as the first argument of "+usage); err != nil {
		return nil, err
	}
	var err error
	if wt.Table, err = q.qualifiedName("after TABLE in " + kind); err != nil {
		return nil, err
	}
	if q.accept("PARTITION") {
		if kind != "SESSION" {
			return nil, q.errAt(toks[q.pos-1].start, "PARTITION BY is only valid in SESSION windows")
		}
		if err := q.expect("BY", "after PARTITION"); err != nil {
			return nil, err
		}
		paren := q.acceptOp("(")
		for {
			k, err := q.qualifiedName("in PARTITION BY")
			if err != nil {
				return nil, err
			}
			wt.PartitionBy = append(wt.PartitionBy, k)
			if !q.acceptOp(",") {
				break
			}
			if !paren && q.peek().is("DESCRIPTOR") {
				q.pos-- // the comma ends the partition list
				break
			}
		}
		if paren {
			if err := q.expectOp(")", "to close PARTITION BY (...)"); err != nil {
				return nil, err
			}
		}
	}
	if err := q.expectOp(",", "in "+usage); err != nil {
		return nil, err
	}
	if err := q.expect("DESCRIPTOR", "as the second argument of "+usage); err != nil {
		return nil, err
	}
	if err := q.expectOp("(", "after DESCRIPTOR"); err != nil {
		return nil, err
	}
	if wt.TimeCol, err = q.ident("in DESCRIPTOR(...)"); err != nil {
		return nil, err
	}
	if err := q.expectOp(")", "to close DESCRIPTOR(...)"); err != nil {
		return nil, err
	}
	for q.acceptOp(",") {
		iv, err := q.interval()
		if err != nil {
			return nil, err
		}
		wt.Intervals = append(wt.Intervals, iv)
	}
	if err := q.expectEnd("the arguments of " + usage); err != nil {
		return nil, err
	}
	if n := len(wt.Intervals); n < arity[0] || n > arity[1] {
		return nil, w.p.errAt(kt.start, "wrong number of interval arguments: "+usage)
	}
	return wt, nil
}

// interval reads INTERVAL [-]'n' UNIT (the value may also be a bare number).
func (p *parser) interval() (Interval, error) {
	if err := p.expect("INTERVAL", "(an interval such as INTERVAL '10' SECOND)"); err != nil {
		return Interval{}, err
	}
	sign := ""
	if p.acceptOp("-") {
		sign = "-"
	} else {
		p.acceptOp("+")
	}
	vt := p.next()
	var v string
	switch vt.kind {
	case tkString:
		v = strings.TrimSpace(vt.stringValue())
	case tkNumber:
		v = vt.text
	default:
		return Interval{}, p.errAt(vt.start, "expected a quoted number after INTERVAL, found "+describe(vt))
	}
	if strings.HasPrefix(v, "-") && sign == "-" {
		v, sign = v[1:], ""
	}
	v = sign + v
	if _, err := strconv.ParseFloat(v, 64); err != nil {
		return Interval{}, p.errAt(vt.start, "interval value "+quoteString(v)+" is not a number")
	}
	ut := p.next()
	unit := strings.ToUpper(ut.text)
	if _, ok := intervalUnits[unit]; ut.kind != tkWord || !ok {
		return Interval{}, p.errAt(ut.start, "unsupported interval unit "+describe(ut)+": use MILLISECOND, SECOND, MINUTE, HOUR or DAY")
	}
	return Interval{Value: v, Unit: unit}, nil
}
