package sqllogictest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/clink-sql/clink/engine"
)

// Session is what the runner needs of a session; *engine.Session has it.
type Session interface {
	Execute(ctx context.Context, stmt string, w engine.ResultWriter, opts engine.ExecOptions) (engine.Outcome, error)
	Close() error
}

// DefaultEngine is the name skipif and onlyif lines are matched against.
const DefaultEngine = "clink"

// DefaultTimeout bounds each statement.
const DefaultTimeout = 30 * time.Second

// stuckGrace is how long past its timeout a statement may take to stop
// before the runner gives its session up (at most the timeout itself).
const stuckGrace = 5 * time.Second

// Options configure a Runner. The zero value runs against a fresh clink
// session per file, at parallelism 1, with no skip list, reporting nothing.
type Options struct {
	// Engine is this engine's name for skipif/onlyif (DefaultEngine).
	Engine string
	// Timeout bounds each statement (DefaultTimeout).
	Timeout time.Duration
	// Parallelism is the sessions' SET 'parallelism' (1: the corpus is
	// small data). Ignored when NewSession is set.
	Parallelism int
	// Skips lists records known to fail (nil: none).
	Skips *SkipList
	// NewSession opens the session of one file (nil: EngineSession).
	NewSession func() (Session, error)
	// Keep, when set, selects the statement and query records to run (a
	// sample); the others are left out and not counted.
	Keep func(r *Record) bool
	// Out receives each failure (and, with Verbose, every record's
	// outcome); nil discards them.
	Out io.Writer
	// Verbose reports passes and skips too.
	Verbose bool
	// OnResult, when set, is called with every record's outcome.
	OnResult func(Result)
}

// Status is a record's outcome.
type Status int

const (
	Passed Status = iota
	Failed
	Skipped
)

// String is the status in reports.
func (s Status) String() string {
	switch s {
	case Failed:
		return "FAIL"
	case Skipped:
		return "skip"
	}
	return "ok"
}

// Result is one record's outcome.
type Result struct {
	Where  string // file:line
	SQL    string
	Status Status
	// Reason is why a record was skipped; Detail why it failed (for a
	// record skipped by the skip list, why it failed).
	Reason string
	Detail string
}

// Summary counts outcomes.
type Summary struct {
	Passed, Failed, Skipped int
}

// Add counts r.
func (s *Summary) Add(r Result) {
	switch r.Status {
	case Passed:
		s.Passed++
	case Failed:
		s.Failed++
	case Skipped:
		s.Skipped++
	}
}

// Merge adds o's counts.
func (s *Summary) Merge(o Summary) {
	s.Passed += o.Passed
	s.Failed += o.Failed
	s.Skipped += o.Skipped
}

// String is the runner's last line: "N passed, N failed, N skipped".
func (s Summary) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
}

// PassRate is passed / (passed + failed), 0 when nothing ran.
func (s Summary) PassRate() float64 {
	if s.Passed+s.Failed == 0 {
		return 0
	}
	return float64(s.Passed) / float64(s.Passed+s.Failed)
}

// Runner runs sqllogictest files.
type Runner struct {
	opts Options
}

