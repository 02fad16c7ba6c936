package explain

import (
	"time"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/plan"
)

// SchemaVersion is the version of the Document layout. It changes when a
// field changes meaning or goes away; new optional fields do not bump it.
const SchemaVersion = 1

// Document is everything EXPLAIN [ANALYZE] shows, as one value: the text
// renderer renders it, FORMAT JSON marshals it, the notebook kernel draws it.
// See doc.go for the meaning of every field.
type Document struct {
	Version  int      `json:"version"`
	Analyze  bool     `json:"analyze"`
	Bounded  bool     `json:"bounded"`
	Switches Switches `json:"switches"`
	// Root is the ID of the result sink, the top of the tree.
	Root int `json:"root"`
	// Stages are in ID order; Inputs link them into the tree.
	Stages []Stage `json:"stages"`
	Totals *Totals `json:"totals,omitempty"`
	// Rules are the logical plan as bound and after each rule that changed
	// it, in rule order (VERBOSE only).
	Rules []RuleStep `json:"rules,omitempty"`
	// Passes are the physical passes after the rules, in order, with what
	// each decided (VERBOSE only).
	Passes []PassStep `json:"passes,omitempty"`
}

// PassStep is one physical pass: its name, why it sits where it does, and
// a line per stage it decided.
type PassStep struct {
	Pass      string   `json:"pass"`
	Why       string   `json:"why"`
	Decisions []string `json:"decisions"`
}

// RuleStep is the logical plan after one rule.
type RuleStep struct {
	Rule string `json:"rule"`
	Plan string `json:"plan"`
}

// Switches are the A/B switches in force, each as the reason text EXPLAIN
// prints where it changed a decision ("" when off).
type Switches struct {
	DisableColumnar       string `json:"disable_columnar,omitempty"`
	DisableColumnarOutput string `json:"disable_columnar_output,omitempty"`
	DisableDictionary     string `json:"disable_dictionary,omitempty"`
	// DisableLateMaterialization: scans skip whole row groups by their
	// statistics only and evaluate no predicate.
	DisableLateMaterialization string `json:"disable_late_materialization,omitempty"`
}

// Stage is one node of the physical plan.
type Stage struct {
	ID       int    `json:"id"`
	Operator string `json:"operator"`
	Kind     string `json:"kind"`
	Args     string `json:"args,omitempty"`
	Inputs   []int  `json:"inputs,omitempty"`
	Source   bool   `json:"source,omitempty"`
	// Parallelism is the number of parallel subtasks; counters are summed
	// over them.
	Parallelism int `json:"parallelism"`
	// Ingests is "columnar" or "rows" (empty for a source); IngestsReason
	// says why a columnar-capable stage ingests rows.
	Ingests       string   `json:"ingests,omitempty"`
	IngestsReason string   `json:"ingests_reason,omitempty"`
	Emits         string   `json:"emits"`
	Gate          *Gate    `json:"gate,omitempty"`
	Scan          *Scan    `json:"scan,omitempty"`
	Runtime       *Runtime `json:"runtime,omitempty"`
}

// Gate is the planner's decision on a stage's output.
type Gate struct {
	Columnar bool   `json:"columnar"`
	Reason   string `json:"reason"`
	Cause    string `json:"cause,omitempty"`
}

// Scan is what a source was given and what it did with it.
type Scan struct {
	Columns []string `json:"columns,omitempty"`
	// SkipFilters is the predicate the source uses to skip row groups;
	// set only for sources that do skip (Parquet).
	SkipFilters      []string `json:"skip_filters,omitempty"`
	RowGroupsTotal   *int     `json:"row_groups_total,omitempty"`
	RowGroupsSkipped *int     `json:"row_groups_skipped,omitempty"`
	// IgnoredFilters were offered to a source that does not use them.
	IgnoredFilters []string `json:"ignored_filters,omitempty"`
	// Dictionary are the VARCHAR columns the scan hands out as dictionary
	// codes (to GROUP BY keys); after a run, DictionaryBatches counts the
	// column batches that were codes and those a file had plain.
	Dictionary        []string  `json:"dictionary,omitempty"`
	DictionaryBatches *[2]int64 `json:"dictionary_batches,omitempty"`
	// SharedRanges: the subtasks take row ranges from one queue as they
	// run (Parquet at parallelism > 1); after a run, RowRanges counts the
	// ranges read and RowGroupsCut the row groups cut into several.
	SharedRanges bool   `json:"shared_ranges,omitempty"`
	RowRanges    *int64 `json:"row_ranges,omitempty"`
	RowGroupsCut *int   `json:"row_groups_cut,omitempty"`
	// Predicate are the WHERE conjuncts the source evaluates itself
	// before it decodes the other columns (late materialisation).
	Predicate []string `json:"predicate,omitempty"`
	// Counts, after ANALYZE, say what the source skipped below row
	// groups and what evaluating the predicate did.
	Counts *ScanCounts `json:"counts,omitempty"`
}

