package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/clink-sql/clink/exec"
)

func TestREPLSession(t *testing.T) {
	ts := newTestShell(t, formatTable)
	input := strings.Join([]string{
		"SELECT",
		"  1;",
		`\d`,
		`\d bid`,
		`\d nope`,
		`\timing`,
		`\format csv`,
		"SELECT 1;",
		`\format table`,
		`\timing off`,
		`\bogus`,
		"",
		"SELECT bad",
		"  FROM t;",
		"SELECT 1; CREATE TABLE t (a INT);",
		"PANIC;",
		"EXPLAIN SELECT 1;",
		"-- only a comment",
		`\q`,
		"SELECT 1;",
	}, "\n") + "\n"
	var prompts bytes.Buffer
	if err := ts.repl(context.Background(), newReaderLines(strings.NewReader(input), &prompts)); err != nil {
		t.Fatal(err)
	}
	wantStmts := []string{"SELECT\n  1", "DESCRIBE `bid`", "SELECT 1", "SELECT bad\n  FROM t", "SELECT 1",
		"CREATE TABLE t (a INT)", "PANIC", "EXPLAIN SELECT 1"}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, wantStmts) {
		t.Errorf("executed %q\nwant %q", got, wantStmts)
	}
	out, errs := ts.stdout.String(), ts.stderr.String()
	for _, want := range []string{
		"1 row, finished",
		"| bid  | table | nexmark   |", // \d
		"| v    | view  |",
		"bid: table (nexmark), unbounded", // \d bid
		"| auction | BIGINT         | false |",
		"| price   | DECIMAL(10, 2) | true  |",
		"Timing is on.",
		"x\n1\n", // csv result
		"Table 't' created.",
		"Scan t\n  columnar: yes\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		`ERROR: no table or view named "nope"`,
		`ERROR: unknown command \bogus`,
		"ERROR at line 1, column 8: unknown column 'bad'\nLINE 1: SELECT bad\n               ^\n",
		"ERROR: internal error: boom",
		"Output format is csv.", // in csv, feedback is off stdout
		"Time: ",                // and so is the csv statement's timing
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out, "Time: ") {
		t.Errorf("a csv statement's timing reached stdout:\n%s", out)
	}
	if !strings.Contains(prompts.String(), "clink> ") || !strings.Contains(prompts.String(), contPrompt) {
		t.Errorf("prompts: %q", prompts.String())
	}
}

// scriptedLines replays lines and errors (errInterrupt for Ctrl-C).
type scriptedLines struct {
	steps   []any
	prompts []string
	history []string
	p       string
}

func (s *scriptedLines) Readline() (string, error) {
	s.prompts = append(s.prompts, s.p)
	if len(s.steps) == 0 {
		return "", io.EOF
	}
	step := s.steps[0]
	s.steps = s.steps[1:]
	if err, ok := step.(error); ok {
		return "", err
	}
	return step.(string), nil
}
func (s *scriptedLines) SetPrompt(p string) { s.p = p }
func (s *scriptedLines) SaveHistory(e string) error {
	s.history = append(s.history, e)
	return nil
}

func TestREPLCtrlCAtPromptClearsStatement(t *testing.T) {
	ts := newTestShell(t, formatTable)
	lr := &scriptedLines{steps: []any{"SELECT", "  bad", errInterrupt, "SELECT 1", ";", `\timing on`}}
	if err := ts.repl(context.Background(), lr); err != nil {
		t.Fatal(err)
	}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"SELECT 1"}) {
		t.Errorf("executed %q: the interrupted lines must be dropped", got)
	}
	wantPrompts := []string{prompt, contPrompt, contPrompt, prompt, contPrompt, prompt, prompt}
	if !reflect.DeepEqual(lr.prompts, wantPrompts) {
		t.Errorf("prompts %q, want %q", lr.prompts, wantPrompts)
	}
	if want := []string{"SELECT 1 ;", `\timing on`}; !reflect.DeepEqual(lr.history, want) {
		t.Errorf("history %q, want %q", lr.history, want)
	}
}

