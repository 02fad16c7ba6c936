package engine

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// SessionOptions configure a session.
type SessionOptions struct {
	// Mem is the Arrow allocator for query memory (tests pass a checked one).
	Mem memory.Allocator
	// NoDemoCatalog leaves the catalog empty instead of registering the
	// built-in nexmark demo tables.
	NoDemoCatalog bool
}

// Session runs statements against one catalog with one set of settings.
// Statements of one session run one at a time.
type Session struct {
	cat  *plan.Catalog
	mem  memory.Allocator
	mu   sync.Mutex
	sets map[string]string
	// pendingSet collects the INSERTs of BEGIN STATEMENT SET until END
	// (nil outside one).
	pendingSet []pendingInsert
	// indexes are CREATE INDEX names (lower-case) and their tables: clink
	// keeps no index, but DROP INDEX must know which exist.
	indexes map[string]string
	// demo is the demo catalog's 'nexmark' entry (nil without the demo),
	// replaced when SET 'scan.startup.mode' changes where it starts.
	demo        *plan.Entry
	demoBrokers func() (string, error)
}

// NewSession returns a session. Nothing is started until a statement needs it.
func NewSession(opts SessionOptions) *Session {
	s := &Session{cat: plan.NewCatalog(), mem: opts.Mem, sets: map[string]string{}}
	if s.mem == nil {
		s.mem = memory.DefaultAllocator
	}
	if !opts.NoDemoCatalog {
		s.registerDemo(demoBrokers)
	}
	return s
}

// Close releases the session: its session tables' memory.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.cat.Entries() {
		if c, ok := e.Table.(interface{ Close() error }); ok && e.Session {
			_ = c.Close()
		}
	}
	return nil
}

// Catalog exposes the session's catalog (for completion and tests).
func (s *Session) Catalog() *plan.Catalog { return s.cat }

// Tables lists the catalog, for \d and completion. Views are bound to learn
// their columns; entries that fail to resolve are listed without a schema.
func (s *Session) Tables() []TableInfo {
	var out []TableInfo
	for _, e := range s.cat.Entries() {
		ti := TableInfo{Name: e.Name, Kind: "table", Connector: e.Connector}
		if e.IsView() {
			ti.Kind = "view"
			if n, err := plan.Bind(s.cat, e.View, plan.BindOptions{Text: e.ViewText}); err == nil {
				ti.Schema = n.Schema()
				ti.Bounded = plan.Bounded(n)
			}
		} else if e.Table != nil {
			ti.Schema = e.Table.Schema()
			ti.Bounded = e.Table.Bounded()
		}
		out = append(out, ti)
	}
	return out
}

// Execute runs one statement. Rows go to w; the Outcome carries the rest. A
// panic anywhere below becomes an error: it never reaches the caller.
func (s *Session) Execute(ctx context.Context, stmt string, w ResultWriter, opts ExecOptions) (out Outcome, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err = internalError(r)
		}
		out.Elapsed = time.Since(start)
	}()
	st, err := sql.Parse(stmt)
	if err != nil {
		return out, err
	}
	return s.execute(ctx, stmt, st, w, opts)
}

// internalError turns a recovered panic into an error with a short
// message; the stack goes to the process log, not to the user.
func internalError(r any) error {
	log.Printf("clink: internal error: %v\n%s", r, debug.Stack())
	return fmt.Errorf("internal error: %v (details in the log)", r)
}

