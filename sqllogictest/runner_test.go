package sqllogictest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// runFiles runs files under opts and returns the summary and the results
// by "file:line".
func runFiles(t *testing.T, opts Options, files ...string) (Summary, map[string]Result, string) {
	t.Helper()
	results := map[string]Result{}
	var out bytes.Buffer
	opts.Out = &out
	opts.OnResult = func(r Result) {
		if _, dup := results[r.Where]; dup {
			t.Errorf("%s reported twice", r.Where)
		}
		results[r.Where] = r
	}
	sum := NewRunner(opts).Run(context.Background(), files...)
	return sum, results, out.String()
}

// checkedSessions opens engine sessions whose Arrow memory is checked
// when the test ends.
func checkedSessions(t *testing.T) func() (Session, error) {
	return func() (Session, error) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		t.Cleanup(func() { mem.AssertSize(t, 0) })
		s := engine.NewSession(engine.SessionOptions{Mem: mem, NoDemoCatalog: true})
		if _, err := s.Execute(context.Background(), "SET 'parallelism' = '2'", nil, engine.ExecOptions{}); err != nil {
			return nil, err
		}
		return s, nil
	}
}

// The files under testdata/sqllogictest run on today's engine, every
// record passing or skipped by its skipif/onlyif line. The counts are the
// records of each file, counted by hand.
func TestRunsTestdata(t *testing.T) {
	t.Chdir("..") // the files' paths are relative to the repository root
	cases := []struct {
		file            string
		passed, skipped int
		checkMemory     bool
	}{
		// 20 records before the second halt: 2 skipped (skipif clink,
		// onlyif sqlite), the conditional halt not counted.
		{"testdata/sqllogictest/select.test", 16, 2, true},
		{"testdata/sqllogictest/parquet.test", 8, 0, true},
		// A dropped memory table is not released yet (DROP TABLE does not
		// close it today), so its Parquet batches outlive the session.
		{"testdata/sqllogictest/memory.test", 9, 0, false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			opts := Options{}
			if c.checkMemory {
				opts.NewSession = checkedSessions(t)
			}
			sum, results, out := runFiles(t, opts, c.file)
			if sum.Failed != 0 || sum.Passed != c.passed || sum.Skipped != c.skipped {
				t.Errorf("%s, want %d passed, 0 failed, %d skipped\n%s", sum, c.passed, c.skipped, out)
			}
			if len(results) != c.passed+c.skipped {
				t.Errorf("%d results reported", len(results))
			}
		})
	}
}

// Each deliberate failure in testdata/sqllogictest/fail is found and
// counted, with the reason it failed, and the skip list works both ways.
func TestFailuresAreDetected(t *testing.T) {
	t.Chdir("..")
	const file = "testdata/sqllogictest/fail/failures.test"
	skips, err := ParseSkipList("test-skips", strings.NewReader(`
fail/failures.test:68 a known wrong answer
fail/failures.test:74 fixed since it was listed
fail/failures.test:3 not a record
other.test:* a file that is not run
`))
	if err != nil {
		t.Fatal(err)
	}
	sum, results, out := runFiles(t, Options{Skips: skips}, file)
	failures := map[int]string{
		7:  "wrong result",
		13: "statement failed",
		17: "statement succeeded, an error was expected",
		21: "does not match /permission denied/",
		25: "wrong number of result columns",
		34: "labeled result [label-x] does not agree",
		40: "wrong result hash",
		46: "wrong result",
		54: "unknown sort method",
		58: "unknown record type",
		62: "query failed",
		74: "passes, but the skip list (test-skips:3) skips it",
		3:  "the skip list (test-skips:4) names a line that starts no statement or query",
		86: "returned no result set",
	}
	for line, msg := range failures {
		r, ok := results[fmt.Sprintf("%s:%d", file, line)]
		if !ok || r.Status != Failed || !strings.Contains(r.Detail, msg) {
			t.Errorf("line %d: %+v, want a failure saying %q", line, r, msg)
		}
		if !strings.Contains(out, fmt.Sprintf("%s:%d: ", file, line)) {
			t.Errorf("line %d: the failure is not in the output", line)
		}
	}
	for _, line := range []int{29, 80} {
		if r := results[fmt.Sprintf("%s:%d", file, line)]; r.Status != Passed {
			t.Errorf("line %d: %+v, want a pass", line, r)
		}
	}
	if r := results[file+":68"]; r.Status != Skipped || r.Reason != "a known wrong answer" || !strings.Contains(r.Detail, "wrong result") {
		t.Errorf("line 68: %+v, want skipped by the skip list, with why it fails", r)
	}
	if want := (Summary{Passed: 2, Failed: len(failures), Skipped: 1}); sum != want {
		t.Errorf("%s, want %s", sum, want)
	}
	// A failure shows the SQL, what was expected and what came.
	if !strings.Contains(out, file+":7: wrong result\n  sql:\n    SELECT 1\n  expected:\n      2\n  got (1 values):\n      1\n") {
		t.Errorf("the wrong result's report:\n%s", out)
	}
}

