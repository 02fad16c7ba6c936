package main

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/clink-sql/clink/explain"
)

// liveTable redraws a table in place on a terminal: each frame moves the
// cursor up over the previous one and prints the new one over it. It knows nothing of changelogs; tableModeSink applies
// them and hands it frames.
//
// The cursor can only move up within the visible screen, so a live frame
// must fit on it: rows are capped to the terminal height less the lines
// around them, and lines are cut at the terminal width (a wrapped line
// would take two rows and the next move up would miss). A frame with all
// set is never redrawn, so it shows every row in full.
type liveTable struct {
	w *bufio.Writer
	// size reports the terminal's width and height; asked at every frame,
	// so a resized terminal is followed.
	size func() (width, height int)
	// lines is how many lines the previous frame took (0: none drawn).
	lines int
	buf   []byte
}

// liveChrome is the number of lines of a frame that are not rows: the top
// border, the header, the border under it, the bottom border, the footer,
// and the line the cursor rests on after the footer.
const liveChrome = 6

// liveFrame is one state of the table.
type liveFrame struct {
	names []string
	right []bool // right-align (numbers)
	rows  int    // rows in the table
	// cells renders the first n rows' text (n <= rows).
	cells   func(n int) ([][]string, error)
	changes int64
	at      time.Time
	// final: the query ended; the footer no longer offers Ctrl-C.
	final bool
	// all: show every row, uncut (a query that ended by itself: its whole
	// result is printed, as off a terminal). A cancelled query's last frame
	// keeps the screen as the user saw it.
	all bool
}

// draw replaces the previous frame (if any) with f.
func (l *liveTable) draw(f liveFrame) error {
	width, height := l.size()
	shown := f.rows
	if !f.all {
		shown = min(shown, max(1, height-liveChrome))
	}
	cells, err := f.cells(shown)
	if err != nil {
		return err
	}
	widths := make([]int, len(f.names))
	for c, n := range f.names {
		widths[c] = displayWidth(n)
	}
	for _, row := range cells {
		for c, v := range row {
			widths[c] = max(widths[c], displayWidth(v))
		}
	}

	var lines []string
	border := liveBorder(widths)
	lines = append(lines, border, liveRow(widths, f.right, f.names), border)
	for _, row := range cells {
		lines = append(lines, liveRow(widths, f.right, row))
	}
	lines = append(lines, border, liveFooter(f, shown))

	// A redraw moves up over the previous frame to its first column and
	// writes each line over the old one, clearing the rest of that line,
	// then clears what is left below (a shorter frame). It does not clear
	// the whole screen first: tmux, among others, saves a screen cleared
	// from its top left corner to the scrollback, so every frame would pile
	// up there.
	redraw := l.lines > 0
	out := l.buf[:0]
	if redraw {
		out = fmt.Appendf(out, "\x1b[%dA\r", l.lines)
	}
	for _, line := range lines {
		if !f.all && width > 0 && displayWidth(line) > width {
			line = runewidth.Truncate(line, width, "")
		}
		out = append(out, line...)
		if redraw {
			out = append(out, "\x1b[K"...)
		}
		out = append(out, '\n')
	}
	if redraw {
		out = append(out, "\x1b[J"...)
	}
	l.buf = out
	l.lines = len(lines)
	if _, err := l.w.Write(out); err != nil {
		return err
	}
	return l.w.Flush()
}

func liveBorder(widths []int) string {
	var b strings.Builder
	for _, w := range widths {
		b.WriteByte('+')
		b.WriteString(strings.Repeat("-", w+2))
	}
	b.WriteByte('+')
	return b.String()
}

// liveRow is one table line; headers follow their column's alignment.
func liveRow(widths []int, right []bool, vals []string) string {
	var b strings.Builder
	for c, w := range widths {
		v := vals[c]
		pad := strings.Repeat(" ", w-displayWidth(v))
		b.WriteString("| ")
		if right[c] {
			b.WriteString(pad)
			b.WriteString(v)
		} else {
			b.WriteString(v)
			b.WriteString(pad)
		}
		b.WriteByte(' ')
	}
	b.WriteByte('|')
	return b.String()
}

// liveFooter is e.g. "(showing 20 of 1,234 rows, 5,678 changes, refreshed
// 15:04:05; Ctrl-C to stop)" while the query runs, "(1,234 rows, 5,678
// changes)" once it ended.
func liveFooter(f liveFrame, shown int) string {
	rows := rowsLabel(int64(f.rows))
	if shown < f.rows {
		rows = fmt.Sprintf("showing %d of %s rows", shown, explain.GroupDigits(int64(f.rows)))
	}
	changes := explain.GroupDigits(f.changes) + " changes"
	if f.changes == 1 {
		changes = "1 change"
	}
	if f.final {
		return fmt.Sprintf("(%s, %s)", rows, changes)
	}
	return fmt.Sprintf("(%s, %s, refreshed %s; Ctrl-C to stop)", rows, changes, f.at.Format("15:04:05"))
}
