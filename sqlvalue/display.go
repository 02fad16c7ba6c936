package sqlvalue

import "strings"

// NullText is how a table shows SQL NULL.
const NullText = "NULL"

// Display is how a text table (the shell's, the kernel's text/plain) shows
// a value whose canonical text is s: SQL NULL as a bare NULL, and a value
// that would be mistaken for it (the text NULL in any case) as a quoted SQL
// literal, 'NULL'. So that the quoting itself stays unambiguous, a value
// that starts with a quote is quoted too: a shown value beginning with '
// is always a literal, and a bare NULL is always SQL NULL.
func Display(s string, null bool) string {
	if null {
		return NullText
	}
	if strings.EqualFold(s, NullText) || strings.HasPrefix(s, "'") {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}
