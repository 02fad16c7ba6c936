// Package ast is clink's SQL syntax tree: what package sql's parser
// produces and package plan's binder reads. It holds no semantics (no
// types resolved, no names bound) and depends on nothing but the standard
// library, as go/ast does.
//
// Every node carries the byte span of the text it was parsed from (Span),
// so an error anywhere downstream can point at the construct the user
// wrote. Every node prints itself back as SQL (String) in a form that
// parses to the same tree: the round-trip test holds the parser and the
// printer to each other.
//
// The node sets are sealed: Expr, TableExpr, QueryBody, SelectItem and
// Statement are implemented only by the types of this package.
package ast

// Span is a node's place in the statement text: byte offsets, Lo
// inclusive, Hi exclusive. A node built by a rewrite rather than parsed has
// the span of the node it stands for.
type Span struct{ Lo, Hi int }

// Pos is the byte offset where the node starts.
func (s Span) Pos() int { return s.Lo }

// End is the byte offset just past the node.
func (s Span) End() int { return s.Hi }

// Node is any syntax tree node.
type Node interface {
	Pos() int
	End() int
	String() string
}

// ---------------------------------------------------------------------
// Names

// Ident is one identifier. Unquoted identifiers compare
// case-insensitively; Quoted records that it was written "x" or `x` (so
// it prints back quoted, and may hold any characters).
type Ident struct {
	Span
	Name   string
	Quoted bool
}

// ObjectName is a possibly qualified name: t, db.t, catalog.db.t.
type ObjectName struct {
	Span
	Parts []Ident
}

// ---------------------------------------------------------------------
// Statements

// Statement is one SQL statement.
type Statement interface {
	Node
	statementNode()
}

// Query is a full query: WITH, a body (SELECT, set operation, VALUES or a
// parenthesised query), ORDER BY, LIMIT and OFFSET. It is a Statement,
// a QueryBody (a parenthesised query inside a set operation) and the
// operand of subqueries and derived tables.
type Query struct {
	Span
	With    *With // nil when absent
	Body    QueryBody
	OrderBy []*OrderItem
	Limit   Expr // nil when absent; LIMIT ALL is nil too. FETCH FIRST n ROWS ONLY is read as LIMIT n.
	Offset  Expr // nil when absent
}

// With is WITH [RECURSIVE] cte, ...
type With struct {
	Span
	Recursive bool
	CTEs      []*CTE
}

// CTE is name [(col, ...)] AS (query).
type CTE struct {
	Span
	Name    Ident
	Columns []Ident
	Query   *Query
}