func TestREPLCancelRunningStatement(t *testing.T) {
	ts := newTestShell(t, formatTable)
	intr := make(chan struct{}, 1)
	ts.interrupts = intr
	go func() {
		<-ts.fake.started // the unbounded query is streaming
		intr <- struct{}{}
	}()
	input := "STREAM;\nSELECT 1;\n"
	if err := ts.repl(context.Background(), newReaderLines(strings.NewReader(input), nil)); err != nil {
		t.Fatal(err)
	}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"STREAM", "SELECT 1"}) {
		t.Errorf("executed %q: the shell must go on after a cancel", got)
	}
	out, errs := ts.stdout.String(), ts.stderr.String()
	if !strings.Contains(errs, "Query cancelled.") {
		t.Errorf("stderr: %q", errs)
	}
	if strings.Contains(errs, "ERROR") {
		t.Errorf("a cancel is not an error: %q", errs)
	}
	// The stream printed its header and first row, closed its table, and
	// the next statement ran.
	if !strings.Contains(out, "|                    0 |") || !strings.Contains(out, "1 row, interrupted") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestScriptStopsAtFirstError(t *testing.T) {
	ts := newTestShell(t, formatCSV)
	script := "SELECT 1;\nCREATE TABLE t (a INT);\nSELECT\n  bad;\nSELECT 1;\n"
	err := ts.runScript(context.Background(), script)
	if err == nil {
		t.Fatal("no error")
	}
	if got := ts.fake.statements(); len(got) != 3 {
		t.Errorf("executed %q: must stop at the failing statement", got)
	}
	// csv: stdout holds only results; the acknowledgement went to stderr.
	if got := ts.stdout.String(); got != "x\n1\n" {
		t.Errorf("stdout = %q", got)
	}
	want := "Table 't' created.\nERROR at line 4, column 3: unknown column 'bad'\nLINE 4:   bad;\n          ^\n"
	if got := ts.stderr.String(); got != want {
		t.Errorf("stderr =\n%s\nwant\n%s", got, want)
	}
}

func TestScriptPanicIsAnError(t *testing.T) {
	ts := newTestShell(t, formatJSON)
	err := ts.runScript(context.Background(), "SELECT 1; PANIC; SELECT 1")
	var ie *internalError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an internal error", err)
	}
	if got := ts.stdout.String(); got != "[\n{\"x\":1}\n]\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestEveryFormatThroughShellLeavesBatchColumnar(t *testing.T) {
	for _, f := range formatNames {
		ts := newTestShell(t, f)
		before := exec.Global.BatchesMaterialized.Load()
		if err := ts.runScript(context.Background(), "SELECT all"); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if after := exec.Global.BatchesMaterialized.Load(); after != before {
			t.Errorf("%s: the shell materialised %d batches", f, after-before)
		}
	}
}

func TestScriptBackslashCommands(t *testing.T) {
	ts := newTestShell(t, formatTable)
	script := "\\format csv\nSELECT 1;\n\\timing on\nSELECT\n  bad;\n"
	if err := ts.runScript(context.Background(), script); err == nil {
		t.Fatal("no error")
	}
	if got := ts.stdout.String(); got != "x\n1\n" {
		t.Errorf("stdout %q", got)
	}
	// The blanked command lines keep the statement's line numbers.
	if !strings.Contains(ts.stderr.String(), "ERROR at line 5, column 3: unknown column 'bad'\nLINE 5:   bad;\n") {
		t.Errorf("stderr %q", ts.stderr.String())
	}
	ts = newTestShell(t, formatTable)
	if err := ts.runScript(context.Background(), "SELECT 1;\n\\nope\nSELECT 1;"); !errors.Is(err, errCommand) {
		t.Errorf("unknown command in a script: err = %v", err)
	}
	if got := ts.fake.statements(); len(got) != 1 {
		t.Errorf("ran %q after a failed command", got)
	}
	ts = newTestShell(t, formatTable)
	if err := ts.runScript(context.Background(), "SELECT 1;\n\\q\nSELECT 1;"); err != nil || len(ts.fake.statements()) != 1 {
		t.Errorf("\\q in a script: err %v, ran %q", err, ts.fake.statements())
	}
}
