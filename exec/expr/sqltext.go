package expr

import "strings"

// sqlWriter is implemented by the operators whose text nests (AND, OR,
// arithmetic, comparisons, NOT, IS NULL). Their String writes the whole
// tree into one builder: a tree of depth n then costs its length to print,
// where formatting each level into a new string would cost its length
// times n (a 30,000-term OR is 400 KB of text; nested formatting copied
// it 30,000 times).
type sqlWriter interface {
	writeSQL(b *strings.Builder)
}

// writeSQL writes e's text into b.
func writeSQL(b *strings.Builder, e Expr) {
	if w, ok := e.(sqlWriter); ok {
		w.writeSQL(b)
		return
	}
	b.WriteString(e.String())
}

// sqlText is the text of a sqlWriter.
func sqlText(w sqlWriter) string {
	var b strings.Builder
	w.writeSQL(&b)
	return b.String()
}

// writeBinary writes (l op r).
func writeBinary(b *strings.Builder, l Expr, op string, r Expr) {
	b.WriteByte('(')
	writeSQL(b, l)
	b.WriteByte(' ')
	b.WriteString(op)
	b.WriteByte(' ')
	writeSQL(b, r)
	b.WriteByte(')')
}
