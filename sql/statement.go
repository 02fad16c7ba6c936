package sql

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"
)

// Statement is one parsed statement.
type Statement interface{ statement() }

// Query is a SELECT (or UNION) statement, parsed by xwb1989/sqlparser after
// the dialect layer rewrote what that parser cannot read (see Parse).
type Query struct {
	AST  sqlparser.SelectStatement
	Text string // the original text
}

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	Name     string
	Type     arrow.DataType
	NotNull  bool
	Computed string // the expression text of a computed column (col AS <expr>), else ""
	Metadata string // METADATA FROM '<key>' (Kafka), else ""
}

// WatermarkDef is WATERMARK FOR <Column> AS <Expr>.
type WatermarkDef struct {
	Column string
	Expr   string // expression text, e.g. "ts - INTERVAL '4' SECOND"
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] name [(columns...)] WITH (...).
type CreateTable struct {
	Name        string
	IfNotExists bool
	Columns     []ColumnDef // nil when omitted: the connector infers them
	Watermark   *WatermarkDef
	Options     map[string]string // WITH ('k' = 'v', ...), keys as written
}

// CreateView is CREATE [TEMPORARY] VIEW name AS <query>.
type CreateView struct {
	Name        string
	IfNotExists bool
	Query       *Query
}

// Drop is DROP TABLE|VIEW [IF EXISTS] name.
type Drop struct {
	Kind     string // "TABLE" or "VIEW"
	Name     string
	IfExists bool
}

// Explain is EXPLAIN [ANALYZE] [(option value, ...)] <statement>.
type Explain struct {
	Analyze bool
	Options map[string]string // upper-cased keys: FORMAT, VERBOSE, DURATION
	Stmt    Statement
}

// Set is SET 'key' = 'value'; SET alone lists the settings (Key == "").
type Set struct{ Key, Value string }

// Reset is RESET 'key', or RESET alone (Key == "").
type Reset struct{ Key string }

// Show is SHOW TABLES | VIEWS | FUNCTIONS | CONNECTORS | CREATE TABLE name.
type Show struct {
	What string // upper-cased: TABLES, VIEWS, FUNCTIONS, CONNECTORS, CREATE TABLE
	Name string
}

// Describe is DESCRIBE name / DESC name.
type Describe struct{ Name string }

// Insert is INSERT INTO table <query>.
type Insert struct {
	Table string
	Query *Query
}

func (*Query) statement()       {}
func (*CreateTable) statement() {}
func (*CreateView) statement()  {}
func (*Drop) statement()        {}
func (*Explain) statement()     {}
func (*Set) statement()         {}
func (*Reset) statement()       {}
func (*Show) statement()        {}
func (*Describe) statement()    {}
func (*Insert) statement()      {}

// Error is a statement error with its position in the statement text
// (1-based Line and Column; 0 when unknown).
type Error struct {
	Msg          string
	Line, Column int
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

// PathTablePrefix marks a table name that is a quoted path in FROM
// ('data/*.parquet'); the dialect layer rewrites FROM 'x' to a backticked
// identifier `PathTablePrefix + x` that sqlparser accepts.
const PathTablePrefix = "__clink_path:"

// CastFunc is the function the dialect layer rewrites CAST(x AS T) into,
// because sqlparser only knows MySQL's cast types: CAST(x AS BIGINT) becomes
// __clink_cast(x, 'BIGINT'), and the binder turns it back into a CAST.
const CastFunc = "__clink_cast"
