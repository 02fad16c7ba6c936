// Package sqllogictest runs files in the sqllogictest format (SQLite's
// test corpus, also used by DuckDB, DataFusion, CockroachDB and RisingWave)
// against a clink session, as the reference C runner (sqllogictest.c and
// slt_sqlite.c) does in its verify mode: records separated by blank lines,
// `statement ok|error`, `query <types> [nosort|rowsort|valuesort] [label]`
// with the expected values after `----` (or `N values hashing to <md5>`),
// `hash-threshold N`, `skipif|onlyif <engine>`, `halt` and `#` comments.
//
// Values are rendered as the reference renders SQLite's: by the record's
// declared column type (render.go), not by the result's own type. Records
// can also be skipped by a skip list (skip.go) that names them with a
// reason; a listed record that passes is reported, so the list cannot rot.
package sqllogictest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Kind is what a record does.
type Kind int

const (
	// Statement runs SQL and checks only success or failure.
	Statement Kind = iota
	// Query runs SQL and checks its rendered values.
	Query
	// HashThreshold sets the number of values above which a result is
	// written as its hash (it changes how a wrong result is shown).
	HashThreshold
	// Halt stops the file.
	Halt
	// Invalid is a record the parser did not understand; running it fails
	// with Record.Problem.
	Invalid
)

// SortMode is how a query's values are ordered before comparing.
type SortMode int

const (
	// NoSort keeps the values in the order the engine returned them.
	NoSort SortMode = iota
	// RowSort sorts rows, comparing value by value with strcmp.
	RowSort
	// ValueSort sorts all values on their own, ignoring rows.
	ValueSort
)

// String is the mode's name in a query line.
func (m SortMode) String() string {
	switch m {
	case RowSort:
		return "rowsort"
	case ValueSort:
		return "valuesort"
	}
	return "nosort"
}

// Condition is a skipif or onlyif line before a record.
type Condition struct {
	Only   bool   // onlyif (true) or skipif (false)
	Engine string // the engine named
}

// Record is one statement, query or control line of a file.
type Record struct {
	File string
	// Line is the 1-based line of the statement, query, hash-threshold or
	// halt line (after any skipif/onlyif): what failures and skip lists
	// name, as the reference runner does.
	Line       int
	Kind       Kind
	Conditions []Condition
	// SQL is the record's SQL, comment lines removed, lines joined by "\n".
	SQL string

	// Statement records.
	ExpectError bool
	// ErrorPattern is the regexp after "statement error" ("" for any
	// error); ErrorText is an expected message after a ---- line (DuckDB's
	// form), matched as a substring.
	ErrorPattern string
	ErrorText    string

	// Query records.
	Types string // one of I, R, T per column
	Sort  SortMode
	Label string
	// HasResult: the record has a ---- line. Without one the query only
	// has to run.
	HasResult bool
	// Expected holds the lines after ----, as written.
	Expected []string

	// Threshold is a HashThreshold record's value.
	Threshold int

	// Problem says why an Invalid record is invalid.
	Problem string
}

// Where is "file:line".
func (r *Record) Where() string { return fmt.Sprintf("%s:%d", r.File, r.Line) }

// ParseFile reads and parses the file at path; records name it as given.
func ParseFile(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, bytes.NewReader(data))
}

// line is one non-comment line of a file.
type line struct {
	no   int
	text string // "" for a blank line
}

// Parse parses a file's records. It fails only when r cannot be read: a
// record it does not understand becomes an Invalid record, so the rest of
// the file still runs.
func Parse(file string, r io.Reader) ([]Record, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var recs []Record
	for i := 0; i < len(lines); {
		if lines[i].text == "" {
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].text != "" {
			j++
		}
		recs = append(recs, parseRecord(file, lines[i:j]))
		i = j
	}
	return recs, nil
}

// readLines splits r into lines as the reference runner does: a trailing
// \r is dropped, a line of only white space is blank, and lines starting
// with '#' are dropped altogether (a comment does not end a record).
func readLines(r io.Reader) ([]line, error) {
	var out []line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	no := 0
	for sc.Scan() {
		no++
		t := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(t) == "" {
			t = ""
		}
		if strings.HasPrefix(t, "#") {
			continue
		}
		out = append(out, line{no: no, text: t})
	}
	return out, sc.Err()
}