func TestWholeFileSkip(t *testing.T) {
	t.Chdir("..")
	skips, err := ParseSkipList("s", strings.NewReader("sqllogictest/select.test:* not today\n"))
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	sum, results, _ := runFiles(t, Options{Skips: skips, NewSession: func() (Session, error) {
		opened++
		return nil, errors.New("no session should be opened")
	}}, "testdata/sqllogictest/select.test")
	if sum.Passed+sum.Failed != 0 || sum.Skipped != 18 || opened != 0 {
		t.Errorf("%s, %d sessions opened; want every record skipped without a session", sum, opened)
	}
	if r := results["testdata/sqllogictest/select.test:8"]; r.Reason != "not today" {
		t.Errorf("reason %q", r.Reason)
	}
}

// fakeSession answers by the statement's text: OK gives one row, SLEEP
// waits for its context, HANG ignores it, PANIC panics, anything else is
// an error.
type fakeSession struct {
	release <-chan struct{}
	closed  *atomic.Int32
}

var oneColumn = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)

func (f *fakeSession) Execute(ctx context.Context, stmt string, w engine.ResultWriter, _ engine.ExecOptions) (engine.Outcome, error) {
	switch stmt {
	case "OK":
		if err := w.Columns(oneColumn, true); err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewRowBatch(oneColumn, []exec.Row{{int64(1)}})
		defer b.Release()
		return engine.Outcome{}, w.Batch(b)
	case "SLEEP":
		<-ctx.Done()
		return engine.Outcome{}, ctx.Err()
	case "HANG":
		<-f.release
		return engine.Outcome{}, nil
	case "PANIC":
		panic("boom")
	}
	return engine.Outcome{}, fmt.Errorf("no such statement %q", stmt)
}

func (f *fakeSession) Close() error {
	f.closed.Add(1)
	return nil
}

func parseString(t *testing.T, name, src string) []Record {
	t.Helper()
	recs, err := Parse(name, strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A statement past its timeout, a panic and a session that stops
// answering are failures; the run goes on (on a stuck session, the rest
// of the file fails without running).
func TestTimeoutsPanicsAndStuckSessions(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var closed atomic.Int32
	var results []Result
	r := NewRunner(Options{
		Timeout:    20 * time.Millisecond,
		NewSession: func() (Session, error) { return &fakeSession{release: release, closed: &closed}, nil },
		OnResult:   func(res Result) { results = append(results, res) },
	})
	src := "query I\nSLEEP\n\nstatement ok\nPANIC\n\nquery I\nOK\n----\n1\n\nstatement ok\nHANG\n\nquery I\nOK\n----\n1\n"
	sum := r.RunRecords(context.Background(), "f.test", parseString(t, "f.test", src))
	want := []struct {
		status Status
		msg    string
	}{
		{Failed, "timed out after 20ms"},
		{Failed, "panic: boom"},
		{Passed, ""},
		{Failed, "did not stop"},
		{Failed, "not run: the session stopped answering at f.test (HANG)"},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(results), len(want), results)
	}
	for i, w := range want {
		if results[i].Status != w.status || !strings.Contains(results[i].Detail, w.msg) {
			t.Errorf("record %d: %v %q, want %v %q", i, results[i].Status, results[i].Detail, w.status, w.msg)
		}
	}
	if sum != (Summary{Passed: 1, Failed: 4}) {
		t.Errorf("summary %s", sum)
	}
	if closed.Load() != 0 {
		t.Error("a stuck session was closed while its statement still runs")
	}

	// The next file gets a fresh session, which is closed after it.
	sum = r.RunRecords(context.Background(), "g.test", parseString(t, "g.test", "query I\nOK\n----\n1\n"))
	if sum.Passed != 1 || closed.Load() != 1 {
		t.Errorf("next file: %s, %d sessions closed", sum, closed.Load())
	}
}

func TestSessionPerFileAndKeep(t *testing.T) {
	var opened, closed atomic.Int32
	keepOdd := func(r *Record) bool { return r.Line%2 == 1 }
	r := NewRunner(Options{
		Keep: keepOdd,
		NewSession: func() (Session, error) {
			opened.Add(1)
			return &fakeSession{closed: &closed}, nil
		},
	})
	// Records on lines 1, 4, 7 and 10: Keep drops 4 and 10 without a count.
	src := "query I\nOK\n\nquery I\nOK\n\nquery I\nOK\n\nquery I\nOK\n"
	var total Summary
	for _, f := range []string{"a.test", "b.test"} {
		total.Merge(r.RunRecords(context.Background(), f, parseString(t, f, src)))
	}
	if total != (Summary{Passed: 4}) || opened.Load() != 2 || closed.Load() != 2 {
		t.Errorf("%s, %d sessions opened, %d closed; want 4 passed and one session per file", total, opened.Load(), closed.Load())
	}

	// A session that cannot be opened fails the file's records.
	r = NewRunner(Options{NewSession: func() (Session, error) { return nil, errors.New("out of sessions") }})
	sum := r.RunRecords(context.Background(), "c.test", parseString(t, "c.test", src))
	if sum.Failed != 4 {
		t.Errorf("without a session: %s", sum)
	}
	// An unreadable file is one failure.
	if sum := r.Run(context.Background(), "no/such.test"); sum != (Summary{Failed: 1}) {
		t.Errorf("a missing file: %s", sum)
	}
}

func TestSummaryLine(t *testing.T) {
	s := Summary{Passed: 3, Failed: 1, Skipped: 2}
	if s.String() != "3 passed, 1 failed, 2 skipped" {
		t.Errorf("%q", s.String())
	}
	if s.PassRate() != 0.75 || (Summary{}).PassRate() != 0 {
		t.Errorf("pass rate %v", s.PassRate())
	}
}