// NewRunner returns a runner with opts (defaults filled in).
func NewRunner(opts Options) *Runner {
	if opts.Engine == "" {
		opts.Engine = DefaultEngine
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 1
	}
	if opts.NewSession == nil {
		par := opts.Parallelism
		opts.NewSession = func() (Session, error) { return EngineSession(par) }
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	return &Runner{opts: opts}
}

// EngineSession opens a clink session without the demo catalog, at the
// given parallelism.
func EngineSession(parallelism int) (Session, error) {
	s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
	set := fmt.Sprintf("SET 'parallelism' = '%d'", parallelism)
	if _, err := s.Execute(context.Background(), set, nil, engine.ExecOptions{}); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Run runs the files in order, each on a fresh session, and returns the
// counts. It stops early only when ctx is cancelled.
func (r *Runner) Run(ctx context.Context, paths ...string) Summary {
	var total Summary
	for _, p := range paths {
		if ctx.Err() != nil {
			break
		}
		total.Merge(r.RunFile(ctx, p))
	}
	return total
}

// RunFile parses and runs one file. A file that cannot be read is one
// failure.
func (r *Runner) RunFile(ctx context.Context, path string) Summary {
	recs, err := ParseFile(path)
	if err != nil {
		var s Summary
		r.report(&s, Result{Where: path, Status: Failed, Detail: err.Error()})
		return s
	}
	return r.RunRecords(ctx, path, recs)
}

// RunRecords runs the parsed records of the file at path.
func (r *Runner) RunRecords(ctx context.Context, path string, recs []Record) Summary {
	f := &fileRun{r: r, path: path, threshold: DefaultHashThreshold, labels: map[string]string{}}
	defer f.close()
	f.run(ctx, recs)
	return f.sum
}

// fileRun is the state of one file: its session, hash threshold and labels.
type fileRun struct {
	r         *Runner
	path      string
	sum       Summary
	sess      Session
	sessErr   error
	opened    bool
	stuck     string // where the session stopped answering
	threshold int
	labels    map[string]string // label -> hash line
}

func (f *fileRun) close() {
	if f.sess != nil && f.stuck == "" {
		f.sess.Close()
	}
}

func (f *fileRun) run(ctx context.Context, recs []Record) {
	skips := f.r.opts.Skips.forFile(f.path)
	var wholeFile *SkipEntry
	lineSkips := map[int]*SkipEntry{}
	for _, e := range skips {
		if e.Line == 0 {
			wholeFile = e
		} else {
			lineSkips[e.Line] = e
		}
	}
	// An entry must name a record's line, or the list has rotted.
	starts := map[int]bool{}
	for i := range recs {
		if recs[i].Kind == Statement || recs[i].Kind == Query || recs[i].Kind == Invalid {
			starts[recs[i].Line] = true
		}
	}
	for _, e := range skips {
		if e.Line > 0 && !starts[e.Line] {
			f.report(Result{Where: fmt.Sprintf("%s:%d", f.path, e.Line), Status: Failed,
				Detail: fmt.Sprintf("the skip list (%s) names a line that starts no statement or query: remove or fix the entry", e.Source)})
		}
	}

	for i := range recs {
		rec := &recs[i]
		if ctx.Err() != nil {
			return
		}
		if (rec.Kind == Statement || rec.Kind == Query) && f.r.opts.Keep != nil && !f.r.opts.Keep(rec) {
			continue
		}
		if reason, skip := f.conditionSkip(rec); skip {
			if rec.Kind == Query && rec.Label != "" {
				if h, ok := labelHash(rec); ok {
					if _, seen := f.labels[rec.Label]; !seen {
						f.labels[rec.Label] = h
					}
				}
			}
			if rec.Kind != HashThreshold && rec.Kind != Halt {
				f.report(Result{Where: rec.Where(), SQL: rec.SQL, Status: Skipped, Reason: reason})
			}
			continue
		}
		switch rec.Kind {
		case HashThreshold:
			f.threshold = rec.Threshold
			continue
		case Halt:
			return
		}
		if wholeFile != nil {
			f.report(Result{Where: rec.Where(), SQL: rec.SQL, Status: Skipped, Reason: wholeFile.Reason})
			continue
		}
		res := f.runRecord(ctx, rec)
		if ctx.Err() != nil {
			return // interrupted: the record did not fail on its own
		}
		if e, listed := lineSkips[rec.Line]; listed {
			switch res.Status {
			case Failed:
				res.Status, res.Reason = Skipped, e.Reason
			case Passed:
				res.Status = Failed
				res.Detail = fmt.Sprintf("passes, but the skip list (%s) skips it (%q): remove the entry", e.Source, e.Reason)
			}
		}
		f.report(res)
	}
}

// conditionSkip applies the record's skipif/onlyif lines.
func (f *fileRun) conditionSkip(rec *Record) (string, bool) {
	for _, c := range rec.Conditions {
		match := strings.EqualFold(c.Engine, f.r.opts.Engine)
		if c.Only && !match {
			return "onlyif " + c.Engine, true
		}
		if !c.Only && match {
			return "skipif " + c.Engine, true
		}
	}
	return "", false
}

// runRecord runs one statement, query or invalid record.
func (f *fileRun) runRecord(ctx context.Context, rec *Record) Result {
	res := Result{Where: rec.Where(), SQL: rec.SQL, Status: Failed}
	switch rec.Kind {
	case Invalid:
		res.Detail = rec.Problem
		return res
	case Statement:
		err := f.exec(ctx, rec.SQL, &collector{discard: true})
		res.Detail = checkStatement(rec, err)
	case Query:
		w := &collector{types: rec.Types}
		if err := f.exec(ctx, rec.SQL, w); err != nil {
			res.Detail = "query failed: " + err.Error()
			break
		}
		if !w.columns {
			res.Detail = "the statement returned no result set"
			break
		}
		res.Detail = f.checkQuery(rec, w.values)
	}
	if res.Detail == "" {
		res.Status = Passed
	}
	return res
}

// checkStatement says why a statement's outcome is wrong ("" when right).
func checkStatement(rec *Record, err error) string {
	if !rec.ExpectError {
		if err != nil {
			return "statement failed: " + err.Error()
		}
		return ""
	}
	if err == nil {
		return "statement succeeded, an error was expected"
	}
	if rec.ErrorPattern != "" {
		re, rerr := regexp.Compile(rec.ErrorPattern)
		if rerr != nil {
			return fmt.Sprintf("bad error pattern %q: %v", rec.ErrorPattern, rerr)
		}
		if !re.MatchString(err.Error()) {
			return fmt.Sprintf("the error does not match /%s/: %v", rec.ErrorPattern, err)
		}
	}
	if rec.ErrorText != "" && !strings.Contains(err.Error(), rec.ErrorText) {
		return fmt.Sprintf("the error does not contain %q: %v", rec.ErrorText, err)
	}
	return ""
}

// checkQuery compares a query's values with the record and its label.
func (f *fileRun) checkQuery(rec *Record, values []string) string {
	c := compareResult(rec, values, f.threshold)
	if rec.Label == "" {
		return c.detail
	}
	prev, seen := f.labels[rec.Label]
	if !c.ok {
		// A wrong result does not define its label: later queries are
		// checked against what this one should have given.
		if h, ok := labelHash(rec); ok && !seen {
			f.labels[rec.Label] = h
		}
		return c.detail
	}
	if !seen {
		f.labels[rec.Label] = c.hash
		return ""
	}
	if prev != c.hash {
		return fmt.Sprintf("labeled result [%s] does not agree with previous values: %s, before %s", rec.Label, c.hash, prev)
	}
	return ""
}

// exec runs one statement on the file's session under the timeout. A
// panic becomes an error. A statement that does not stop within
// stuckGrace of its timeout leaves the session locked, so the file's
// remaining records fail without running.
func (f *fileRun) exec(ctx context.Context, sql string, w *collector) error {
	if f.stuck != "" {
		return fmt.Errorf("not run: the session stopped answering at %s", f.stuck)
	}
	if !f.opened {
		f.opened = true
		f.sess, f.sessErr = f.r.opts.NewSession()
	}
	if f.sessErr != nil {
		return fmt.Errorf("no session: %w", f.sessErr)
	}
	timeout := f.r.opts.Timeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	sess := f.sess
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		_, err := sess.Execute(ctx, sql, w, engine.ExecOptions{})
		done <- err
	}()
	grace := time.NewTimer(timeout + min(stuckGrace, timeout))
	defer grace.Stop()
	select {
	case err := <-done:
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("timed out after %s: %w", timeout, err)
		}
		return err
	case <-grace.C:
		f.stuck = fmt.Sprintf("%s (%s)", f.path, firstLine(sql))
		return fmt.Errorf("timed out after %s and did not stop; the rest of the file is not run", timeout)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// report counts res and writes it out.
func (f *fileRun) report(res Result) { f.r.report(&f.sum, res) }

func (r *Runner) report(sum *Summary, res Result) {
	sum.Add(res)
	if r.opts.OnResult != nil {
		r.opts.OnResult(res)
	}
	out := r.opts.Out
	switch {
	case res.Status == Failed:
		// The first line of the detail says what went wrong; the SQL
		// follows, then the rest (expected and got).
		head, rest, _ := strings.Cut(res.Detail, "\n")
		fmt.Fprintf(out, "%s: %s\n", res.Where, head)
		if res.SQL != "" {
			fmt.Fprintf(out, "  sql:\n%s\n", indent(res.SQL, "    "))
		}
		if rest != "" {
			fmt.Fprintf(out, "%s\n", indent(rest, "  "))
		}
	case !r.opts.Verbose:
	case res.Status == Skipped:
		fmt.Fprintf(out, "%s: skipped: %s\n", res.Where, res.Reason)
		if res.Detail != "" {
			fmt.Fprintf(out, "  (fails with: %s)\n", indentRest(res.Detail))
		}
	default:
		fmt.Fprintf(out, "%s: ok\n", res.Where)
	}
}

// indentRest indents every line of s but the first.
func indentRest(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return first + "\n" + indent(rest, "  ")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