func (s *Session) execute(ctx context.Context, text string, st ast.Statement, w ResultWriter, opts ExecOptions) (Outcome, error) {
	if s.pendingSet != nil {
		switch x := st.(type) {
		case *ast.Insert:
			s.pendingSet = append(s.pendingSet, pendingInsert{x, text})
			return Outcome{Message: "INSERT added to the statement set."}, nil
		case *ast.EndStatementSet:
			set := s.pendingSet
			s.pendingSet = nil
			return s.runStatementSet(ctx, set, opts)
		}
		return Outcome{}, sql.ErrorAt(text, st.Pos(), "only INSERT INTO and END are allowed inside BEGIN STATEMENT SET")
	}
	switch x := st.(type) {
	case *ast.Query:
		return s.runQuery(ctx, x, text, w, opts)
	case *ast.CreateTable:
		return s.createTable(ctx, x, text, opts)
	case *ast.CreateView:
		return s.createView(x, text)
	case *ast.CreateIndex:
		return s.createIndex(x, text)
	case *ast.Drop:
		return s.drop(x, text)
	case *ast.Set:
		return s.set(x, w)
	case *ast.Reset:
		if x.Key == "" {
			s.sets = map[string]string{}
			s.setDemoStartup("")
			return Outcome{Message: "All session settings reset."}, nil
		}
		delete(s.sets, strings.ToLower(x.Key))
		if strings.EqualFold(x.Key, "scan.startup.mode") {
			s.setDemoStartup("")
		}
		return Outcome{Message: fmt.Sprintf("Setting '%s' reset.", x.Key)}, nil
	case *ast.Show:
		return s.show(x, text, w)
	case *ast.Describe:
		return s.describe(ctx, x, text, w)
	case *ast.Explain:
		return s.explain(ctx, x, text, w, opts)
	case *ast.Insert:
		return s.insert(ctx, x, text, opts)
	case *ast.StatementSet:
		var set []pendingInsert
		for _, ins := range x.Inserts {
			set = append(set, pendingInsert{ins, text})
		}
		return s.runStatementSet(ctx, set, opts)
	case *ast.BeginStatementSet:
		s.pendingSet = []pendingInsert{}
		return Outcome{Message: "Statement set begun: INSERT statements are collected until END."}, nil
	case *ast.EndStatementSet:
		return Outcome{}, sql.ErrorAt(text, st.Pos(), "END without BEGIN STATEMENT SET")
	}
	return Outcome{}, sql.ErrorAt(text, st.Pos(), fmt.Sprintf("statement %T is not supported", st))
}

// createView binds the view's query once, so a bad view fails here.
func (s *Session) createView(x *ast.CreateView, text string) (Outcome, error) {
	name := x.Name.Parts[len(x.Name.Parts)-1].Name
	e := &plan.Entry{Name: name, View: x.Query, ViewText: text}
	for _, c := range x.Columns {
		e.ViewColumns = append(e.ViewColumns, c.Name)
	}
	if old, exists := s.cat.Lookup(name); exists {
		switch {
		case x.IfNotExists:
			return Outcome{Message: fmt.Sprintf("View '%s' already exists.", name)}, nil
		case !x.OrReplace || !old.IsView():
			return Outcome{}, sql.ErrorAt(text, x.Name.Pos(), fmt.Sprintf("table or view '%s' already exists", name))
		}
	}
	tmp := plan.NewCatalog()
	for _, o := range s.cat.Entries() {
		if !strings.EqualFold(o.Name, name) {
			_ = tmp.Add(o, false)
		}
	}
	_ = tmp.Add(e, false)
	if _, err := plan.Bind(tmp, &ast.Query{Span: x.Name.Span, Body: &ast.Select{Span: x.Name.Span,
		Items: []ast.SelectItem{&ast.Star{Span: x.Name.Span}},
		From:  []ast.TableExpr{&ast.TableName{Span: x.Name.Span, Name: x.Name}}}}, plan.BindOptions{Text: text}); err != nil {
		return Outcome{}, err
	}
	if err := s.cat.Add(e, x.OrReplace); err != nil {
		return Outcome{}, err
	}
	return Outcome{Message: fmt.Sprintf("View '%s' created.", name)}, nil
}

// drop runs DROP TABLE | VIEW | INDEX [IF EXISTS] a, b, ...
func (s *Session) drop(x *ast.Drop, text string) (Outcome, error) {
	kind := strings.ToLower(x.Kind)
	var msgs []string
	for _, on := range x.Names {
		name := on.Parts[len(on.Parts)-1].Name
		if x.Kind == "INDEX" {
			if _, ok := s.indexes[strings.ToLower(name)]; !ok {
				if x.IfExists {
					continue
				}
				return Outcome{}, sql.ErrorAt(text, on.Pos(), fmt.Sprintf("index '%s' not found", name))
			}
			delete(s.indexes, strings.ToLower(name))
			msgs = append(msgs, fmt.Sprintf("Index '%s' dropped.", name))
			continue
		}
		e, ok := s.cat.Lookup(name)
		if !ok {
			if x.IfExists {
				msgs = append(msgs, fmt.Sprintf("%s '%s' does not exist, skipped.", titleCase(kind), name))
				continue
			}
			return Outcome{}, sql.ErrorAt(text, on.Pos(), fmt.Sprintf("%s '%s' not found", kind, name))
		}
		if e.IsView() != (x.Kind == "VIEW") {
			return Outcome{}, sql.ErrorAt(text, on.Pos(), fmt.Sprintf("'%s' is not a %s", name, kind))
		}
		s.cat.Drop(name)
		for ix, tbl := range s.indexes {
			if strings.EqualFold(tbl, name) {
				delete(s.indexes, ix)
			}
		}
		if c, ok := e.Table.(interface{ Close() error }); ok && e.Session {
			_ = c.Close() // a running scan keeps its snapshot
		}
		msgs = append(msgs, fmt.Sprintf("%s '%s' dropped.", titleCase(kind), name))
	}
	return Outcome{Message: strings.Join(msgs, "\n")}, nil
}

