package sql

import "sort"

// keywords are the words of the statements and queries clink reads, for
// completion in the shell and the notebook kernel.
var keywords = []string{
	// statements
	"SELECT", "WITH", "INSERT", "INTO", "CREATE", "TEMPORARY", "TABLE", "VIEW", "DROP", "IF", "NOT", "EXISTS",
	"EXPLAIN", "ANALYZE", "VERBOSE", "FORMAT", "JSON", "SET", "RESET", "SHOW", "TABLES", "VIEWS", "FUNCTIONS",
	"CONNECTORS", "DESCRIBE", "DESC",
	// CREATE TABLE
	"WATERMARK", "FOR", "METADATA", "VIRTUAL", "PRIMARY", "KEY", "ENFORCED", "COMMENT",
	// types
	"BOOLEAN", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "REAL", "DOUBLE", "PRECISION",
	"DECIMAL", "NUMERIC", "VARCHAR", "CHAR", "STRING", "BYTES", "VARBINARY", "BINARY", "TIMESTAMP",
	"TIMESTAMP_LTZ", "DATE", "ROW", "ARRAY", "MAP",
	// queries
	"FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "ASC", "LIMIT", "OFFSET", "UNION", "ALL", "DISTINCT",
	"AS", "JOIN", "INNER", "LEFT", "RIGHT", "OUTER", "CROSS", "ON", "USING", "AND", "OR", "IN", "IS", "NULL",
	"TRUE", "FALSE", "LIKE", "BETWEEN", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "INTERVAL",
	"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "FILTER", "SUBSTRING",
	// windows
	"TUMBLE", "HOP", "CUMULATE", "SESSION", "DESCRIPTOR", "PARTITION", "WINDOW_START", "WINDOW_END",
	"WINDOW_TIME", "TUMBLE_START", "TUMBLE_END", "HOP_START", "HOP_END", "SESSION_START", "SESSION_END",
}

// Keywords returns the SQL keywords of the dialect, sorted, for completion.
func Keywords() []string {
	out := make([]string, 0, len(keywords))
	seen := map[string]bool{}
	for _, k := range keywords {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