// ScanCounts are a source's counters beyond row groups skipped by their
// statistics (see connectors.ScanCounts).
type ScanCounts struct {
	RowGroupsByDictionary int64 `json:"row_groups_by_dictionary"`
	RowGroupsByPages      int64 `json:"row_groups_by_pages"`
	RowsByPages           int64 `json:"rows_by_pages"`
	PagesRead             int64 `json:"pages_read"`
	PageBytes             int64 `json:"page_bytes"`
	PagesJumped           int64 `json:"pages_jumped"`
	RowsEvaluated         int64 `json:"rows_evaluated"`
	RowsPassed            int64 `json:"rows_passed"`
	RowsDecoded           int64 `json:"rows_decoded"`
	BatchesUnevaluated    int64 `json:"batches_unevaluated"`
}

// Runtime are a stage's counters after EXPLAIN ANALYZE.
type Runtime struct {
	RowsIn              int64   `json:"rows_in"`
	BatchesIn           int64   `json:"batches_in"`
	BatchesInColumnar   int64   `json:"batches_in_columnar"`
	BatchesInRows       int64   `json:"batches_in_rows"`
	BatchesColumnarPath int64   `json:"batches_columnar_path"`
	RowsOut             int64   `json:"rows_out"`
	BatchesOut          int64   `json:"batches_out"`
	BatchesOutColumnar  int64   `json:"batches_out_columnar"`
	BatchesOutRows      int64   `json:"batches_out_rows"`
	BatchesMaterialized int64   `json:"batches_materialized"`
	RowsMaterialized    int64   `json:"rows_materialized"`
	ColumnarEmits       int64   `json:"columnar_emits"`
	HeldBackEmits       int64   `json:"held_back_emits"`
	DecodeFallbacks     int64   `json:"decode_fallbacks"`
	SkippedRecords      int64   `json:"skipped_records"`
	WatermarksIn        int64   `json:"watermarks_in"`
	Damper              *Damper `json:"damper,omitempty"`
	Counters            []Count `json:"counters,omitempty"`
	ElapsedNanos        int64   `json:"elapsed_ns"`
	Started             bool    `json:"started"`
	Finished            bool    `json:"finished"`
}

// Damper is the state of a stage's dampers (one per subtask) at the end
// of the run.
type Damper struct {
	Subtasks          int `json:"subtasks"`
	BackedOffSubtasks int `json:"backed_off_subtasks"`
	SmallRun          int `json:"small_run"` // longest current run of small emissions
	Threshold         int `json:"threshold"`
	MinRows           int `json:"min_rows"`
	Probe             int `json:"probe"`
}

// Count is an operator's own named counter.
type Count struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Totals summarise an EXPLAIN ANALYZE run.
type Totals struct {
	Rows         int64  `json:"rows"`
	ElapsedNanos int64  `json:"elapsed_ns"`
	End          string `json:"end"`
	// What this query materialised (the sum over its stages).
	BatchesMaterialized int64 `json:"batches_materialized"`
	RowsMaterialized    int64 `json:"rows_materialized"`
	// The process-wide counters (exec.Global) after the run.
	ProcessBatchesMaterialized int64 `json:"process_batches_materialized"`
	ProcessRowsMaterialized    int64 `json:"process_rows_materialized"`
	// Checkpoints taken during the run (nil without checkpointing).
	Checkpoints *CheckpointTotals `json:"checkpoints,omitempty"`
}

