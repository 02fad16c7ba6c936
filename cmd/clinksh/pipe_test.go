package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ECoprocess drives the real binary over pipes as a coprocess: it
// writes one statement, reads that statement's result, and only then
// writes the next. A shell that read stdin to its end before running
// anything would never answer the first statement (stdin stays open), so
// the read would block until the deadline, which only bounds a failing run.
func TestE2ECoprocess(t *testing.T) {
	cmd, stdin, stdoutPipe, stderr := startPiped(t, "--format", "csv")

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdoutPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case got, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before %q; stderr:\n%s", w, stderr.String())
				}
				if got != w {
					t.Fatalf("stdout line %q, want %q", got, w)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("no %q while stdin is still open: statements are not run as they are read", w)
			}
		}
	}
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s); err != nil {
			t.Fatal(err)
		}
	}

	write("SELECT 1 AS first;\n")
	expect("first", "1")
	// A statement over several lines, with a backslash command within it.
	write("SELECT 2\n")
	write("\\format ndjson\n")
	write("  AS second;\n")
	expect(`{"second":2}`)
	// A last statement without ';' runs at the end of input.
	write("SELECT 3 AS third")
	stdin.Close()
	expect(`{"third":3}`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	if _, ok := <-lines; ok {
		t.Error("more output than the three results")
	}
}

// TestE2EStdinErrorLine: an error from piped stdin names its line counted
// over the whole input, not within the statement.
func TestE2EStdinErrorLine(t *testing.T) {
	r := runClinksh(t, "SELECT 1 AS a;\n\nSELECT\n  nope FROM bid;\nSELECT 2;\n", "--format", "csv")
	if r.code != exitError || r.stdout != "a\n1\n" {
		t.Errorf("exit %d stdout %q", r.code, r.stdout)
	}
	if want := "ERROR at line 4, column 3: "; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want it to hold %q", r.stderr, want)
	}
}

// TestE2EMetricsServeWhileStdinOpen: --metrics-addr serves from the start,
// while the statements of stdin are still to come.
func TestE2EMetricsServeWhileStdinOpen(t *testing.T) {
	cmd := exec.Command(clinkshBinary(t), "--metrics-addr", "127.0.0.1:0", "--format", "csv")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CLINK_HISTORY="+filepath.Join(cmd.Dir, "hist"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "metrics on "); ok {
				urls <- url
			}
		}
		close(urls)
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatal("no metrics address while stdin is open")
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("GET %s: %s, %d bytes", url, resp.Status, len(body))
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Error(err)
	}
}

// TestE2EInterruptWhileWaitingForStdin: Ctrl-C (SIGINT) stops a script
// that waits for its next line on an open pipe, with exit code 130.
func TestE2EInterruptWhileWaitingForStdin(t *testing.T) {
	cmd := exec.Command(clinkshBinary(t), "--format", "csv")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CLINK_HISTORY="+filepath.Join(cmd.Dir, "hist"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if _, err := io.WriteString(stdin, "SELECT 1 AS a;\n"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for want := range strings.SplitSeq("a 1", " ") { // the shell is now reading again
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("stdout %q, want %q", sc.Text(), want)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit: %v, want code %d", err, exitInterrupted)
	}
}

// TestE2EUncappedTableStreams: with \set maxrows 0 a long bounded result in
// the table format prints while the query runs, not when it ends. The
// source is paced (4,000 events at 1,000 a second, 3,680 of them bids), so
// the query runs for seconds; on its first row the test presses Ctrl-C
// (SIGINT). A table printed as it arrives ends there: its rows so far, then
// "N rows, interrupted" with N of them. One held to the end would show its
// first row only once the query finished, every row and "finished".
func TestE2EUncappedTableStreams(t *testing.T) {
	cmd, _, stdout, stderr := startPiped(t, "-c", "\\set maxrows 0\n"+
		"CREATE TABLE b WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '4000', 'first-event.rate' = '1000');\n"+
		"SELECT auction, price FROM b")
	sc := bufio.NewScanner(stdout)
	rows := 0
	var last string
	for sc.Scan() {
		last = sc.Text()
		if strings.HasPrefix(last, "| ") && !strings.Contains(last, "auction") {
			if rows == 0 {
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			}
			rows++
		}
	}
	_ = cmd.Wait()
	if want := fmt.Sprintf("%d rows, interrupted", rows); last != want || rows < streamAfter || rows >= 3680 {
		t.Errorf("last line %q after %d rows, want %q, at least the %d rows that size the table and fewer than all 3680; stderr:\n%s",
			last, rows, want, streamAfter, stderr.String())
	}
}

// startPiped starts the binary with args, its stdin and stdout on pipes
// and its stderr collected; the process is killed when the test ends.
func startPiped(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(clinkshBinary(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CLINK_HISTORY="+filepath.Join(cmd.Dir, "hist"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, stdin, stdout, stderr
}
