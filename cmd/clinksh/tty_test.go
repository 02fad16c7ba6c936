package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInteractiveTerminal runs the real binary on a real pseudo-terminal
// (a tmux pane) with the real engine: readline, the prompts, a multi-line
// statement, Ctrl-C cancelling a running unbounded query without leaving
// the shell, Ctrl-C at the prompt clearing the line, the history file and
// Ctrl-D. The programmatic REPL tests cover the same loop in detail; this
// one proves the terminal wiring (raw mode at the prompt, SIGINT while a
// query runs).
func TestInteractiveTerminal(t *testing.T) {
	bin := clinkshBinary(t)
	dir := t.TempDir()
	hist := filepath.Join(dir, "hist")
	rcFile := filepath.Join(dir, "rc")
	term := startTmux(t, 160, 50,
		"CLINK_HISTORY="+hist+" "+bin+"; echo $? > "+rcFile+"; sleep 60")
	run, send := term.run, term.send

	pane := func() string { return run("capture-pane", "-p", "-S", "-5000") }
	// waitFor waits until the pane shows what at least n times. The
	// deadline only bounds a failing run; nothing is timed.
	waitFor := func(what string, n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			p := pane()
			if strings.Count(p, what) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane never showed %q %d times:\n%s", what, n, p)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	waitFor(strings.TrimSpace(prompt), 1)
	send("SELECT 1 AS a,")
	waitFor(strings.TrimRight(contPrompt, " "), 1)
	send("  2 AS b;")
	waitFor("1 row, finished", 1)
	waitFor(strings.TrimSpace(prompt), 2)

	// An unbounded query streams until Ctrl-C, which cancels it only.
	send("SELECT auction FROM bid;")
	waitFor("|                 1", 3) // rows are arriving
	run("send-keys", "C-c")
	waitFor("Query cancelled.", 1)
	waitFor(strings.TrimSpace(prompt), 3)

	// Ctrl-C at the prompt drops the half-typed statement.
	run("send-keys", "-l", "SELECT garbage")
	waitFor("SELECT garbage", 1)
	run("send-keys", "C-c")
	send("SELECT 3 AS c;")
	waitFor("| 3 |", 1)
	send(`\bogus`)
	waitFor(`unknown command \bogus`, 1)
	if p := pane(); strings.Contains(p, "garbage'") || strings.Contains(p, "ERROR at") {
		t.Errorf("the cleared line was run:\n%s", p)
	}

	run("send-keys", "C-d")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(rcFile); err == nil && len(b) > 0 {
			if strings.TrimSpace(string(b)) != "0" {
				t.Errorf("exit code %s after Ctrl-D", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shell did not exit on Ctrl-D:\n%s", pane())
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SELECT 1 AS a, 2 AS b;", "SELECT auction FROM bid;", "SELECT 3 AS c;", `\bogus`} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("history lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "garbage") {
		t.Errorf("history holds the cleared line:\n%s", b)
	}
}

// TestInteractiveRowCapAndExpanded types, on a real terminal, a bounded
// query of 100 rows: the table shows the default cap of 40 (rows 0-19 and
// 80-99) with the count of the others; \set maxrows 4 and \x then show
// four expanded records.
func TestInteractiveRowCapAndExpanded(t *testing.T) {
	bin := clinkshBinary(t)
	term := startTmux(t, 200, 60, "CLINK_HISTORY="+filepath.Join(t.TempDir(), "hist")+" "+bin+"; sleep 60")
	waitFor := term.waitFor
	query := valuesQuery(100)
	waitFor(strings.TrimSpace(prompt))
	term.send(query)
	p := waitFor("100 rows, finished; ... 60 more rows not shown")
	for _, want := range []string{"|   0 |", "|  19 |", "|  80 |", "|  99 |", "| ... |"} {
		if !strings.Contains(p, want) {
			t.Errorf("pane lacks %q:\n%s", want, p)
		}
	}
	for _, absent := range []string{"|  20 |", "|  79 |"} {
		if strings.Contains(p, absent) {
			t.Errorf("pane shows %q under the cap:\n%s", absent, p)
		}
	}
	term.send(`\set maxrows 4`)
	term.send(`\x`)
	waitFor("Expanded display is on.")
	term.send(query)
	p = waitFor("100 rows, finished; ... 96 more rows not shown")
	for _, want := range []string{"-[ RECORD 1 ]", "x | 0\n", "-[ RECORD 2 ]", "... 96 more rows\n", "-[ RECORD 99 ]", "x | 99\n"} {
		if !strings.Contains(p, want) {
			t.Errorf("pane lacks %q:\n%s", want, p)
		}
	}
}

// TestInteractivePager: on a terminal a table taller than the screen goes
// through $PAGER (here a sed that marks every line, standing in for less),
// a short one does not, and \pset pager off prints the tall one directly.
func TestInteractivePager(t *testing.T) {
	bin := clinkshBinary(t)
	dir := t.TempDir()
	term := startTmux(t, 120, 30, "PAGER=\"sed 's/^/PAGED:/'\" CLINK_HISTORY="+filepath.Join(dir, "hist")+" "+bin+"; sleep 60")
	waitFor := term.waitFor
	tall := valuesQuery(50)
	waitFor(strings.TrimSpace(prompt))
	term.send(`\set maxrows 0`)
	term.send("SELECT 7 AS short;")
	p := waitFor("1 row, finished")
	if strings.Contains(p, "PAGED:") {
		t.Errorf("a one-row table went through the pager:\n%s", p)
	}
	term.send(tall)
	p = waitFor("PAGED:50 rows, finished")
	if !strings.Contains(p, "PAGED:| 49 |") {
		t.Errorf("the pager did not get the rows:\n%s", p)
	}
	// An uncapped result long enough to stream goes to the pager too, as
	// it arrives (1,840 bids in 2,000 events).
	term.send("CREATE TABLE b WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '2000');")
	waitFor("Table 'b' created.")
	term.send("SELECT auction FROM b;")
	p = waitFor("PAGED:1840 rows, finished")
	if !strings.Contains(p, "PAGED:+------") || strings.Contains(p, "\n1840 rows") {
		t.Errorf("the streamed table did not go whole through the pager:\n%s", p)
	}
	term.send(`\pset pager off`)
	waitFor("Pager is off.")
	term.send("SELECT 'direct' AS marker;")
	waitFor("| direct |")
	term.send(tall)
	waitFor("\n50 rows, finished")
}

// valuesQuery is a bounded query of n rows, x = 0 ... n-1.
func valuesQuery(n int) string {
	values := make([]string, n)
	for i := range values {
		values[i] = fmt.Sprintf("(%d)", i)
	}
	return "SELECT x FROM (VALUES " + strings.Join(values, ",") + ") t(x);"
}
