package sql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clink-sql/clink/sql/ast"
)

const (
	usSecond = int64(time.Second / time.Microsecond)
	usMinute = 60 * usSecond
	usHour   = 60 * usMinute
)

// intervalLit parses the literal in "SELECT <text>".
func intervalLit(t *testing.T, text string) *ast.IntervalLit {
	t.Helper()
	e, err := ParseExpr(text)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", text, err)
	}
	lit, ok := e.(*ast.IntervalLit)
	if !ok {
		t.Fatalf("ParseExpr(%q) = %T, not an interval literal", text, e)
	}
	return lit
}

func TestIntervalOf(t *testing.T) {
	cases := []struct {
		text string
		want Interval
	}{
		{"INTERVAL '10' SECOND", Interval{Micros: 10 * usSecond}},
		{"INTERVAL 10 SECONDS", Interval{Micros: 10 * usSecond}},
		{"INTERVAL '1.5' SECOND", Interval{Micros: 1_500_000}},
		{"INTERVAL '-1.5' HOUR", Interval{Micros: -90 * usMinute}},
		{"INTERVAL -'1.5' HOUR", Interval{Micros: -90 * usMinute}},
		{"INTERVAL - '-2' MINUTE", Interval{Micros: 2 * usMinute}},
		{"INTERVAL '1.5' MONTH", Interval{Months: 1, Days: 15}},
		{"INTERVAL '1.5' YEAR", Interval{Months: 18}},
		{"INTERVAL '1' QUARTER", Interval{Months: 3}},
		{"INTERVAL '2' WEEKS", Interval{Days: 14}},
		{"INTERVAL '1.5' DAY", Interval{Days: 1, Micros: 12 * usHour}},
		{"INTERVAL '90' DAY (3)", Interval{Days: 90}},
		{"INTERVAL '250' MILLISECOND", Interval{Micros: 250_000}},
		{"INTERVAL '7' MICROSECONDS", Interval{Micros: 7}},
		{"INTERVAL '0.0000005' SECOND", Interval{Micros: 1}},
		{"INTERVAL '-0.0000005' SECOND", Interval{Micros: -1}},
		{"INTERVAL '0.0000004' SECOND", Interval{}},
		{"INTERVAL '1e3' MILLISECOND", Interval{Micros: usSecond}},
		{"INTERVAL '1-2' YEAR TO MONTH", Interval{Months: 14}},
		{"INTERVAL '-1-2' YEAR TO MONTH", Interval{Months: -14}},
		{"INTERVAL '1 02' DAY TO HOUR", Interval{Days: 1, Micros: 2 * usHour}},
		{"INTERVAL '1 02:03' DAY TO MINUTE", Interval{Days: 1, Micros: 2*usHour + 3*usMinute}},
		{"INTERVAL '1 02:03:04.5' DAY(2) TO SECOND(3)", Interval{Days: 1, Micros: 2*usHour + 3*usMinute + 4_500_000}},
		{"INTERVAL '-1 02:00:00' DAY TO SECOND", Interval{Days: -1, Micros: -2 * usHour}},
		{"INTERVAL '02:03' HOUR TO MINUTE", Interval{Micros: 2*usHour + 3*usMinute}},
		{"INTERVAL '100:00' HOUR TO MINUTE", Interval{Micros: 100 * usHour}},
		{"INTERVAL '-02:03:04' HOUR TO SECOND", Interval{Micros: -(2*usHour + 3*usMinute + 4*usSecond)}},
		{"INTERVAL '03:04.25' MINUTE TO SECOND", Interval{Micros: 3*usMinute + 4_250_000}},
		{"INTERVAL '1 day 2 hours 3 mins'", Interval{Days: 1, Micros: 2*usHour + 3*usMinute}},
		{"INTERVAL '1 year 2 months'", Interval{Months: 14}},
		{"INTERVAL '3 mons 1 w'", Interval{Months: 3, Days: 7}},
		{"INTERVAL '2 weeks 1.5 days'", Interval{Days: 15, Micros: 12 * usHour}},
		{"INTERVAL '10s 100ms'", Interval{Micros: 10*usSecond + 100_000}},
		{"INTERVAL '-1 day +2 hours'", Interval{Days: -1, Micros: 2 * usHour}},
		{"INTERVAL '1 day 02:03:04'", Interval{Days: 1, Micros: 2*usHour + 3*usMinute + 4*usSecond}},
		{"INTERVAL '-02:00'", Interval{Micros: -2 * usHour}},
		{"INTERVAL '1 QUARTER 1 Hour'", Interval{Months: 3, Micros: usHour}},
	}
	for _, c := range cases {
		got, err := IntervalOf(intervalLit(t, c.text))
		if err != nil || got != c.want {
			t.Errorf("IntervalOf(%s) = %+v, %v; want %+v", c.text, got, err, c.want)
		}
	}
}

