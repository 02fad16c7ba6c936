// Package explain renders a physical plan, its gate decisions and, after a
// run, its runtime counters. It computes nothing itself: everything it shows
// was recorded by the planner (plan.Stage, plan.Gate) or counted by the
// executor (exec.StageStats, exec.Reporter). BuildDocument collects that
// into one Document, and every face renders the Document: Text for the
// shell, encoding/json for EXPLAIN (FORMAT JSON), the notebook kernel's HTML
// table and mermaid diagram. Text = render(Document), so the formats cannot
// disagree.
//
// # The JSON document (EXPLAIN (FORMAT JSON), schema version 1)
//
// Counts are integers; times are integer nanoseconds (fields ending _ns).
// Fields marked optional are left out when empty.
//
//	version       int      SchemaVersion (1); bumped when a field changes meaning
//	analyze       bool     true after EXPLAIN ANALYZE (stages carry runtime, totals is set)
//	bounded       bool     every source ends by itself (Parquet, nexmark with events.num)
//	switches      object   A/B switches in force, each as its reason text (optional fields):
//	  disable_columnar         "disabled: CLINK_DISABLE_COLUMNAR" or "disabled: SET 'columnar' = 'off'"
//	  disable_columnar_output  "disabled: CLINK_DISABLE_COLUMNAR_OUTPUT" or "disabled: SET 'columnar.output' = 'off'"
//	  disable_dictionary       "disabled: CLINK_DISABLE_DICTIONARY" or "disabled: SET 'columnar.dictionary' = 'off'"
//	root          int      id of the result sink, the top of the tree
//	stages        array    one object per stage, by id:
//	  id            int      stage number, as printed in the text ("[3]")
//	  operator      string   SQL-terms name: Scan, Values, Filter, Project, HashAggregate, HashJoin,
//	                         Sort, TopN, Limit, UnionAll, Exchange, ResultSink or the INSERT sink
//	  kind          string   runtime operator kind, as in /metrics labels ("filter", "parquet-scan")
//	  args          string   arguments in SQL terms (optional)
//	  inputs        [int]    ids of the input stages, in input order (optional; absent for sources)
//	  source        bool     the stage is a source (optional)
//	  parallelism   int      parallel subtasks; runtime counters are summed over them
//	  ingests       string   "columnar" or "rows" (absent for sources)
//	  ingests_reason string  why a columnar-capable stage ingests rows: a switch's reason (optional)
//	  emits         string   "born-columnar" (builds Arrow output itself), "rows", "pass-through"
//	                         (emits its input's representation)
//	  gate          object   the planner's output decision, for stages that can emit born columnar (optional):
//	    columnar      bool
//	    reason        string   stable code: consumers-ingest-columnar, consumer-ingests-rows,
//	                           source-born-columnar, or a switch's "disabled: ..." text
//	    cause         string   the consumer(s) that decided, in SQL terms, with the pass-through
//	                           operators crossed to reach them: "UpdatingAggregate through Filter, Project" (optional)
//	  scan          object   sources only (optional):
//	    columns            [string]  columns read (projection pushdown)
//	    skip_filters       [string]  conjuncts the source uses to skip row groups (only sources that do: Parquet)
//	    row_groups_total   int       row groups in the scanned files (Parquet)
//	    row_groups_skipped int       row groups the filters let the scan skip
//	    ignored_filters    [string]  conjuncts offered to a source that does not use them
//	    dictionary         [string]  VARCHAR columns handed out as dictionary codes (to GROUP BY keys)
//	    dictionary_batches [int,int] after ANALYZE: column batches handed out as codes, and plain
//	                                 (a file's fallback pages)
//	    shared_ranges      bool      the subtasks take row ranges from one queue as they run (Parquet, parallelism > 1)
//	    row_ranges         int       after ANALYZE: ranges read
//	    row_groups_cut     int       after ANALYZE: row groups cut into several ranges (at page boundaries)
//	  runtime       object   after ANALYZE:
//	    rows_in, batches_in                   data into the stage
//	    batches_in_columnar, batches_in_rows  how those batches arrived
//	    batches_columnar_path                 batches the columnar hook took
//	    rows_out, batches_out                 data out of the stage
//	    batches_out_columnar, batches_out_rows
//	    batches_materialized, rows_materialized  row decodes this stage caused
//	    columnar_emits      emissions the stage built born columnar
//	    held_back_emits     emissions a damper held back to rows
//	    decode_fallbacks    batches a columnar decoder gave up on
//	    skipped_records     bad input records skipped
//	    watermarks_in       watermarks received
//	    damper              object (optional): subtasks, backed_off_subtasks, small_run,
//	                        threshold, min_rows, probe
//	    counters            [{name, value}] the operator's own counts (optional), e.g. "build rows"
//	    elapsed_ns          time in the stage itself, excluding its consumers (busiest subtask)
//	    started, finished   bool
//	totals        object   after ANALYZE:
//	  rows                          result rows
//	  elapsed_ns                    wall time of the run
//	  end                           "finished", "limit" (unbounded query stopped at its LIMIT),
//	                                "cancelled" (Ctrl-C / interrupt), "duration" (DURATION bound)
//	  batches_materialized, rows_materialized  this query's materialisations (sum over stages)
//	  process_batches_materialized  exec.Global after the run: clink_batch_materializations_total
//	  process_rows_materialized     clink_rows_materialized_total
//
// A cancelled or DURATION-bounded run still yields a complete document:
// the counters cover what ran.
package explain