// createIndex accepts CREATE INDEX and keeps only its name: clink has no
// indexes (scans skip data by Parquet statistics instead), and the
// sqllogictest corpus creates them.
func (s *Session) createIndex(x *ast.CreateIndex, text string) (Outcome, error) {
	table := x.Table.Parts[len(x.Table.Parts)-1].Name
	if _, ok := s.cat.Lookup(table); !ok {
		return Outcome{}, sql.ErrorAt(text, x.Table.Pos(), fmt.Sprintf("table '%s' not found", table))
	}
	key := strings.ToLower(x.Name.Name)
	if _, dup := s.indexes[key]; dup {
		if x.IfNotExists {
			return Outcome{Message: fmt.Sprintf("Index '%s' already exists.", x.Name.Name)}, nil
		}
		return Outcome{}, sql.ErrorAt(text, x.Name.Pos(), fmt.Sprintf("index '%s' already exists", x.Name.Name))
	}
	if s.indexes == nil {
		s.indexes = map[string]string{}
	}
	s.indexes[key] = table
	return Outcome{Message: fmt.Sprintf("CREATE INDEX %s accepted and ignored: clink keeps no indexes.", x.Name.Name)}, nil
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// execOptions merges the environment's A/B switches with the session's.
func (s *Session) execOptions() (exec.Options, exec.Options) {
	env := exec.EnvOptions()
	o := env
	if v, ok := s.sets["columnar"]; ok && isOff(v) {
		o.DisableColumnar = true
	}
	if v, ok := s.sets["columnar.output"]; ok && isOff(v) {
		o.DisableColumnarOutput = true
	}
	if v, ok := s.sets["columnar.dictionary"]; ok && isOff(v) {
		o.DisableDictionary = true
	}
	if v, ok := s.sets["scan.late-materialization"]; ok && isOff(v) {
		o.DisableLateMaterialization = true
	}
	return o, env
}

func isOff(v string) bool {
	switch strings.ToLower(v) {
	case "off", "false", "0", "disabled":
		return true
	}
	return false
}

// planQuery binds a query and runs the rules over it.
func (s *Session) planQuery(q *ast.Query, text string) (plan.Node, []plan.Step, error) {
	return s.planQueryTrace(q, text, false)
}

// planQueryTrace is planQuery that, with trace, keeps the plan after each
// rule (EXPLAIN VERBOSE).
func (s *Session) planQueryTrace(q *ast.Query, text string, trace bool) (plan.Node, []plan.Step, error) {
	n, err := plan.Bind(s.cat, q, s.bindOptions(text))
	if err != nil {
		return nil, nil, err
	}
	ro := s.ruleOptions()
	ro.Trace = trace
	return plan.Optimize(n, ro)
}

// prepare binds and plans a query whose results go to sink.
func (s *Session) prepare(q *ast.Query, text string, sink exec.Operator, progress *exec.Progress) (*plan.Physical, error) {
	n, _, err := s.planQuery(q, text)
	if err != nil {
		return nil, err
	}
	return plan.Build(n, sink, s.buildOptions(progress))
}

// buildOptions are the physical planning options of the session's settings.
func (s *Session) buildOptions(progress *exec.Progress) plan.BuildOptions {
	o, env := s.execOptions()
	ttl, _ := sql.ParseDuration(s.sets["table.exec.state.ttl"]) // checked by SET
	fixed := os.Getenv("CLINK_FIXED_SPLITS") == "1"
	if v, ok := s.sets["parallelism.shared-ranges"]; ok && isOff(v) {
		fixed = true
	}
	return plan.BuildOptions{Exec: o, EnvSwitches: env, Mem: s.mem, Progress: progress, Parallelism: s.parallelism(),
		StateTTL: ttl, FixedSplits: fixed, Budget: s.memoryBudget()}
}

// ruleOptions are the session's settings the logical rules read.
func (s *Session) ruleOptions() plan.RuleOptions {
	broadcast := int64(defaultBroadcastRows)
	if v, ok := s.sets["parallelism.broadcast-rows"]; ok {
		broadcast, _ = strconv.ParseInt(v, 10, 64) // checked by SET
	}
	return plan.RuleOptions{Streaming: s.sets["execution.runtime-mode"] == "streaming",
		Parallelism: s.parallelism(), BroadcastRows: broadcast}
}

// defaultBroadcastRows is the largest build side (by table metadata) a
// parallel batch join broadcasts to every probe subtask: a million rows
// hash in tens of milliseconds per subtask, less than shuffling the
// bigger probe side costs (the planner also wants parallelism times as
// many probe rows where it knows them).
const defaultBroadcastRows = 1_000_000

// bindOptions are the session's settings that shape binding, for a
// statement of the given text.
func (s *Session) bindOptions(text string) plan.BindOptions {
	return plan.BindOptions{Streaming: s.sets["execution.runtime-mode"] == "streaming", Text: text}
}

// parallelism is SET 'parallelism' = 'N', by default the number of cores.
func (s *Session) parallelism() int {
	if v, ok := s.sets["parallelism"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
}

func (s *Session) runQuery(ctx context.Context, q *ast.Query, text string, w ResultWriter, opts ExecOptions) (Outcome, error) {
	var rows atomic.Int64
	sink := ops.NewCollect(func(ctx context.Context, b *exec.Batch) error {
		rows.Add(int64(b.Len()))
		if w == nil {
			return nil
		}
		return w.Batch(b)
	})
	p, err := s.prepare(q, text, sink, opts.Progress)
	if err != nil {
		return Outcome{}, err
	}
	if w != nil {
		if ow, ok := w.(OrderedWriter); ok && p.Order != nil {
			ow.ResultOrder(p.Order)
		}
		if kw, ok := w.(KeyedWriter); ok && p.Key != nil {
			kw.ResultKey(p.Key)
		}
		if err := w.Columns(p.Schema, p.Bounded); err != nil {
			return Outcome{}, err
		}
	}
	if err := s.setupCheckpoints(ctx, p, "", opts); err != nil {
		return Outcome{}, err
	}
	err = runGraph(ctx, p)
	return Outcome{Rows: rows.Load()}, err
}

// Settings lists the session settings.
func (s *Session) Settings() map[string]string {
	out := map[string]string{}
	for k, v := range s.sets {
		out[k] = v
	}
	return out
}

var knownSettings = map[string]string{
	"parallelism":                      "parallel subtasks per query (default: the number of cores)",
	"parallelism.shared-ranges":        "on|off: parallel Parquet scans take row ranges from one queue as they run; off gives each subtask fixed row groups (CLINK_FIXED_SPLITS)",
	"parallelism.broadcast-rows":       "a parallel batch join whose build side is a Parquet scan of at most this many rows sends it to every probe subtask instead of shuffling both sides by key (default 1000000; 0: never)",
	"columnar":                         "on|off: columnar operator paths (CLINK_DISABLE_COLUMNAR)",
	"columnar.output":                  "on|off: born-columnar operator output (CLINK_DISABLE_COLUMNAR_OUTPUT)",
	"columnar.dictionary":              "on|off: dictionary-encoded VARCHAR from Parquet scans to GROUP BY keys (CLINK_DISABLE_DICTIONARY)",
	"scan.late-materialization":        "on|off: Parquet scans evaluate the WHERE first and decode other columns only for rows that pass, and skip pages and row groups by page statistics and dictionaries; off skips whole row groups by their statistics only (CLINK_DISABLE_LATE_MATERIALIZATION)",
	"sql-client.execution.result-mode": "table|changelog|tableau",
	"table.exec.state.ttl":             "how long a regular streaming join keeps a row, e.g. '1 h' (default 0: forever)",
	"execution.memory-limit":           "the memory a query's hash tables, sorts and join builds may take before GROUP BY and ORDER BY spill to disk (or the query fails naming the limit), e.g. '2gb', '512mb', 'unlimited' (default: CLINK_MEMORY_LIMIT, else half of the machine's or cgroup's memory)",
	"execution.spill-dir":              "the directory spill files go under (default: the system's temp dir, $TMPDIR)",
	"scan.startup.mode":                "earliest-offset|latest-offset: where the demo table (nexmark, and its views bid, auction, person) starts reading in the queries that follow (default latest-offset); a table created WITH its own options keeps them",
	"execution.runtime-mode":           "streaming|batch: streaming plans bounded inputs as streams (streaming joins, changelogs); batch (default) uses batch operators where the inputs are bounded",
}

func (s *Session) set(x *ast.Set, w ResultWriter) (Outcome, error) {
	if x.Key == "" {
		keys := make([]string, 0, len(s.sets))
		for k := range s.sets {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var rows []exec.Row
		for _, k := range keys {
			rows = append(rows, exec.Row{k, s.sets[k]})
		}
		return writeRows(w, []string{"key", "value"}, rows)
	}
	k := strings.ToLower(x.Key)
	if _, ok := knownSettings[k]; !ok {
		var names []string
		for n := range knownSettings {
			names = append(names, n)
		}
		sort.Strings(names)
		return Outcome{}, fmt.Errorf("unknown setting '%s' (known: %s)", x.Key, strings.Join(names, ", "))
	}
	if k == "sql-client.execution.result-mode" {
		switch strings.ToLower(x.Value) {
		case "table", "changelog", "tableau":
			x.Value = strings.ToLower(x.Value)
		default:
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': want 'table', 'changelog' or 'tableau'", k, x.Value)
		}
	}
	if k == "execution.runtime-mode" {
		switch strings.ToLower(x.Value) {
		case "streaming", "batch":
			x.Value = strings.ToLower(x.Value)
		default:
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': want 'streaming' or 'batch'", k, x.Value)
		}
	}
	if k == "parallelism" {
		if n, err := strconv.Atoi(x.Value); err != nil || n < 1 || n > 256 {
			return Outcome{}, fmt.Errorf("SET 'parallelism' = '%s': want a whole number from 1 to 256", x.Value)
		}
	}
	if k == "parallelism.broadcast-rows" {
		if n, err := strconv.ParseInt(x.Value, 10, 64); err != nil || n < 0 {
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': want a whole number of rows, 0 or more (0: never broadcast)", k, x.Value)
		}
	}
	if k == "table.exec.state.ttl" {
		if d, err := sql.ParseDuration(x.Value); err != nil || d < 0 {
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': want a duration such as '1 h', '30 min' or '0' (keep state forever)", k, x.Value)
		}
	}
	if k == "execution.memory-limit" {
		n, err := parseMemoryLimit(x.Value)
		if err != nil {
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': %v", k, x.Value, err)
		}
		applyGCLimit(n)
	}
	if k == "execution.spill-dir" {
		if st, err := os.Stat(x.Value); err != nil || !st.IsDir() {
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': not a directory", k, x.Value)
		}
	}
	if k == "scan.startup.mode" {
		switch strings.ToLower(x.Value) {
		case kafka.StartEarliest, kafka.StartLatest:
			x.Value = strings.ToLower(x.Value)
		default:
			return Outcome{}, fmt.Errorf("SET '%s' = '%s': want 'earliest-offset' or 'latest-offset' (the demo table has no consumer group or start time)", k, x.Value)
		}
		s.setDemoStartup(x.Value)
	}
	if err := checkCheckpointSetting(k, x.Value); err != nil {
		return Outcome{}, err
	}
	s.sets[k] = x.Value
	return Outcome{Message: fmt.Sprintf("SET '%s' = '%s'", k, x.Value)}, nil
}

// writeRows sends a small VARCHAR result (SHOW, DESCRIBE) to w.
func writeRows(w ResultWriter, names []string, rows []exec.Row) (Outcome, error) {
	fs := make([]arrow.Field, len(names))
	for i, n := range names {
		fs[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	schema := arrow.NewSchema(fs, nil)
	if w == nil {
		return Outcome{Rows: int64(len(rows))}, nil
	}
	if err := w.Columns(schema, true); err != nil {
		return Outcome{}, err
	}
	b := exec.NewRowBatch(schema, rows)
	defer b.Release()
	if err := w.Batch(b); err != nil && !errors.Is(err, exec.ErrStop) {
		return Outcome{}, err
	}
	return Outcome{Rows: int64(len(rows))}, nil
}
