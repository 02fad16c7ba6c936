package main

import (
	"strings"
	"sync"

	"github.com/clink-sql/clink/complete"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/sql"
)

// maxBlankMatches: Tab after nothing typed lists the candidates only when
// they are few (the tables after FROM, the files of a directory), not
// every keyword and function.
const maxBlankMatches = 60

// tabCompleter is readline's AutoCompleter over package complete, the
// completer the kernel uses: keywords, functions, the session's tables
// and views, their columns, and file paths inside a quoted string. It sees
// the lines of the statement typed before the current one, so a FROM on
// an earlier line scopes the columns and a string opened there is a path.
type tabCompleter struct {
	tables func() []engine.TableInfo

	mu      sync.Mutex // readline calls Do from its own goroutine
	pending string
}

// SetPending records the statement typed so far (the REPL calls it before
// reading each line).
func (c *tabCompleter) SetPending(s string) {
	c.mu.Lock()
	c.pending = s
	c.mu.Unlock()
}

// Do is readline.AutoCompleter: the text each candidate adds after the
// cursor, and how many runes before the cursor they share.
func (c *tabCompleter) Do(line []rune, pos int) ([][]rune, int) {
	c.mu.Lock()
	pending := c.pending
	c.mu.Unlock()
	return completeLine(pending, line, pos, c.tables())
}

// completeLine completes line at pos (a rune index), pending being the
// statement's earlier lines. A backslash command completes its argument:
// a file name for \i and \o, a table for \d, a function for \df.
func completeLine(pending string, line []rune, pos int, tables []engine.TableInfo) ([][]rune, int) {
	if pos < 0 || pos > len(line) {
		pos = len(line)
	}
	head := string(line[:pos])
	if trimmed := strings.TrimLeft(head, " \t"); strings.HasPrefix(trimmed, `\`) && !sql.InLiteral(pending) {
		return completeCommand(trimmed, tables)
	}
	code := head
	if pending != "" {
		code = pending + "\n" + head
	}
	cursor := len([]rune(code))
	r := complete.Complete(code+string(line[pos:]), cursor, tables)
	typed := []rune(code)[r.Start:cursor]
	if len(typed) == 0 && len(r.Matches) > maxBlankMatches {
		return nil, 0
	}
	return suffixes(r.Matches, string(typed)), min(len(typed), pos)
}

// completeCommand completes the argument of a backslash command.
func completeCommand(cmd string, tables []engine.TableInfo) ([][]rune, int) {
	name, arg, ok := strings.Cut(cmd, " ")
	if !ok || strings.Contains(strings.TrimLeft(arg, " "), " ") {
		return nil, 0
	}
	arg = strings.TrimLeft(arg, " ")
	var matches []string
	switch name {
	case `\i`, `\include`, `\o`, `\out`:
		matches = complete.Paths(arg)
	case `\d`:
		for _, t := range tables {
			matches = append(matches, t.Name)
		}
	case `\df`:
		for _, f := range complete.Functions() {
			matches = append(matches, f.Name)
		}
	}
	return suffixes(matches, arg), len([]rune(arg))
}

// suffixes is what each match adds to typed. Readline can only append, so
// a match that differs from typed in case (the completer matches
// regardless of case) is offered only when no match keeps typed as it is.
func suffixes(matches []string, typed string) [][]rune {
	var exact, folded [][]rune
	for _, m := range matches {
		switch {
		case strings.HasPrefix(m, typed):
			exact = append(exact, []rune(m[len(typed):]))
		case len(m) >= len(typed) && strings.EqualFold(m[:len(typed)], typed):
			folded = append(folded, []rune(m[len(typed):]))
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}
