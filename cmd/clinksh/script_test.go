package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestBackslashCommandWithinStatement: a command line within a statement
// runs at once and the statement goes on; its line stays counted, so an
// error further down names the right line. Inside a string literal a
// backslash line is SQL.
func TestBackslashCommandWithinStatement(t *testing.T) {
	ts := newTestShell(t, formatCSV)
	if err := ts.runScript(context.Background(), "SELECT\n\\timing on\n  1;\n"); err != nil {
		t.Fatal(err)
	}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"SELECT\n\n  1"}) {
		t.Errorf("executed %q", got)
	}
	if !ts.timing || !strings.Contains(ts.stderr.String(), "Time: ") {
		t.Errorf("\\timing on within the statement did not apply: %q", ts.stderr.String())
	}

	ts = newTestShell(t, formatCSV)
	if err := ts.runScript(context.Background(), "SELECT 1;\nSELECT\n\\x on\n  bad;\n"); err == nil {
		t.Fatal("no error")
	}
	if want := "ERROR at line 4, column 3: unknown column 'bad'\nLINE 4:   bad;\n"; !strings.Contains(ts.stderr.String(), want) {
		t.Errorf("stderr %q, want %q", ts.stderr.String(), want)
	}

	ts = newTestShell(t, formatCSV)
	_ = ts.runScript(context.Background(), "SELECT 'a\n\\x\n';\n")
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"SELECT 'a\n\\x\n'"}) || ts.expanded {
		t.Errorf("a backslash line in a string ran as a command: executed %q, expanded %v", got, ts.expanded)
	}
}

// TestREPLCommandOnContinuationLine: the same at the prompt, where the
// prompt stays the continuation prompt after the command.
func TestREPLCommandOnContinuationLine(t *testing.T) {
	ts := newTestShell(t, formatTable)
	lr := &scriptedLines{steps: []any{"SELECT", `\x`, "1;"}}
	if err := ts.repl(context.Background(), lr); err != nil {
		t.Fatal(err)
	}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"SELECT\n\n1"}) {
		t.Errorf("executed %q", got)
	}
	if !strings.Contains(ts.stdout.String(), "-[ RECORD 1 ]\nx | 1\n") {
		t.Errorf("stdout:\n%s", ts.stdout.String())
	}
	if want := []string{prompt, contPrompt, contPrompt, prompt}; !reflect.DeepEqual(lr.prompts, want) {
		t.Errorf("prompts %q, want %q", lr.prompts, want)
	}
}

// TestInclude: \i runs a file's statements and commands; an error in it
// names the file and its line and stops the file, and the script that
// included it. At the prompt the shell goes on.
func TestInclude(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "inc.sql")
	if err := os.WriteFile(file, []byte("SELECT 1;\n\\timing on\n\nSELECT\n  bad;\nSELECT 1 AS never;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestShell(t, formatCSV)
	if err := ts.runScript(context.Background(), "\\i "+file+"\nSELECT 1 AS after;\n"); err == nil {
		t.Error("no error from the included file's error")
	}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"SELECT 1", "SELECT\n  bad"}) {
		t.Errorf("executed %q", got)
	}
	if want := "ERROR at " + file + " line 5, column 3: unknown column 'bad'\n"; !strings.Contains(ts.stderr.String(), want) {
		t.Errorf("stderr %q, want %q", ts.stderr.String(), want)
	}
	if !ts.timing {
		t.Error("the file's \\timing on did not apply")
	}

	ts = newTestShell(t, formatCSV)
	lr := &scriptedLines{steps: []any{`\i ` + file, `\i ` + filepath.Join(dir, "missing.sql"), "SELECT 1 AS after;"}}
	if err := ts.repl(context.Background(), lr); err != nil {
		t.Fatal(err)
	}
	if got := ts.fake.statements(); !reflect.DeepEqual(got, []string{"SELECT 1", "SELECT\n  bad", "SELECT 1 AS after"}) {
		t.Errorf("REPL executed %q", got)
	}
	if !strings.Contains(ts.stderr.String(), "missing.sql: no such file") {
		t.Errorf("stderr %q", ts.stderr.String())
	}

	self := filepath.Join(dir, "self.sql")
	if err := os.WriteFile(self, []byte("\\i "+self+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts = newTestShell(t, formatCSV)
	if err := ts.runScript(context.Background(), "\\i "+self+"\n"); err == nil || !strings.Contains(ts.stderr.String(), "more than 16 deep") {
		t.Errorf("a file including itself: err %v, stderr %q", err, ts.stderr.String())
	}
}

// TestOutputToFile: \o FILE sends results to the file, \o alone back to
// stdout.
func TestOutputToFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.csv")
	ts := newTestShell(t, formatCSV)
	script := "\\o " + file + "\nSELECT 1;\nSELECT 1;\n\\o\nSELECT 1 AS y;\n"
	if err := ts.runScript(context.Background(), script); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "x\n1\nx\n1\n" {
		t.Errorf("file holds %q", b)
	}
	if got := ts.stdout.String(); got != "x\n1\n" {
		t.Errorf("stdout %q", got)
	}
	if err := ts.runScript(context.Background(), "\\o /nonexistent/dir/f\n"); err == nil || !strings.Contains(ts.stderr.String(), `\o: open /nonexistent/dir/f`) {
		t.Errorf("unwritable \\o: err %v stderr %q", err, ts.stderr.String())
	}
}
