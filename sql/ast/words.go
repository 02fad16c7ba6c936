package ast

import "strings"

// reserved are the words that cannot be used as a bare identifier
// anywhere (a column, a table, an alias): PostgreSQL's reserved list,
// minus the words Flink queries use as names and the ones this grammar
// never needs, plus INTERVAL, VALUES and QUALIFY, which would otherwise be
// ambiguous where a name may stand. Quoted ("select"), any word is a name.
var reserved = wordSet(`
	ALL AND ANY ARRAY AS ASC ASYMMETRIC BOTH CASE CAST COLLATE CREATE CROSS CURRENT_DATE
	CURRENT_TIME CURRENT_TIMESTAMP DESC DISTINCT ELSE END EXCEPT FALSE FETCH
	FOR FROM FULL GROUP HAVING ILIKE IN INNER INTERSECT INTERVAL INTO IS JOIN
	LATERAL LEADING LEFT LIKE LIMIT LOCALTIME LOCALTIMESTAMP NATURAL NOT NULL
	OFFSET ON OR ORDER OUTER PRIMARY QUALIFY RIGHT SELECT SOME SYMMETRIC TABLE
	THEN TO TRAILING TRUE UNION UNIQUE USING VALUES WHEN WHERE WINDOW WITH`)

// reservedFuncs are the reserved words that still name a function when a
// '(' follows: left(s, 2), current_timestamp(3).
var reservedFuncs = wordSet(`LEFT RIGHT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP LOCALTIME LOCALTIMESTAMP`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// IsReserved reports whether word (any case) is a reserved word: usable
// as a name only when quoted.
func IsReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// IsReservedFunc reports whether word is a reserved word that names a
// function when followed by '(' (LEFT, RIGHT, CURRENT_TIMESTAMP, ...).
func IsReservedFunc(word string) bool { return reservedFuncs[strings.ToUpper(word)] }

// ReservedWords returns the reserved words, upper-case, in no particular
// order.
func ReservedWords() []string {
	out := make([]string, 0, len(reserved))
	for w := range reserved {
		out = append(out, w)
	}
	return out
}

// IsWordStart and IsWordByte are the characters of a bare word: a letter,
// '_' or any byte of a multi-byte UTF-8 character first, then those,
// digits and '$'. The lexer of package sql and the printer share them, so
// that what prints bare reads back as one word.
func IsWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// IsWordByte: see IsWordStart.
func IsWordByte(c byte) bool { return IsWordStart(c) || c >= '0' && c <= '9' || c == '$' }

// isBareWord reports whether name lexes as one bare word.
func isBareWord(name string) bool {
	if name == "" || !IsWordStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !IsWordByte(name[i]) {
			return false
		}
	}
	return true
}

// quoteName renders name as a double-quoted identifier.
func quoteName(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// quoteString renders s as a single-quoted string literal. Backslashes
// are ordinary characters.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
