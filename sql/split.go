package sql

import (
	"strings"

	"github.com/clink-sql/clink/sql/ast"
)

// Piece is one statement of a script, without its terminating ';'.
type Piece struct {
	Text   string
	Offset int // byte offset of Text in the script
	Line   int // 1-based line of Text's first byte
}

// Split cuts a script into statements at ';' outside quotes and comments.
// EXECUTE STATEMENT SET BEGIN ...; ...; END is one statement. Empty
// statements (only whitespace and comments) are dropped. The last
// statement need not end with ';'. The quoting rules are the lexer's.
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
// (outside quotes, comments and an open statement set), i.e. whether a
// shell or a notebook can run it now. Text that is only whitespace or
// comments is complete.
func Complete(text string) bool {
	last := -1
	st := scanStatements(text, func(semi int) { last = semi })
	if st.quote != stNormal && st.quote != stLineComment || st.inSet {
		return false
	}
	rest := text
	if last >= 0 {
		rest = text[last+1:]
	}
	return strings.TrimSpace(stripComments(rest)) == ""
}

// InLiteral reports whether text ends inside a quoted string, a quoted
// identifier or a block comment, where a following line continues that
// literal. A shell reads a line starting with a backslash as a command only
// outside one, so a backslash inside a multi-line string stays SQL.
func InLiteral(text string) bool {
	st := scanStatements(text, func(int) {})
	return st.quote != stNormal && st.quote != stLineComment
}

// Enclosure is what the end of a text lies inside of (see Trailing).
type Enclosure int

const (
	InCode       Enclosure = iota // outside quotes and comments
	InString                      // a '...' or E'...' string literal
	InIdentifier                  // a "..." or `...` quoted identifier
	InComment                     // a -- or /* */ comment
)

// Trailing reports what the end of text lies inside of and, unless that is
// code, the byte offset just past the opening delimiter. A completer uses it
// to offer file paths inside a string and nothing inside a comment. The
// quoting rules are the lexer's.
func Trailing(text string) (Enclosure, int) {
	st := scanStatements(text, func(int) {})
	switch st.quote {
	case stSingle, stEString:
		return InString, st.open
	case stDouble, stBacktick:
		return InIdentifier, st.open
	case stLineComment, stBlockComment:
		return InComment, st.open
	}
	return InCode, 0
}

type scanState int

const (
	stNormal scanState = iota
	stSingle
	stEString // E'...': backslash escapes
	stDouble
	stBacktick
	stLineComment
	stBlockComment
)

// scanResult is where a scan ended: inside a quote or comment, or inside
// an open EXECUTE STATEMENT SET block, the statement is not finished.
type scanResult struct {
	quote scanState
	open  int // byte offset just past the opening delimiter of quote
	inSet bool
}

// setPrefix is the start of a statement whose ';' are inner: EXECUTE
// STATEMENT SET BEGIN ... END.
var setPrefix = []string{"EXECUTE", "STATEMENT", "SET", "BEGIN"}

// scanStatements walks text and calls onSemi at every statement-ending ';'.
// It tracks the first words of each statement (and, inside a statement
// set, of each inner statement) to keep a statement set whole: its ';' end
// inner statements until one starts with END.
func scanStatements(text string, onSemi func(int)) scanResult {
	st, open := stNormal, 0
	var words []string // first words of the current (inner) statement
	inSet, setEnding := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch st {
		case stNormal:
			switch {
			case c == '\'':
				st, open = stSingle, i+1
				if i > 0 && (text[i-1] == 'e' || text[i-1] == 'E') && (i < 2 || !ast.IsWordByte(text[i-2])) {
					st = stEString
				}
			case c == '"':
				st, open = stDouble, i+1
			case c == '`':
				st, open = stBacktick, i+1
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				st, open = stLineComment, i+2
				i++
			case c == '/' && i+1 < len(text) && text[i+1] == '*':
				st, open = stBlockComment, i+2
				i++
			case c == ';':
				switch {
				case inSet && !setEnding:
					words = words[:0] // the next inner statement starts
				default:
					onSemi(i)
					inSet, setEnding = false, false
					words = words[:0]
				}
			case ast.IsWordStart(c) && (i == 0 || !ast.IsWordByte(text[i-1])):
				j := i + 1
				for j < len(text) && ast.IsWordByte(text[j]) {
					j++
				}
				if len(words) < len(setPrefix) {
					w := strings.ToUpper(text[i:j])
					words = append(words, w)
					switch {
					case !inSet && len(words) == len(setPrefix) && isSetPrefix(words):
						inSet = true
						words = words[:0]
					case inSet && len(words) == 1 && w == "END":
						setEnding = true
					}
				}
				i = j - 1
			}
		case stSingle:
			if c == '\'' {
				if i+1 < len(text) && text[i+1] == '\'' {
					i++ // '' is a quote
				} else {
					st = stNormal
				}
			}
		case stEString:
			switch {
			case c == '\\':
				i++
			case c == '\'' && i+1 < len(text) && text[i+1] == '\'':
				i++
			case c == '\'':
				st = stNormal
			}
		case stDouble:
			if c == '"' {
				st = stNormal // a doubled "" reopens at once
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
	return scanResult{quote: st, open: open, inSet: inSet}
}

func isSetPrefix(words []string) bool {
	for i, w := range setPrefix {
		if words[i] != w {
			return false
		}
	}
	return true
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
				if i > 0 && (text[i-1] == 'e' || text[i-1] == 'E') && (i < 2 || !ast.IsWordByte(text[i-2])) {
					st = stEString
				}
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
		case stEString:
			b.WriteByte(c)
			switch {
			case c == '\\' && i+1 < len(text):
				i++
				b.WriteByte(text[i])
			case c == '\'':
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