// QueryBody is what a Query's body can be.
type QueryBody interface {
	Node
	queryBodyNode()
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind int

const (
	Union SetOpKind = iota
	Intersect
	Except
)

// SetOp is Left UNION|INTERSECT|EXCEPT [ALL|DISTINCT] Right. INTERSECT
// binds tighter than UNION and EXCEPT, as in the standard.
type SetOp struct {
	Span
	Op          SetOpKind
	All         bool
	Left, Right QueryBody
}

// Select is one SELECT block.
type Select struct {
	Span
	Distinct bool
	Items    []SelectItem
	From     []TableExpr // nil: SELECT without FROM; several: a comma list
	Where    Expr
	GroupBy  []Expr // plain expressions and *GroupingSets, *Rollup, *Cube
	Having   Expr
	Windows  []*NamedWindow // WINDOW w AS (...), ...
	Qualify  Expr
}

// Values is VALUES (a, b), (c, d), ...: a query body of its own (as a
// statement, in FROM as a derived table, or as INSERT's source).
type Values struct {
	Span
	Rows [][]Expr
}

// SelectItem is one item of a select list.
type SelectItem interface {
	Node
	selectItemNode()
}

// SelectExpr is expr [[AS] alias].
type SelectExpr struct {
	Span
	Expr  Expr
	Alias *Ident // nil when absent
}

// Star is * or qualifier.* (Table nil for a bare *).
type Star struct {
	Span
	Table *ObjectName
}

// NullsOrder is the NULLS FIRST | NULLS LAST of an ORDER BY item.
type NullsOrder int

const (
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST].
type OrderItem struct {
	Span
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// NamedWindow is one item of a WINDOW clause: name AS (spec).
type NamedWindow struct {
	Span
	Name Ident
	Spec *WindowSpec
}

// ---------------------------------------------------------------------
// FROM

// TableExpr is an item of a FROM clause.
type TableExpr interface {
	Node
	tableExprNode()
}

// TableAlias is [AS] name [(col, ...)].
type TableAlias struct {
	Span
	Name    Ident
	Columns []Ident
}

// TableName is a catalog table or view, optionally FOR SYSTEM_TIME AS OF.
type TableName struct {
	Span
	Name  ObjectName
	AsOf  Expr // FOR SYSTEM_TIME AS OF <expr>; nil when absent
	Alias *TableAlias
}

// PathTable is a quoted path in FROM: FROM 'data/*.parquet'.
type PathTable struct {
	Span
	Path  string
	Alias *TableAlias
}

// Derived is a subquery in FROM: [LATERAL] (query) [AS] alias. VALUES in
// FROM is a Derived whose query body is *Values.
type Derived struct {
	Span
	Lateral bool
	Query   *Query
	Alias   *TableAlias
}

// TableFunc is a table-valued function in FROM: TABLE(f(args)) as Flink
// writes window functions (TUMBLE, HOP, CUMULATE, SESSION), or f(args)
// directly (read_parquet('glob'), UNNEST(x), generate_series(1, 10)).
type TableFunc struct {
	Span
	Name    Ident
	Args    []Expr // may hold *TableArg, *Descriptor and *NamedArg
	Wrapped bool   // written TABLE(f(...))
	Lateral bool   // LATERAL TABLE(f(...)) or LATERAL f(...)
	Alias   *TableAlias
}

// JoinKind is the kind of a join.
type JoinKind int

const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	CrossJoin
)

// Join is Left [NATURAL] kind JOIN Right [ON cond | USING (cols)]. A
// parenthesised join in FROM is this node; the printer adds parentheses
// where the tree needs them.
type Join struct {
	Span
	Kind        JoinKind
	Natural     bool
	Left, Right TableExpr
	On          Expr    // nil for CROSS, NATURAL and USING joins
	Using       []Ident // nil unless USING
}

// ---------------------------------------------------------------------
// Expressions

// Expr is a scalar expression (and, where the grammar allows them, the
// special arguments TABLE t, DESCRIPTOR(...), name => value and the GROUP
// BY constructs GROUPING SETS, ROLLUP and CUBE).
type Expr interface {
	Node
	exprNode()
}

// ColumnRef is a column reference, possibly qualified: a, t.a, db.t.a. A
// qualified name whose first part is a ROW column is a field access; the
// binder decides.
type ColumnRef struct {
	Span
	Parts []Ident
}

// NumberLit is a numeric literal as written: 12, 1.5, 1e3, .5.
type NumberLit struct {
	Span
	Text string
}

// StringLit is a string literal, its value decoded ('it”s' is it's).
// Backslashes are ordinary characters, as in standard SQL; E'...' strings
// decode C-style escapes.
type StringLit struct {
	Span
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Span
	Value bool
}

// NullLit is NULL.
type NullLit struct{ Span }

// TypedLit is DATE '...', TIME '...', TIMESTAMP '...' or TIMESTAMP_LTZ '...'.
type TypedLit struct {
	Span
	Type  string // DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ (upper-case)
	Value string
}

// Interval units, upper-case and singular (the parser folds plurals:
// DAYS is DAY).
const (
	UnitYear        = "YEAR"
	UnitQuarter     = "QUARTER"
	UnitMonth       = "MONTH"
	UnitWeek        = "WEEK"
	UnitDay         = "DAY"
	UnitHour        = "HOUR"
	UnitMinute      = "MINUTE"
	UnitSecond      = "SECOND"
	UnitMillisecond = "MILLISECOND"
	UnitMicrosecond = "MICROSECOND"
)

// IntervalLit is an interval literal:
//
//	INTERVAL '10' SECOND        Value "10", From SECOND
//	INTERVAL 3 DAY              Value "3", From DAY (an unquoted number)
//	INTERVAL '1-2' YEAR TO MONTH, INTERVAL '1 02:03' DAY TO MINUTE
//	INTERVAL '1 day 2 hours'    Value as written, From "" (PostgreSQL's form)
type IntervalLit struct {
	Span
	Value    string
	From, To string // units; To is "" unless written X TO Y
}

// UnaryOp is a prefix operator.
type UnaryOp int

const (
	OpNeg  UnaryOp = iota // -x
	OpPlus                // +x
	OpNot                 // NOT x
)

// Unary is op X.
type Unary struct {
	Span
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator. Precedence is PostgreSQL's, lowest
// first: OR; AND; NOT; IS; comparisons; BETWEEN, IN, LIKE; other
// operators (||); + -; * / %; unary minus; ::; subscripts.
type BinaryOp int

const (
	OpOr BinaryOp = iota
	OpAnd
	OpEq                // =
	OpNe                // <> or !=
	OpLt                // <
	OpLe                // <=
	OpGt                // >
	OpGe                // >=
	OpIsDistinctFrom    // IS DISTINCT FROM
	OpIsNotDistinctFrom // IS NOT DISTINCT FROM
	OpAdd               // +
	OpSub               // -
	OpMul               // *
	OpDiv               // /
	OpMod               // %
	OpConcat            // ||
)

// Binary is L op R.
type Binary struct {
	Span
	Op   BinaryOp
	L, R Expr
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	Span
	X   Expr
	Not bool
}

// IsBool is X IS [NOT] TRUE|FALSE|UNKNOWN.
type IsBool struct {
	Span
	X     Expr
	Not   bool
	Value *bool // nil: UNKNOWN
}

// Between is X [NOT] BETWEEN [SYMMETRIC] Lo AND Hi.
type Between struct {
	Span
	X, Lo, Hi Expr
	Not       bool
	Symmetric bool
}

// InList is X [NOT] IN (a, b, ...).
type InList struct {
	Span
	X    Expr
	List []Expr
	Not  bool
}

// InSubquery is X [NOT] IN (query). X may be a *Tuple.
type InSubquery struct {
	Span
	X     Expr
	Query *Query
	Not   bool
}

// Exists is EXISTS (query); NOT EXISTS is Unary{OpNot, Exists}.
type Exists struct {
	Span
	Query *Query
}

// Subquery is a scalar subquery: (query) in an expression.
type Subquery struct {
	Span
	Query *Query
}

// Quantified is X op ANY|SOME|ALL (query).
type Quantified struct {
	Span
	X     Expr
	Op    BinaryOp // a comparison
	All   bool     // ALL; otherwise ANY / SOME
	Query *Query
}

// Like is X [NOT] LIKE|ILIKE Pattern [ESCAPE Escape]; SIMILAR TO is
// not supported.
type Like struct {
	Span
	X, Pattern Expr
	Escape     Expr // nil when absent
	Not        bool
	ILike      bool
}

// When is WHEN Cond THEN Result.
type When struct {
	Span
	Cond, Result Expr
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE Else] END.
type Case struct {
	Span
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil when absent
}

// CastStyle says how a cast was written, so it prints back the same way.
type CastStyle int

const (
	CastCall   CastStyle = iota // CAST(x AS T)
	CastTry                     // TRY_CAST(x AS T): NULL instead of an error
	CastColons                  // x::T
)

// Cast is CAST(X AS Type), TRY_CAST(X AS Type) or X::Type.
type Cast struct {
	Span
	X     Expr
	Type  *TypeName
	Style CastStyle
}

// FuncCall is a function call, aggregate or window function:
//
//	name([DISTINCT] args [ORDER BY ...]) [FILTER (WHERE f)] [IGNORE NULLS] [OVER w]
//
// COUNT(*) has Star set and no Args. CURRENT_DATE, CURRENT_TIMESTAMP,
// CURRENT_TIME, LOCALTIMESTAMP and LOCALTIME written without parentheses
// have NoParens set.
type FuncCall struct {
	Span
	Name        Ident
	Args        []Expr
	Star        bool
	Distinct    bool
	OrderBy     []*OrderItem // inside the call: string_agg(x, ',' ORDER BY y)
	Filter      Expr         // FILTER (WHERE ...); nil when absent
	IgnoreNulls bool         // IGNORE NULLS (LAG, LEAD, FIRST_VALUE, ...)
	Over        *WindowSpec  // OVER (...) or OVER name; nil when absent
	NoParens    bool
}

// Extract is EXTRACT(Field FROM X). Field is upper-case: YEAR, QUARTER,
// MONTH, WEEK, DAY, DOW, DOY, HOUR, MINUTE, SECOND, MILLISECOND,
// MICROSECOND, EPOCH, ...
type Extract struct {
	Span
	Field string
	X     Expr
}

// Substring is SUBSTRING(X FROM From [FOR For]); SUBSTRING(x, a, b) is a
// FuncCall.
type Substring struct {
	Span
	X, From, For Expr // For may be nil
}

// TrimWhere is where TRIM removes characters.
type TrimWhere int

const (
	TrimBoth TrimWhere = iota
	TrimLeading
	TrimTrailing
)

// Trim is TRIM([BOTH|LEADING|TRAILING] [Chars] FROM X) or TRIM(X).
type Trim struct {
	Span
	Where TrimWhere
	Chars Expr // nil: spaces
	X     Expr
	// Explicit records that BOTH was written, so it prints back.
	Explicit bool
}

// Position is POSITION(Sub IN X).
type Position struct {
	Span
	Sub, X Expr
}

// Tuple is (a, b, ...) with two or more items, or ROW(a, ...) (Row set).
type Tuple struct {
	Span
	Exprs []Expr
	Row   bool
}

// Array is ARRAY[a, b, ...].
type Array struct {
	Span
	Elems []Expr
}

// Subscript is X[Index] (an array element or a map value).
type Subscript struct {
	Span
	X, Index Expr
}

// TableArg is TABLE name [PARTITION BY ...] as a table function's argument
// (Flink's window functions).
type TableArg struct {
	Span
	Name        ObjectName
	PartitionBy []Expr
}

// Descriptor is DESCRIPTOR(col, ...) as a table function's argument.
type Descriptor struct {
	Span
	Columns []Ident
}

// NamedArg is name => value as a function's argument.
type NamedArg struct {
	Span
	Name  Ident
	Value Expr
}

// GroupingSets is GROUPING SETS ((a, b), (a), ()) in GROUP BY; each set
// is a list of expressions (an empty one is the grand total).
type GroupingSets struct {
	Span
	Sets [][]Expr
}

// Rollup is ROLLUP(a, b, ...) in GROUP BY; an item may be a *Tuple.
type Rollup struct {
	Span
	Exprs []Expr
}

// Cube is CUBE(a, b, ...) in GROUP BY; an item may be a *Tuple.
type Cube struct {
	Span
	Exprs []Expr
}

// ---------------------------------------------------------------------
// Window specifications

// WindowSpec is the inside of OVER (...) or of WINDOW w AS (...). OVER w
// is a WindowSpec with only Base set.
type WindowSpec struct {
	Span
	Base        *Ident // a named window this one refines; nil when absent
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame // nil: the default frame
}

// FrameUnit is ROWS, RANGE or GROUPS.
type FrameUnit int

const (
	FrameRows FrameUnit = iota
	FrameRange
	FrameGroups
)

// BoundKind is the kind of a frame bound.
type BoundKind int

const (
	UnboundedPreceding BoundKind = iota
	Preceding                    // Offset PRECEDING
	CurrentRow
	Following // Offset FOLLOWING
	UnboundedFollowing
)

// FrameBound is one end of a window frame.
type FrameBound struct {
	Span
	Kind   BoundKind
	Offset Expr // for Preceding and Following: a number or an interval
}

// Frame is ROWS|RANGE|GROUPS BETWEEN Start AND End, or ROWS|RANGE Start
// (End nil, meaning CURRENT ROW). It is no Node (its End field hides
// Span's End method): Walk visits its bounds as the WindowSpec's children.
type Frame struct {
	Span
	Unit       FrameUnit
	Start, End *FrameBound
}

// ---------------------------------------------------------------------
// Types

// TypeName is a SQL type as written:
//
//	BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s),
//	CHAR(n), VARCHAR(n), STRING, BINARY(n), VARBINARY(n), BYTES, DATE,
//	TIME(p), TIMESTAMP(p) [WITH|WITHOUT TIME ZONE | WITH LOCAL TIME ZONE],
//	TIMESTAMP_LTZ(p), INTERVAL, ROW<name T, ...>, ARRAY<T>, T ARRAY,
//	MAP<K, V>
//
// Name is the canonical upper-case name (INTEGER is INT, REAL is FLOAT,
// DOUBLE PRECISION is DOUBLE, NUMERIC and DEC are DECIMAL, CHARACTER
// VARYING is VARCHAR, CHARACTER is CHAR, TEXT is STRING, BYTEA is BYTES,
// BOOL is BOOLEAN; T ARRAY is ARRAY<T>). Package sql maps a TypeName to
// its Arrow type.
type TypeName struct {
	Span
	Name              string
	Args              []int       // (n), (p), (p, s)
	WithTimeZone      bool        // TIMESTAMP WITH TIME ZONE
	WithLocalTimeZone bool        // TIMESTAMP WITH LOCAL TIME ZONE
	Fields            []*RowField // ROW
	Elem              *TypeName   // ARRAY
	Key, Value        *TypeName   // MAP
	NotNull           bool        // inside ROW, ARRAY or MAP: T NOT NULL
}

// RowField is one field of a ROW type.
type RowField struct {
	Span
	Name    Ident
	Type    *TypeName
	Comment string
}

// ---------------------------------------------------------------------
// DDL and other statements

// CreateTable is
//
//	CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (
//	  col type [NOT NULL] [PRIMARY KEY NOT ENFORCED] [COMMENT '...'],
//	  col AS expr,                                  -- computed
//	  col type METADATA [FROM 'key'] [VIRTUAL],
//	  WATERMARK FOR col AS expr,
//	  PRIMARY KEY (cols) NOT ENFORCED
//	) [COMMENT '...'] [PARTITIONED BY (cols)] [WITH ('k' = 'v', ...)] [AS query]
//
// Columns is nil when no list was written (CREATE TABLE t WITH (...) lets
// the connector infer them; CREATE TABLE t AS SELECT takes the query's).
// Options is nil without WITH: a session table held in memory.
type CreateTable struct {
	Span
	Name          ObjectName
	Temporary     bool
	IfNotExists   bool
	Columns       []*ColumnDef
	Watermark     *WatermarkDef
	PrimaryKey    *PrimaryKey
	Comment       *StringLit
	PartitionedBy []Ident
	Options       []*Option
	As            *Query
}

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	Span
	Name       Ident
	Type       *TypeName // nil for a computed column
	NotNull    bool
	PrimaryKey bool  // inline PRIMARY KEY [NOT ENFORCED]
	Unique     bool  // UNIQUE (accepted and ignored, as CREATE INDEX is)
	Computed   Expr  // col AS expr; nil otherwise
	Metadata   *Meta // METADATA [FROM 'key'] [VIRTUAL]; nil otherwise
	Comment    *StringLit
}

// Meta is a METADATA column's source: FROM 'key' (Key "" when the column's
// name is the key) and VIRTUAL (read-only).
type Meta struct {
	Span
	Key     string
	Virtual bool
}

// WatermarkDef is WATERMARK FOR Column AS Expr.
type WatermarkDef struct {
	Span
	Column Ident
	Expr   Expr
}

// PrimaryKey is PRIMARY KEY (cols) [NOT ENFORCED].
type PrimaryKey struct {
	Span
	Columns     []Ident
	NotEnforced bool
}

// Option is one 'key' = 'value' of a WITH clause.
type Option struct {
	Span
	Key, Value string
}

// CreateView is CREATE [OR REPLACE] [TEMPORARY] VIEW [IF NOT EXISTS] name
// [(cols)] AS query.
type CreateView struct {
	Span
	Name        ObjectName
	OrReplace   bool
	Temporary   bool
	IfNotExists bool
	Columns     []Ident
	Query       *Query
}

// CreateIndex is CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON table
// (cols): accepted and ignored (clink has no indexes; the sqllogictest
// corpus creates them).
type CreateIndex struct {
	Span
	Name        Ident
	Unique      bool
	IfNotExists bool
	Table       ObjectName
	Columns     []*OrderItem
}

// Drop is DROP [TEMPORARY] TABLE|VIEW|INDEX [IF EXISTS] name, ...
type Drop struct {
	Span
	Kind      string // TABLE, VIEW or INDEX
	Temporary bool
	IfExists  bool
	Names     []ObjectName
}

// Insert is INSERT INTO|OVERWRITE table [(cols)] query; the query may be
// VALUES.
type Insert struct {
	Span
	Table     ObjectName
	Overwrite bool
	Columns   []Ident
	Query     *Query
}

// StatementSet is EXECUTE STATEMENT SET BEGIN insert; ... END: the
// inserts run as one job.
type StatementSet struct {
	Span
	Inserts []*Insert
}

// BeginStatementSet is BEGIN STATEMENT SET (the Flink SQL client's form:
// the INSERTs that follow are collected until END).
type BeginStatementSet struct{ Span }

// EndStatementSet is END, closing BEGIN STATEMENT SET.
type EndStatementSet struct{ Span }

// Explain is EXPLAIN [PLAN FOR] [ANALYZE] [VERBOSE] [FORMAT x]
// [(option [value], ...)] statement. Options hold what the parenthesised
// list gave beyond ANALYZE, VERBOSE and FORMAT (DURATION '5s'), keys
// upper-case.
type Explain struct {
	Span
	Analyze bool
	Verbose bool
	Format  string // "" (text), TEXT or JSON, upper-case as given
	Options []*Option
	Stmt    Statement
}

// Set is SET 'key' = 'value' (quotes optional); SET alone lists the
// settings (Key "").
type Set struct {
	Span
	Key, Value string
}

// Reset is RESET 'key', or RESET alone (Key "").
type Reset struct {
	Span
	Key string
}

// Show is SHOW TABLES | VIEWS | FUNCTIONS | CONNECTORS | COLUMNS FROM t |
// CREATE TABLE t | CREATE VIEW v. What is upper-case ("CREATE TABLE").
type Show struct {
	Span
	What string
	Name *ObjectName // for COLUMNS FROM and CREATE
	Like *StringLit  // SHOW TABLES LIKE '...'
}

// Describe is DESCRIBE|DESC name, DESCRIBE 'path' or DESCRIBE query.
type Describe struct {
	Span
	Name  *ObjectName
	Path  *StringLit
	Query *Query
}

// ---------------------------------------------------------------------
// Sealing

func (*Query) statementNode()             {}
func (*CreateTable) statementNode()       {}
func (*CreateView) statementNode()        {}
func (*CreateIndex) statementNode()       {}
func (*Drop) statementNode()              {}
func (*Insert) statementNode()            {}
func (*StatementSet) statementNode()      {}
func (*BeginStatementSet) statementNode() {}
func (*EndStatementSet) statementNode()   {}
func (*Explain) statementNode()           {}
func (*Set) statementNode()               {}
func (*Reset) statementNode()             {}
func (*Show) statementNode()              {}
func (*Describe) statementNode()          {}

func (*Query) queryBodyNode()  {}
func (*Select) queryBodyNode() {}
func (*SetOp) queryBodyNode()  {}
func (*Values) queryBodyNode() {}

func (*SelectExpr) selectItemNode() {}
func (*Star) selectItemNode()       {}

func (*TableName) tableExprNode() {}
func (*PathTable) tableExprNode() {}
func (*Derived) tableExprNode()   {}
func (*TableFunc) tableExprNode() {}
func (*Join) tableExprNode()      {}

func (*ColumnRef) exprNode()    {}
func (*NumberLit) exprNode()    {}
func (*StringLit) exprNode()    {}
func (*BoolLit) exprNode()      {}
func (*NullLit) exprNode()      {}
func (*TypedLit) exprNode()     {}
func (*IntervalLit) exprNode()  {}
func (*Unary) exprNode()        {}
func (*Binary) exprNode()       {}
func (*IsNull) exprNode()       {}
func (*IsBool) exprNode()       {}
func (*Between) exprNode()      {}
func (*InList) exprNode()       {}
func (*InSubquery) exprNode()   {}
func (*Exists) exprNode()       {}
func (*Subquery) exprNode()     {}
func (*Quantified) exprNode()   {}
func (*Like) exprNode()         {}
func (*Case) exprNode()         {}
func (*Cast) exprNode()         {}
func (*FuncCall) exprNode()     {}
func (*Extract) exprNode()      {}
func (*Substring) exprNode()    {}
func (*Trim) exprNode()         {}
func (*Position) exprNode()     {}
func (*Tuple) exprNode()        {}
func (*Array) exprNode()        {}
func (*Subscript) exprNode()    {}
func (*TableArg) exprNode()     {}
func (*Descriptor) exprNode()   {}
func (*NamedArg) exprNode()     {}
func (*GroupingSets) exprNode() {}
func (*Rollup) exprNode()       {}
func (*Cube) exprNode()         {}
