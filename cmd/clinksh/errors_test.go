package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/clink-sql/clink/sql"
)

func TestErrorReportMapsStatementPositionToScript(t *testing.T) {
	script := "CREATE TABLE t (a INT);\n\nSELECT a,\n  bad FROM t;\n"
	pieces := sql.Split(script)
	if len(pieces) != 2 {
		t.Fatalf("split: %d pieces", len(pieces))
	}
	// Line 2, column 3 of the statement is line 4, column 3 of the script.
	err := &sql.Error{Msg: "unknown column 'bad'", Line: 2, Column: 3}
	got := errorReport(err, script, pieces[1], scriptLoc{})
	want := "ERROR at line 4, column 3: unknown column 'bad'\n" +
		"LINE 4:   bad FROM t;\n" +
		"          ^\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestErrorReportFirstLineColumnOffset(t *testing.T) {
	// The second statement starts mid-line: its line-1 columns shift by
	// where it starts.
	script := "SELECT 1; SELECT bad FROM t"
	pieces := sql.Split(script)
	err := fmt.Errorf("binding: %w", &sql.Error{Msg: "unknown column 'bad'", Line: 1, Column: 8})
	got := errorReport(err, script, pieces[1], scriptLoc{})
	want := "ERROR at line 1, column 18: binding: unknown column 'bad'\n" +
		"LINE 1: SELECT 1; SELECT bad FROM t\n" +
		"                         ^\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestErrorReportTabsAndWideRunes(t *testing.T) {
	script := "SELECT\t'日本', bad"
	p := sql.Split(script)[0]
	got := errorReport(&sql.Error{Msg: "m", Line: 1, Column: 18}, script, p, scriptLoc{interactive: true})
	want := "ERROR at line 1, column 18: m\n" +
		"LINE 1: SELECT\t'日本', bad\n" +
		"              \t        ^\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestErrorReportWithoutPosition(t *testing.T) {
	script := "SELECT 1;\nSELECT x\n  FROM nowhere;"
	p := sql.Split(script)[1]
	got := errorReport(errors.New("table 'nowhere' not found"), script, p, scriptLoc{})
	want := "ERROR: table 'nowhere' not found\nSTATEMENT at line 2: SELECT x ...\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := errorReport(errors.New("x"), script, p, scriptLoc{interactive: true}); got != "ERROR: x\n" {
		t.Errorf("interactive: %q", got)
	}
}

func TestCaretLongLineWindow(t *testing.T) {
	line := make([]byte, 300)
	for i := range line {
		line[i] = 'a'
	}
	line[250] = 'X'
	got := caretLines(1, string(line), 251)
	// The caret must sit under the X.
	lines := splitLines(got)
	text, caret := lines[0], lines[1]
	col := len(caret) - 1
	if col >= len(text) || text[col] != 'X' {
		t.Errorf("caret at %d not under X:\n%s", col, got)
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