// parseRecord parses the lines of one record (none of them blank).
func parseRecord(file string, lines []line) Record {
	r := Record{File: file, Line: lines[0].no}
	for len(lines) > 0 {
		f := strings.Fields(lines[0].text)
		if f[0] != "skipif" && f[0] != "onlyif" {
			break
		}
		if len(f) < 2 {
			return invalid(r, lines[0].no, "%s without an engine name", f[0])
		}
		r.Conditions = append(r.Conditions, Condition{Only: f[0] == "onlyif", Engine: f[1]})
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return invalid(r, r.Line, "skipif/onlyif without a record after it")
	}
	r.Line = lines[0].no
	head := lines[0].text
	f := strings.Fields(head)
	body := lines[1:]
	switch f[0] {
	case "statement":
		return parseStatement(r, head, f, body)
	case "query":
		return parseQuery(r, f, body)
	case "hash-threshold":
		if len(f) < 2 {
			return invalid(r, r.Line, "hash-threshold without a number")
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return invalid(r, r.Line, "hash-threshold %q: want a whole number", f[1])
		}
		r.Kind, r.Threshold = HashThreshold, n
		return r
	case "halt":
		r.Kind = Halt
		return r
	}
	return invalid(r, r.Line, "unknown record type %q", f[0])
}

func parseStatement(r Record, head string, f []string, body []line) Record {
	r.Kind = Statement
	switch {
	case len(f) >= 2 && f[1] == "ok":
	case len(f) >= 2 && f[1] == "error":
		r.ExpectError = true
		// The rest of the line, spaces inside it kept, is the pattern.
		rest := strings.TrimSpace(head)
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "statement"))
		r.ErrorPattern = strings.TrimSpace(strings.TrimPrefix(rest, "error"))
	default:
		return invalid(r, r.Line, "statement argument should be 'ok' or 'error'")
	}
	sql, rest := splitDashes(body)
	if rest != nil {
		if !r.ExpectError {
			return invalid(r, r.Line, "a ---- line in a 'statement ok' record")
		}
		r.ErrorText = strings.Join(rest, "\n")
	}
	r.SQL = sql
	if r.SQL == "" {
		return invalid(r, r.Line, "statement without SQL")
	}
	return r
}

func parseQuery(r Record, f []string, body []line) Record {
	r.Kind = Query
	if len(f) < 2 {
		return invalid(r, r.Line, "missing type string")
	}
	r.Types = f[1]
	for _, c := range r.Types {
		if c != 'I' && c != 'R' && c != 'T' {
			return invalid(r, r.Line, "unknown type character '%c' in type string", c)
		}
	}
	if len(f) >= 3 {
		switch f[2] {
		case "nosort":
		case "rowsort":
			r.Sort = RowSort
		case "valuesort":
			r.Sort = ValueSort
		default:
			return invalid(r, r.Line, "unknown sort method: '%s'", f[2])
		}
	}
	if len(f) >= 4 {
		r.Label = f[3]
	}
	sql, rest := splitDashes(body)
	r.SQL = sql
	r.HasResult = rest != nil
	r.Expected = rest
	if r.SQL == "" {
		return invalid(r, r.Line, "query without SQL")
	}
	return r
}

// splitDashes splits a record's body at its "----" line: the SQL before
// it and the lines after it (nil when there is no such line; empty but
// not nil when the line ends the record).
func splitDashes(body []line) (sql string, rest []string) {
	var sqlLines []string
	for i, l := range body {
		if l.text == "----" {
			rest = make([]string, 0, len(body)-i-1)
			for _, e := range body[i+1:] {
				rest = append(rest, e.text)
			}
			break
		}
		sqlLines = append(sqlLines, l.text)
	}
	return strings.Join(sqlLines, "\n"), rest
}

func invalid(r Record, at int, format string, args ...any) Record {
	r.Kind = Invalid
	r.Line = at
	r.Problem = fmt.Sprintf(format, args...)
	return r
}
