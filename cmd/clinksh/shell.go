package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
)

// executor is what the shell needs from a session; *engine.Session
// satisfies it, and the tests drive the shell with a fake.
type executor interface {
	Execute(ctx context.Context, stmt string, w engine.ResultWriter, opts engine.ExecOptions) (engine.Outcome, error)
	Tables() []engine.TableInfo
}

// Progress line timing: shown for a query running longer than
// progressDelay, redrawn at most every progressInterval.
const (
	progressDelay    = time.Second
	progressInterval = 250 * time.Millisecond
)

// shell runs statements and renders what they return. stdout carries query
// results (and, in the table format, everything meant for the human);
// with a machine format (csv, tsv, json, ndjson) acknowledgements, timings
// and the progress line go to stderr so stdout can be piped.
type shell struct {
	sess   executor
	out    *bufio.Writer // stdout
	errw   io.Writer     // stderr
	format string
	timing bool
	// maxRows caps bounded results in the table format (\set maxrows;
	// 0: no cap); expanded prints them one record per block (\x).
	maxRows  int
	expanded bool
	// progressTTY: stderr is a terminal, so the progress line may be drawn.
	progressTTY bool
	// termSize, set when stdout is a terminal, reports its width and
	// height: result mode table then redraws the table live.
	termSize func() (width, height int)
	// interrupts delivers Ctrl-C while a statement runs (the REPL); it
	// cancels that statement only. Nil in scripts, where Ctrl-C cancels
	// the whole run through the root context.
	interrupts <-chan struct{}
	// mem is the allocator for encoding row batches (tests check it).
	mem memory.Allocator

	// \o: outFile receives the results while set; stdout and stdoutSize
	// are out and termSize to go back to.
	outFile    *os.File
	stdout     *bufio.Writer
	stdoutSize func() (width, height int)
	// pagerOut is the terminal the pager draws on (stdout, when it is
	// one); noPager is \pset pager off.
	pagerOut io.Writer
	noPager  bool
	// includeDepth counts the \i files being run, to stop a file that
	// includes itself.
	includeDepth int
}

// info is where acknowledgements and timings go.
func (sh *shell) info() io.Writer {
	if sh.format == formatTable {
		return sh.out
	}
	return sh.errw
}

// reportErr prints an error on stderr after whatever stdout holds.
func (sh *shell) reportErr(text string) {
	sh.out.Flush()
	io.WriteString(sh.errw, text)
}

// runPiece runs one statement of script and reports its outcome. The
// returned error has already been reported.
func (sh *shell) runPiece(ctx context.Context, script string, p sql.Piece, loc scriptLoc) error {
	stmtCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := make(chan struct{})
	if sh.interrupts != nil {
		drain(sh.interrupts) // a Ctrl-C from before this statement is not for it
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-sh.interrupts:
				close(interrupted)
				cancel()
			case <-done:
			}
		}()
	}
	start := time.Now()
	oc, err := sh.execute(stmtCtx, p.Text)
	elapsed := oc.Elapsed
	if elapsed == 0 {
		elapsed = time.Since(start)
	}
	wasInterrupted := false
	select {
	case <-interrupted:
		wasInterrupted = true
	default:
	}
	if ctx.Err() != nil {
		// The whole run was interrupted (a script's Ctrl-C). A
		// cancelled INSERT still says what it delivered.
		if oc.Message != "" {
			sh.reportErr(oc.Message + "\n")
		}
		sh.reportErr("Cancelled.\n")
		return ctx.Err()
	}
	if err != nil && !(wasInterrupted && errors.Is(err, context.Canceled)) {
		sh.reportErr(errorReport(err, script, p, loc))
		return err
	}
	if oc.Text != "" {
		sh.out.WriteString(oc.Text)
		if !strings.HasSuffix(oc.Text, "\n") {
			sh.out.WriteByte('\n')
		}
	}
	if oc.Message != "" {
		sh.out.Flush()
		fmt.Fprintln(sh.info(), oc.Message)
	}
	if wasInterrupted {
		sh.reportErr("Query cancelled.\n")
	}
	if sh.timing {
		sh.out.Flush()
		fmt.Fprintf(sh.info(), "Time: %.3f ms\n", float64(elapsed)/float64(time.Millisecond))
	}
	return sh.out.Flush()
}

// execute runs one statement through a fresh sink. A panic anywhere in it
// (engine, sink, formatter) becomes an internalError: it must never take the
// shell down.
func (sh *shell) execute(ctx context.Context, stmt string) (oc engine.Outcome, err error) {
	prog := &exec.Progress{}
	var pl *progressLine
	opts := sinkOptions{out: sh.out, mem: sh.mem, maxRows: sh.maxRows, expanded: sh.expanded}
	if sh.pagerOn() {
		opts.page, opts.pageStream = sh.page, sh.pageStream
	}
	if sh.progressTTY {
		pl = startProgress(sh.errw, prog, progressDelay, progressInterval)
		opts.beforeOutput = pl.halt
		opts.unbounded = pl.setUnbounded
	}
	snk := newSink(sh.format, opts)
	if sh.resultMode() == "table" {
		tm := &tableModeSink{inner: snk}
		if sh.termSize != nil && sh.format == formatTable {
			// The live table owns the screen: the progress line stops
			// before its first frame.
			tm.live = &liveTable{w: sh.out, size: sh.termSize}
			tm.beforeLive = pl.halt
			tm.mem = sh.mem
			if tm.mem == nil {
				tm.mem = memory.DefaultAllocator
			}
		}
		snk = tm
	}
	defer func() {
		if r := recover(); r != nil {
			err = &internalError{v: r}
		}
		pl.halt()
		if ferr := finishSink(snk, err); err == nil {
			err = ferr
		}
	}()
	return sh.sess.Execute(ctx, stmt, snk, engine.ExecOptions{Progress: prog})
}

func finishSink(s sink, execErr error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &internalError{v: r}
		}
	}()
	return s.finish(execErr)
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
