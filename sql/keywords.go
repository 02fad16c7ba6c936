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
	MILLISECOND MILLISECONDS MICROSECOND MICROSECONDS EPOCH DOW DOY`

// functionWords are the windowing functions of Flink's dialect, offered
// for completion with the keywords.
const functionWords = `TUMBLE HOP CUMULATE SESSION WINDOW_START WINDOW_END WINDOW_TIME
	TUMBLE_START TUMBLE_END HOP_START HOP_END SESSION_START SESSION_END`

var keywordSet = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(grammarWords) {
		m[w] = true
	}
	for _, w := range ast.ReservedWords() {
		m[w] = true
	}
	return m
}()

// isKeyword reports whether the upper-case word is a word of the grammar
// (error messages print those upper-case, names quoted).
func isKeyword(up string) bool { return keywordSet[up] }

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
