package dispatch

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cellOptions are set by an optional first line of a cell, a SQL comment so
// the cell stays valid SQL for any other tool:
//
//	-- clink: duration=5s rows=100           stop after 5 s or 100 rows, normally
//	-- clink: chart=line x=dateTime y=price  draw the result (line or bar)
//	-- clink: max_rows=50                    rows shown in a result table
//	-- clink: output=text                    print results to stdout as text
//
// A bound ends the query as a success; the result shows what arrived.
type cellOptions struct {
	duration time.Duration
	rows     int64
	chart    string // "", "line", "bar"
	x, y     string
	maxRows  int  // 0: the kernel's setting
	text     bool // output=text
}

const optionPrefix = "-- clink:"

// parseOptions reads the options line of code, if its first non-blank line
// is one. An unknown key or a bad value is an error naming it.
func parseOptions(code string) (cellOptions, error) {
	var o cellOptions
	line := strings.TrimSpace(code)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(strings.ToLower(line), optionPrefix) {
		return o, nil
	}
	for _, f := range strings.Fields(line[len(optionPrefix):]) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" {
			return o, fmt.Errorf("cell option %q: want key=value", f)
		}
		switch strings.ToLower(k) {
		case "duration":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return o, fmt.Errorf("cell option duration=%s: want a positive duration like 5s or 500ms", v)
			}
			o.duration = d
		case "rows":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("cell option rows=%s: want a positive integer", v)
			}
			o.rows = n
		case "max_rows":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("cell option max_rows=%s: want a positive integer", v)
			}
			o.maxRows = n
		case "chart":
			switch strings.ToLower(v) {
			case "line", "bar", "point":
				o.chart = strings.ToLower(v)
			default:
				return o, fmt.Errorf("cell option chart=%s: want line, bar or point", v)
			}
		case "x":
			o.x = v
		case "y":
			o.y = v
		case "output":
			switch strings.ToLower(v) {
			case "text":
				o.text = true
			case "display":
			default:
				return o, fmt.Errorf("cell option output=%s: want text or display", v)
			}
		default:
			return o, fmt.Errorf("unknown cell option %q (known: duration, rows, max_rows, chart, x, y, output)", k)
		}
	}
	if o.chart != "" && (o.x == "" || o.y == "") {
		return o, fmt.Errorf("cell option chart=%s needs x=<column> and y=<column>", o.chart)
	}
	if o.chart == "" && (o.x != "" || o.y != "") {
		return o, fmt.Errorf("cell options x and y need chart=line|bar|point")
	}
	return o, nil
}
