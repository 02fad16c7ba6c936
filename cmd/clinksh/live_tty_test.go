package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLiveTableTerminal runs the real binary in a tmux pane: an unbounded
// updating query in result mode table is redrawn in place (one header on
// screen, the counts read off the screen grow between two captures), and
// Ctrl-C brings the prompt back with the last table still shown.
func TestLiveTableTerminal(t *testing.T) {
	bin := clinkshBinary(t)
	dir := t.TempDir()
	term := startTmux(t, 120, 30,
		"CLINK_HISTORY="+filepath.Join(dir, "hist")+" "+bin+"; sleep 60")
	run, send := term.run, term.send

	// screen is what the pane shows now (no scrollback).
	screen := func() string { return run("capture-pane", "-p") }
	// waitFor waits until the screen satisfies ok. The deadline only
	// bounds a failing run; nothing is timed.
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %s:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	google := regexp.MustCompile(`(?m)^\| Google +\| +(\d+) \|$`)
	// googleCount is the count on the Google row of the table on screen
	// (-1: no such row).
	googleCount := func(s string) int64 {
		m := google.FindStringSubmatch(s)
		if m == nil {
			return -1
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatalf("count %q: %v", m[1], err)
		}
		return n
	}
	header := regexp.MustCompile(`(?m)^\| channel +\| +n \|$`)
	headers := func(s string) int { return len(header.FindAllString(s, -1)) }
	prompt := strings.TrimSpace(prompt)

	waitFor("the prompt", func(s string) bool { return strings.Contains(s, prompt) })
	send("SET 'sql-client.execution.result-mode' = 'table';")
	waitFor("the second prompt", func(s string) bool { return strings.Count(s, prompt) >= 2 })
	send("SELECT channel, COUNT(*) AS n FROM bid GROUP BY channel;")

	live := func(s string) bool { return strings.Contains(s, "Ctrl-C to stop)") && googleCount(s) >= 0 }
	first := waitFor("a live table with a Google row", live)
	n1 := googleCount(first)
	second := waitFor("the Google count growing past "+strconv.FormatInt(n1, 10), func(s string) bool {
		return live(s) && googleCount(s) > n1
	})
	n2 := googleCount(second)
	// Redrawn in place: one table in the whole pane history, not one
	// per frame scrolled away above the screen.
	if h := run("capture-pane", "-p", "-S", "-"); headers(h) != 1 {
		t.Fatalf("%d table headers in the pane history, want 1 (the table must be redrawn in place):\n%s", headers(h), h)
	}
	for _, s := range []string{first, second} {
		// Capped to fit the screen.
		if !strings.Contains(s, "(showing ") {
			t.Errorf("thousands of channels must be capped to the screen:\n%s", s)
		}
	}

	run("send-keys", "C-c")
	final := waitFor("the prompt after Ctrl-C", func(s string) bool {
		return strings.Contains(s, "Query cancelled.\n"+prompt)
	})
	if strings.Contains(final, "Ctrl-C to stop)") {
		t.Errorf("the final frame still offers Ctrl-C:\n%s", final)
	}
	if c := headers(final); c != 1 {
		t.Errorf("%d table headers after Ctrl-C, want the last table once:\n%s", c, final)
	}
	if n3 := googleCount(final); n3 < n2 {
		t.Errorf("after Ctrl-C the Google count is %d, was %d on screen before (the table must stay)", n3, n2)
	}
	if !regexp.MustCompile(`\(showing \d+ of [\d,]+ rows, [\d,]+ changes\)`).MatchString(final) {
		t.Errorf("no final footer:\n%s", final)
	}
}