// CheckpointTotals are a run's checkpoints (exec.CheckpointStats).
type CheckpointTotals struct {
	Completed     int64 `json:"completed"`
	LastID        int64 `json:"last_id"`
	LastNanos     int64 `json:"last_duration_ns"`
	LastSizeBytes int64 `json:"last_size_bytes"`
}

// How a run ended (Totals.End).
const (
	EndFinished  = "finished"  // every source ended
	EndLimit     = "limit"     // an unbounded query stopped at its LIMIT
	EndCancelled = "cancelled" // the user cancelled (Ctrl-C, interrupt)
	EndDuration  = "duration"  // the statement's DURATION bound passed
)

// Report is what the caller measured around an EXPLAIN ANALYZE run. The
// stage counters are read from the plan itself.
type Report struct {
	Elapsed time.Duration
	Rows    int64 // result rows
	End     string
	// Process-wide counters after the run (exec.Global).
	ProcessBatchesMaterialized int64
	ProcessRowsMaterialized    int64
}

// NewReport reads the process-wide counters into a report.
func NewReport(elapsed time.Duration, rows int64, end string) *Report {
	return &Report{Elapsed: elapsed, Rows: rows, End: end,
		ProcessBatchesMaterialized: exec.Global.BatchesMaterialized.Load(),
		ProcessRowsMaterialized:    exec.Global.RowsMaterialized.Load()}
}

// skipper is a source that uses its filters to skip row groups (Parquet).
// A source without it ignores the filters, and EXPLAIN does not claim
// skipping for it.
type skipper interface {
	Filters() []connectors.ColumnFilter
	RowGroups() (total, skipped int)
}

// BuildDocument collects p (and, after an EXPLAIN ANALYZE run, the stage
// counters and r) into a Document. With r nil it describes the plan only.
func BuildDocument(p *plan.Physical, r *Report) *Document {
	doc := &Document{Version: SchemaVersion, Analyze: r != nil, Bounded: p.Bounded, Root: p.Root.ID}
	doc.Switches = switches(p)
	for _, s := range p.Stages {
		doc.Stages = append(doc.Stages, stage(p, s, doc.Switches, r != nil))
	}
	sortStages(doc.Stages)
	if r != nil {
		t := &Totals{Rows: r.Rows, ElapsedNanos: int64(r.Elapsed), End: r.End,
			ProcessBatchesMaterialized: r.ProcessBatchesMaterialized,
			ProcessRowsMaterialized:    r.ProcessRowsMaterialized}
		for _, s := range doc.Stages {
			t.BatchesMaterialized += s.Runtime.BatchesMaterialized
			t.RowsMaterialized += s.Runtime.RowsMaterialized
		}
		if p.Graph.CheckpointsEnabled() {
			cs := p.Graph.CheckpointStats()
			t.Checkpoints = &CheckpointTotals{Completed: cs.Completed, LastID: cs.LastID,
				LastNanos: int64(cs.LastDuration), LastSizeBytes: cs.LastSize}
		}
		doc.Totals = t
	}
	return doc
}

func switches(p *plan.Physical) Switches {
	var sw Switches
	if p.Options.DisableColumnar {
		sw.DisableColumnar = plan.ReasonDisabledColumnar
		if !p.EnvSwitches.DisableColumnar {
			sw.DisableColumnar = "disabled: SET 'columnar' = 'off'"
		}
	}
	if p.Options.DisableColumnarOutput {
		sw.DisableColumnarOutput = plan.ReasonDisabledOutput
		if !p.EnvSwitches.DisableColumnarOutput {
			sw.DisableColumnarOutput = "disabled: SET 'columnar.output' = 'off'"
		}
	}
	if p.Options.DisableDictionary {
		sw.DisableDictionary = "disabled: CLINK_DISABLE_DICTIONARY"
		if !p.EnvSwitches.DisableDictionary {
			sw.DisableDictionary = "disabled: SET 'columnar.dictionary' = 'off'"
		}
	}
	if p.Options.DisableLateMaterialization {
		sw.DisableLateMaterialization = "disabled: CLINK_DISABLE_LATE_MATERIALIZATION"
		if !p.EnvSwitches.DisableLateMaterialization {
			sw.DisableLateMaterialization = "disabled: SET 'scan.late-materialization' = 'off'"
		}
	}
	return sw
}

