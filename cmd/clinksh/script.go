package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/clink-sql/clink/sql"
)

// scriptLoc says where statements come from, for running them and for
// reporting their errors.
type scriptLoc struct {
	// file names the script (-f, \i) in error reports; "" for -c, stdin
	// and the terminal.
	file string
	// firstLine is the script's line number of the text's first line
	// (lines are counted over the whole input, not per statement).
	firstLine int
	// interactive: the REPL. Prompts are set, a failing statement is
	// reported and the shell goes on, line numbers count from the
	// statement just typed, and an unfinished statement at EOF is dropped.
	// Otherwise (a script) the first error stops the run, and a last
	// statement without ';' runs at EOF.
	interactive bool
}

// pendingSetter is a lineReader that completes: it is told the statement
// typed before the line it reads.
type pendingSetter interface{ SetPending(stmt string) }

// runLines reads lines and runs each statement as soon as its ';' has been
// read, so a pipe or a coprocess gets every result before it writes the
// next statement. Lines accumulate until the text ends with a ';' that ends
// a statement (sql.Complete); then its statements run in turn. A line
// starting with a backslash is a command wherever it stands, between
// statements or within one (outside a string or comment): it runs at once
// and the statement being typed carries on after it, as in psql.
func (sh *shell) runLines(ctx context.Context, lr lineReader, loc scriptLoc) error {
	var pending strings.Builder
	lineNo, first := 0, 0 // first: the line number of pending's first line
	for {
		if loc.interactive {
			if pending.Len() == 0 {
				lr.SetPrompt(prompt)
			} else {
				lr.SetPrompt(contPrompt)
			}
		}
		if c, ok := lr.(pendingSetter); ok {
			c.SetPending(pending.String())
		}
		line, err := lr.Readline()
		if errors.Is(err, errInterrupt) {
			// Ctrl-C at the prompt drops what was typed, statement included.
			pending.Reset()
			continue
		}
		if errors.Is(err, io.EOF) {
			if loc.interactive || pending.Len() == 0 {
				return nil
			}
			return sh.runStatements(ctx, pending.String(), first, loc)
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		lineNo++
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, `\`) && !sql.InLiteral(pending.String()) {
			lr.SaveHistory(trimmed)
			quit, err := sh.command(ctx, trimmed)
			if quit {
				return nil
			}
			if err != nil && !loc.interactive {
				return err
			}
			if pending.Len() > 0 {
				// An empty line in its place keeps the line numbers of
				// the rest of the statement.
				pending.WriteByte('\n')
			}
			continue
		}
		if pending.Len() == 0 {
			if trimmed == "" {
				continue
			}
			first = lineNo
		} else {
			pending.WriteByte('\n')
		}
		pending.WriteString(line)
		script := pending.String()
		if !sql.Complete(script) {
			continue
		}
		pending.Reset()
		lr.SaveHistory(historyEntry(script))
		if err := sh.runStatements(ctx, script, first, loc); err != nil && !loc.interactive {
			return err
		}
	}
}

// runStatements runs the statements of script, whose first line is line
// first of the input. A script stops at the first error (already
// reported); the REPL reports each and goes on.
func (sh *shell) runStatements(ctx context.Context, script string, first int, loc scriptLoc) error {
	if loc.interactive {
		first = 1 // errors point into the statement on screen
	}
	loc.firstLine = first
	for _, p := range sql.Split(script) {
		err := sh.runPiece(ctx, script, p, loc)
		if err == nil {
			err = ctx.Err()
		}
		if err != nil && !loc.interactive {
			return err
		}
	}
	return nil
}

// runScript runs a script held in a string (-c, and the tests).
func (sh *shell) runScript(ctx context.Context, script string) error {
	return sh.runLines(ctx, newReaderLines(strings.NewReader(script), nil), scriptLoc{})
}

// cancelableLines returns from a read that blocks (a coprocess's stdin
// with nothing to say) when ctx ends, so Ctrl-C stops a script that is
// waiting for its next line. The abandoned read is left to the exit.
type cancelableLines struct {
	lineReader
	ctx context.Context
}

type readResult struct {
	line string
	err  error
}

func (c cancelableLines) Readline() (string, error) {
	if err := c.ctx.Err(); err != nil {
		return "", err
	}
	res := make(chan readResult, 1)
	go func() {
		line, err := c.lineReader.Readline()
		res <- readResult{line, err}
	}()
	select {
	case r := <-res:
		return r.line, r.err
	case <-c.ctx.Done():
		return "", c.ctx.Err()
	}
}
