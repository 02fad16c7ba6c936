package sql

import (
	"sort"
	"strings"

	"github.com/clink-sql/clink/sql/ast"
)

// grammarWords are the words of the grammar besides the reserved ones
// (ast.ReservedWords): they name statements, clauses, types and units
// where they stand, and are names everywhere else.
const grammarWords = `
	ALTER ANALYZE BEGIN BETWEEN BY COMMENT CONNECTORS CONSTRAINT COLUMNS CUBE CURRENT DELETE DESCRIBE DESCRIPTOR
	DISTINCT DROP ENFORCED ESCAPE EXECUTE EXISTS EXPLAIN EXTRACT FILTER FIRST FOLLOWING FORMAT FUNCTION FUNCTIONS
	GROUPING GROUPS IF IGNORE INDEX INSERT JSON KEY LAST LIKE LOCAL MERGE METADATA NEXT NULLS OF ONLY OVER
	OVERWRITE PARTITION PARTITIONED PLAN POSITION PRECEDING PRECISION RANGE RECURSIVE REPLACE RESET RESPECT ROLLUP
	ROW ROWS SET SETS SHOW STATEMENT SUBSTRING SYSTEM_TIME TABLES TEMP TEMPORARY TEXT TIME TRIM TRUNCATE TRY_CAST
	SYSTEM UNBOUNDED UNKNOWN UPDATE USE VARYING VERBOSE VIEW VIEWS VIRTUAL WATERMARK WITHOUT ZONE
	BOOLEAN BOOL TINYINT SMALLINT INT INTEGER BIGINT FLOAT REAL DOUBLE DECIMAL DEC NUMERIC CHAR CHARACTER
	VARCHAR STRING BINARY VARBINARY BYTES BYTEA DATE TIMESTAMP TIMESTAMP_LTZ MAP
	YEAR YEARS QUARTER QUARTERS MONTH MONTHS WEEK WEEKS DAY DAYS HOUR HOURS MINUTE MINUTES SECOND SECONDS
	MILLISECOND MILLISECONDS MICROSECOND MICROSECONDS NANOSECOND EPOCH DOW DOY ISODOW ISOYEAR DECADE CENTURY
	MILLENNIUM DAYOFWEEK DAYOFYEAR DAYOFMONTH TIMEZONE TIMEZONE_HOUR TIMEZONE_MINUTE OFF`

// functionWords are the windowing functions of Flink's dialect, offered
// for completion with the keywords.
const functionWords = `TUMBLE HOP CUMULATE SESSION WINDOW_START WINDOW_END WINDOW_TIME
	TUMBLE_START TUMBLE_END HOP_START HOP_END SESSION_START SESSION_END`

// keywordSet maps each keyword to itself: the lexer finds a word's
// keyword without allocating (keywordOf) and keeps that string.
var keywordSet = func() map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(grammarWords) {
		m[w] = w
	}
	for _, w := range ast.ReservedWords() {
		m[w] = w
	}
	return m
}()

// maxKeyword is the length of the longest keyword.
var maxKeyword = func() int {
	n := 0
	for w := range keywordSet {
		n = max(n, len(w))
	}
	return n
}()

// keywordOf returns the keyword w spells in any case, or "". It upper-
// cases into a buffer on the stack: most words of a statement are names,
// and upper-casing each with strings.ToUpper was an allocation per word.
func keywordOf(w string) string {
	var buf [32]byte
	if len(w) > maxKeyword || len(w) > len(buf) {
		return ""
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return keywordSet[string(buf[:len(w)])]
}

// isKeyword reports whether the upper-case word is a word of the grammar
// (error messages print those upper-case, names quoted).
func isKeyword(up string) bool { return keywordSet[up] != "" }

// Keywords returns the SQL keywords of the dialect and its windowing
// functions, sorted, for completion in the shell and the notebook kernel.
func Keywords() []string {
	seen := map[string]bool{}
	for w := range keywordSet {
		seen[w] = true
	}
	for _, w := range strings.Fields(functionWords) {
		seen[w] = true
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}