func TestIntervalOfErrors(t *testing.T) {
	cases := []struct {
		lit ast.IntervalLit
		msg string
	}{
		{ast.IntervalLit{Value: "", From: ""}, "interval value '' is empty"},
		{ast.IntervalLit{Value: "1"}, "interval value '1' needs a unit after 1"},
		{ast.IntervalLit{Value: "x day"}, "interval value 'x day': 'x' is not a number"},
		{ast.IntervalLit{Value: "1 fortnight"}, "interval value '1 fortnight': unknown unit 'fortnight'"},
		{ast.IntervalLit{Value: "1 2"}, "interval value '1 2': unknown unit '2'"},
		{ast.IntervalLit{Value: "1:2:3:4"}, "interval value '1:2:3:4': 1:2:3:4 is not a time of day"},
		{ast.IntervalLit{Value: "1:60"}, "interval value '1:60': 1:60 is not a time of day"},
		{ast.IntervalLit{Value: "1/2", From: ast.UnitDay}, "interval value '1/2' is not a number"},
		{ast.IntervalLit{Value: "0x10", From: ast.UnitDay}, "interval value '0x10' is not a number"},
		{ast.IntervalLit{Value: "99999999999", From: ast.UnitYear}, "interval out of range"},
		{ast.IntervalLit{Value: "1e20", From: ast.UnitSecond}, "interval out of range"},
		{ast.IntervalLit{Value: "1e300", From: ast.UnitSecond}, "interval out of range"},
		{ast.IntervalLit{Value: "1:60", From: ast.UnitHour, To: ast.UnitMinute}, "interval value '1:60': minute field 60 is out of range"},
		{ast.IntervalLit{Value: "1-12", From: ast.UnitYear, To: ast.UnitMonth}, "interval value '1-12': month field 12 is out of range"},
		{ast.IntervalLit{Value: "1 2:3", From: ast.UnitDay, To: ast.UnitSecond}, "interval value '1 2:3' does not match DAY TO SECOND"},
		{ast.IntervalLit{Value: "1.5 2", From: ast.UnitDay, To: ast.UnitHour}, "interval value '1.5 2' does not match DAY TO HOUR"},
		{ast.IntervalLit{Value: "1", From: ast.UnitSecond, To: ast.UnitMinute}, "INTERVAL SECOND TO MINUTE is not a valid range"},
	}
	for _, c := range cases {
		c.lit.Span = ast.Span{Lo: 7, Hi: 9}
		_, err := IntervalOf(&c.lit)
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(e.Msg, c.msg) || e.Offset != 7 {
			t.Errorf("IntervalOf(%+v) error = %#v, want Offset 7 and a message starting %q", c.lit, err, c.msg)
		}
	}
}

func TestIntervalDuration(t *testing.T) {
	cases := []struct {
		iv   Interval
		want time.Duration
	}{
		{Interval{Micros: 10 * usSecond}, 10 * time.Second},
		{Interval{Days: 2, Micros: -usHour}, 47 * time.Hour},
		{Interval{Days: -1}, -24 * time.Hour},
		{Interval{Micros: 1}, time.Microsecond},
	}
	for _, c := range cases {
		if d, err := c.iv.Duration(); err != nil || d != c.want {
			t.Errorf("%+v.Duration() = %v, %v; want %v", c.iv, d, err, c.want)
		}
	}
	if _, err := (Interval{Months: 1}).Duration(); err == nil || !strings.Contains(err.Error(), "a month has no fixed length") {
		t.Errorf("a month's Duration: %v", err)
	}
	if _, err := (Interval{Days: 200_000}).Duration(); err == nil {
		t.Error("200000 days fit in a Duration")
	}
}
