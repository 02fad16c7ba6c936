package sql

import "strings"

// Piece is one statement of a script, without its terminating ';'.
type Piece struct {
	Text   string
	Offset int // byte offset of Text in the script
	Line   int // 1-based line of Text's first byte
}

// Split cuts a script into statements at ';' outside quotes and comments.
// Empty statements (only whitespace and comments) are dropped. The last
// statement need not end with ';'.
func Split(script string) []Piece {
	var out []Piece
	start := 0
	emit := func(end int) {
		text := script[start:end]
		if strings.TrimSpace(stripComments(text)) != "" {
			lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
			out = append(out, Piece{
				Text:   strings.TrimSpace(text),
				Offset: start + lead,
				Line:   1 + strings.Count(script[:start+lead], "\n"),
			})
		}
	}
	scanStatements(script, func(semi int) {
		emit(semi)
		start = semi + 1
	})
	emit(len(script))
	return out
}

// Complete reports whether text ends with a ';' that terminates a statement
// (outside quotes and comments), i.e. whether a shell or a notebook can run
// it now. Text that is only whitespace or comments is complete.
func Complete(text string) bool {
	last := -1
	state := scanStatements(text, func(semi int) { last = semi })
	if state != stNormal && state != stLineComment {
		return false
	}
	rest := text
	if last >= 0 {
		rest = text[last+1:]
	}
	return strings.TrimSpace(stripComments(rest)) == ""
}

type scanState int

const (
	stNormal scanState = iota
	stSingle
	stDouble
	stBacktick
	stLineComment
	stBlockComment
)

// scanStatements walks text and calls onSemi at every statement-ending ';'.
// It returns the state at the end of the text (inside a quote or comment
// means the statement is not finished).
func scanStatements(text string, onSemi func(int)) scanState {
	st := stNormal
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch st {
		case stNormal:
			switch {
			case c == '\'':
				st = stSingle
			case c == '"':
				st = stDouble
			case c == '`':
				st = stBacktick
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				st = stLineComment
				i++
			case c == '/' && i+1 < len(text) && text[i+1] == '*':
				st = stBlockComment
				i++
			case c == ';':
				onSemi(i)
			}
		case stSingle:
			if c == '\'' {
				if i+1 < len(text) && text[i+1] == '\'' {
					i++ // '' is an escaped quote
				} else {
					st = stNormal
				}
			} else if c == '\\' && i+1 < len(text) {
				i++
			}
		case stDouble:
			if c == '"' {
				st = stNormal
			}
		case stBacktick:
			if c == '`' {
				st = stNormal
			}
		case stLineComment:
			if c == '\n' {
				st = stNormal
			}
		case stBlockComment:
			if c == '*' && i+1 < len(text) && text[i+1] == '/' {
				st = stNormal
				i++
			}
		}
	}
	return st
}

// stripComments removes -- and /* */ comments outside quotes.
func stripComments(text string) string {
	var b strings.Builder
	st := stNormal
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch st {
		case stNormal:
			switch {
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				st = stLineComment
				i++
				continue
			case c == '/' && i+1 < len(text) && text[i+1] == '*':
				st = stBlockComment
				i++
				continue
			case c == '\'':
				st = stSingle
			case c == '"':
				st = stDouble
			case c == '`':
				st = stBacktick
			}
			b.WriteByte(c)
		case stSingle, stDouble, stBacktick:
			b.WriteByte(c)
			end := map[scanState]byte{stSingle: '\'', stDouble: '"', stBacktick: '`'}[st]
			if c == end {
				st = stNormal
			}
		case stLineComment:
			if c == '\n' {
				st = stNormal
				b.WriteByte(c)
			}
		case stBlockComment:
			if c == '*' && i+1 < len(text) && text[i+1] == '/' {
				st = stNormal
				i++
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}
