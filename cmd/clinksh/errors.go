package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/clink-sql/clink/sql"
)

// internalError is a panic recovered around one statement: the shell
// reports it and keeps running.
type internalError struct{ v any }

func (e *internalError) Error() string { return fmt.Sprintf("internal error: %v", e.v) }

// errorReport renders err from the statement piece of script. A *sql.Error
// carries a position relative to the statement text; it is moved into the
// input's coordinates (loc.firstLine is the line script starts on) and
// shown psql-style, with the offending line and a caret under the column,
// and the file when the statement came from one:
//
//	ERROR at line 3, column 12: unknown column 'x'
//	LINE 3: SELECT a, x FROM t
//	                  ^
//
// Without a position the message is shown with the statement it came from
// (in scripts, where it is not on screen).
func errorReport(err error, script string, piece sql.Piece, loc scriptLoc) string {
	var b strings.Builder
	base := max(loc.firstLine, 1) - 1 // script line n is input line base+n
	where := "line"
	if loc.file != "" {
		where = loc.file + " line"
	}
	var se *sql.Error
	if errors.As(err, &se) && se.Line > 0 {
		line := piece.Line + se.Line - 1
		col := se.Column
		if se.Line == 1 && col > 0 {
			lineStart := strings.LastIndexByte(script[:piece.Offset], '\n') + 1
			col += piece.Offset - lineStart
		}
		msg := se.Msg
		if wrapped := err.Error(); wrapped != se.Error() {
			// Context added around the positioned error ("view 'v': ...").
			msg = strings.Replace(wrapped, se.Error(), se.Msg, 1)
		}
		if col > 0 {
			fmt.Fprintf(&b, "ERROR at %s %d, column %d: %s\n", where, base+line, col, msg)
		} else {
			fmt.Fprintf(&b, "ERROR at %s %d: %s\n", where, base+line, msg)
		}
		if text, ok := scriptLine(script, line); ok {
			b.WriteString(caretLines(base+line, text, col))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "ERROR: %s\n", err.Error())
	if !loc.interactive {
		first, _, more := strings.Cut(piece.Text, "\n")
		if more || len(first) > 200 {
			first = truncateWidth(first, 200) + " ..."
		}
		fmt.Fprintf(&b, "STATEMENT at %s %d: %s\n", where, base+piece.Line, first)
	}
	return b.String()
}

// scriptLine returns the 1-based line n of script.
func scriptLine(script string, n int) (string, bool) {
	for i := 1; ; i++ {
		line, rest, found := strings.Cut(script, "\n")
		if i == n {
			return strings.TrimRight(line, "\r"), true
		}
		if !found {
			return "", false
		}
		script = rest
	}
}

// caretLines renders "LINE n: text" and a caret under byte column col
// (1-based; 0 puts no caret). Long lines are cut to a window around the
// column so the caret stays on screen.
func caretLines(n int, text string, col int) string {
	prefix := fmt.Sprintf("LINE %d: ", n)
	const window = 100
	if col > len(text)+1 {
		col = len(text) + 1
	}
	if len(text) > window && col > 0 {
		start := max(0, col-1-window/2)
		for start > 0 && start < len(text) && !isRuneStart(text[start]) {
			start--
		}
		end := min(len(text), start+window)
		for end < len(text) && !isRuneStart(text[end]) {
			end++
		}
		head, tail := "", ""
		if start > 0 {
			head = "..."
		}
		if end < len(text) {
			tail = "..."
		}
		col = col - start + len(head)
		text = head + text[start:end] + tail
	}
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(text)
	b.WriteByte('\n')
	if col <= 0 {
		return b.String()
	}
	// Pad with the display width of what precedes the column; tabs are
	// kept so the caret lines up however the terminal expands them.
	b.WriteString(strings.Repeat(" ", len(prefix)))
	for _, r := range text[:col-1] {
		if r == '\t' {
			b.WriteByte('\t')
			continue
		}
		b.WriteString(strings.Repeat(" ", runewidth.RuneWidth(r)))
	}
	b.WriteString("^\n")
	return b.String()
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

func truncateWidth(s string, w int) string {
	if runewidth.StringWidth(s) <= w {
		return s
	}
	return runewidth.Truncate(s, w, "")
}