func sortStages(st []Stage) {
	for i := 1; i < len(st); i++ {
		for j := i; j > 0 && st[j].ID < st[j-1].ID; j-- {
			st[j], st[j-1] = st[j-1], st[j]
		}
	}
}

func stage(p *plan.Physical, s *plan.Stage, sw Switches, analyze bool) Stage {
	out := Stage{ID: s.ID, Operator: s.Op, Args: s.Detail, Emits: string(s.Output), Source: s.Source != nil}
	for _, c := range s.Children {
		out.Inputs = append(out.Inputs, c.ID)
	}
	ins := instances(s)
	out.Parallelism = len(ins)
	switch {
	case s.Exec != nil && s.Exec.Op != nil:
		out.Kind = s.Exec.Op.Kind()
	case s.Source != nil:
		out.Kind = s.Source.Kind()
	}
	if !out.Source {
		out.Ingests = "rows"
		if s.Caps.IngestsColumnar {
			out.Ingests = "columnar"
			if p.Options.DisableColumnar {
				out.Ingests, out.IngestsReason = "rows", sw.DisableColumnar
			}
		}
	}
	if g := s.Gate; g != nil {
		out.Gate = &Gate{Columnar: g.Columnar, Reason: g.Reason, Cause: g.Cause}
	}
	if out.Source {
		out.Scan = scan(s, ins, analyze)
	}
	if analyze && len(ins) > 0 {
		out.Runtime = runtime(s, ins)
	}
	return out
}

// instances are the stage's parallel subtasks (at least its one stage).
func instances(s *plan.Stage) []*exec.Stage {
	if len(s.Instances) > 0 {
		return s.Instances
	}
	if s.Exec != nil {
		return []*exec.Stage{s.Exec}
	}
	return nil
}

// dictionaryCounter is a source that counts the column batches it handed
// out as dictionary codes and as plain values (a file may fall back to
// plain pages).
type dictionaryCounter interface {
	DictionaryBatches() (dict, plain int64)
}

// rangeSharer is a split source whose parts take row ranges from a shared
// queue (Parquet).
type rangeSharer interface {
	RowRanges() (shared bool, ranges int64, cut int)
}

// predicateScanner is a source that evaluates (part of) the WHERE itself
// (Parquet): the conjuncts it evaluates, none when it evaluates nothing.
type predicateScanner interface {
	Predicate() []string
}

// scanCounter is a source that counts what it skipped below row groups
// and what evaluating its predicate did (Parquet).
type scanCounter interface {
	ScanCounts() connectors.ScanCounts
}

func scan(s *plan.Stage, ins []*exec.Stage, analyze bool) *Scan {
	sc := &Scan{Columns: s.Columns}
	if _, ok := s.Source.(skipper); ok {
		// Each split plans its own row groups; together they cover the table.
		var total, skipped int
		used := false
		for _, in := range ins {
			sk, ok := in.Src.(skipper)
			if !ok {
				continue
			}
			t, k := sk.RowGroups()
			total += t
			skipped += k
			used = used || len(sk.Filters()) > 0
		}
		sc.RowGroupsTotal, sc.RowGroupsSkipped = &total, &skipped
		if used {
			sc.SkipFilters = s.Filters
		}
	} else {
		sc.IgnoredFilters = s.Filters
	}
	sc.Dictionary = s.Dictionary
	if len(s.Dictionary) > 0 && analyze {
		var n [2]int64
		for _, in := range ins {
			if dc, ok := in.Src.(dictionaryCounter); ok {
				d, p := dc.DictionaryBatches()
				n[0] += d
				n[1] += p
			}
		}
		sc.DictionaryBatches = &n
	}
	var ranges int64
	cut := 0
	for _, in := range ins {
		if rs, ok := in.Src.(rangeSharer); ok {
			shared, n, c := rs.RowRanges()
			sc.SharedRanges = sc.SharedRanges || shared
			ranges += n
			cut = max(cut, c)
		}
	}
	if sc.SharedRanges && analyze {
		sc.RowRanges, sc.RowGroupsCut = &ranges, &cut
	}
	if ps, ok := s.Source.(predicateScanner); ok {
		sc.Predicate = ps.Predicate()
	}
	if _, ok := s.Source.(scanCounter); ok && analyze {
		var n ScanCounts
		for _, in := range ins {
			sc, ok := in.Src.(scanCounter)
			if !ok {
				continue
			}
			c := sc.ScanCounts()
			n.RowGroupsByDictionary += c.RowGroupsByDictionary
			n.RowGroupsByPages += c.RowGroupsByPages
			n.RowsByPages += c.RowsByPages
			n.PagesRead += c.PagesRead
			n.PageBytes += c.PageBytes
			n.PagesJumped += c.PagesJumped
			n.RowsEvaluated += c.RowsEvaluated
			n.RowsPassed += c.RowsPassed
			n.RowsDecoded += c.RowsDecoded
			n.BatchesUnevaluated += c.BatchesUnevaluated
		}
		sc.Counts = &n
	}
	if sc.Columns == nil && sc.SkipFilters == nil && sc.IgnoredFilters == nil && sc.RowGroupsTotal == nil && sc.Dictionary == nil {
		return nil
	}
	return sc
}

func runtime(s *plan.Stage, ins []*exec.Stage) *Runtime {
	rt := &Runtime{Started: true, Finished: true}
	var d *Damper
	for _, in := range ins {
		st := &in.Stats
		rt.RowsIn += st.RowsIn.Load()
		rt.BatchesIn += st.BatchesIn.Load()
		rt.BatchesInColumnar += st.BatchesInColumnar.Load()
		rt.BatchesInRows += st.BatchesInRows.Load()
		rt.BatchesColumnarPath += st.BatchesColumnarPath.Load()
		rt.RowsOut += st.RowsOut.Load()
		rt.BatchesOut += st.BatchesOut.Load()
		rt.BatchesOutColumnar += st.BatchesOutColumnar.Load()
		rt.BatchesOutRows += st.BatchesOutRows.Load()
		rt.BatchesMaterialized += st.BatchesMaterialized.Load()
		rt.RowsMaterialized += st.RowsMaterialized.Load()
		rt.WatermarksIn += st.WatermarksIn.Load()
		// Subtasks run side by side: the stage's time is the busiest one's.
		rt.ElapsedNanos = max(rt.ElapsedNanos, st.Nanos.Load())
		rt.Started = rt.Started && st.Started.Load()
		rt.Finished = rt.Finished && st.Finished.Load()

		var rep exec.Reporter
		if in.Op != nil {
			rep, _ = in.Op.(exec.Reporter)
		} else if in.Src != nil {
			rep, _ = in.Src.(exec.Reporter)
		}
		var emits int64
		if s.Output == plan.OutBornColumnar {
			// A born-columnar stage builds every columnar batch it emits.
			emits = st.BatchesOutColumnar.Load()
		}
		if rep != nil {
			r := rep.Report()
			emits = max(emits, r.ColumnarEmits)
			rt.HeldBackEmits += r.HeldBackEmits
			rt.DecodeFallbacks += r.DecodeFallbacks
			rt.SkippedRecords += r.SkippedRecords
			if ds := r.Damper; ds != nil {
				if d == nil {
					d = &Damper{Threshold: ds.Threshold, MinRows: ds.MinRows, Probe: ds.Probe}
				}
				d.Subtasks++
				if ds.BackedOff {
					d.BackedOffSubtasks++
				}
				d.SmallRun = max(d.SmallRun, ds.SmallRun)
			}
			rt.Counters = addCounts(rt.Counters, r.Counters)
		}
		rt.ColumnarEmits += emits
	}
	rt.Damper = d
	return rt
}

// addCounts sums named counters over subtasks, keeping first-seen order.
func addCounts(into []Count, add []exec.NamedCount) []Count {
next:
	for _, c := range add {
		for i := range into {
			if into[i].Name == c.Name {
				into[i].Value += c.Value
				continue next
			}
		}
		into = append(into, Count{Name: c.Name, Value: c.Value})
	}
	return into
}
