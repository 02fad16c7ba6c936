package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/explain"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// explain runs EXPLAIN [ANALYZE] [(FORMAT TEXT|JSON, VERBOSE, DURATION 'd')].
// The result is one explain.Document, carried in Outcome.Explain; Text is
// that document rendered as text or JSON. EXPLAIN ANALYZE runs the query
// (results are counted, not returned) until it ends, reaches its LIMIT, is
// cancelled or passes its DURATION; a cancelled run still reports what ran.
func (s *Session) explain(ctx context.Context, x *ast.Explain, text string, _ ResultWriter, opts ExecOptions) (Outcome, error) {
	return s.explainWith(ctx, x, text, opts, nil)
}

// sinkPlan makes the consumer of an EXPLAIN ANALYZE run around fn, and
// names it for the plan. nil: the result sink (ops.Collect).
type sinkPlan func(fn func(context.Context, *exec.Batch) error) (exec.Operator, string)

func (s *Session) explainWith(ctx context.Context, x *ast.Explain, text string, opts ExecOptions, mkSink sinkPlan) (Outcome, error) {
	q, ok := x.Stmt.(*ast.Query)
	if !ok {
		return Outcome{}, sql.ErrorAt(text, x.Stmt.Pos(), "EXPLAIN supports queries only")
	}
	format := strings.ToUpper(x.Format)
	switch format {
	case "", "TEXT", "JSON":
	default:
		return Outcome{}, sql.ErrorAt(text, x.Pos(), fmt.Sprintf("EXPLAIN (FORMAT %s): unknown format (TEXT or JSON)", x.Format))
	}
	verbose := x.Verbose
	var bound time.Duration
	for _, o := range x.Options {
		switch strings.ToUpper(o.Key) {
		case "DURATION":
			if !x.Analyze {
				return Outcome{}, sql.ErrorAt(text, o.Pos(), fmt.Sprintf("EXPLAIN (DURATION '%s') needs ANALYZE: only a run has a duration", o.Value))
			}
			var err error
			if bound, err = parseDuration(o.Value); err != nil {
				return Outcome{}, sql.ErrorAt(text, o.Pos(), fmt.Sprintf("EXPLAIN ANALYZE (DURATION '%s'): %v", o.Value, err))
			}
		default:
			return Outcome{}, sql.ErrorAt(text, o.Pos(), fmt.Sprintf("unknown EXPLAIN option %s (known: ANALYZE, VERBOSE, FORMAT, DURATION)", o.Key))
		}
	}

	var rows atomic.Int64
	count := func(_ context.Context, b *exec.Batch) error {
		rows.Add(int64(b.Len()))
		return nil
	}
	var sink exec.Operator = ops.NewCollect(count)
	sinkName := ""
	if mkSink != nil {
		sink, sinkName = mkSink(count)
	}
	n, steps, err := s.planQueryTrace(q, text, verbose)
	if err != nil {
		return Outcome{}, err
	}
	bo := s.buildOptions(opts.Progress)
	bo.SinkName = sinkName
	p, err := plan.Build(n, sink, bo)
	if err != nil {
		return Outcome{}, err
	}
	var r *explain.Report
	if x.Analyze {
		runCtx := ctx
		if bound > 0 {
			var cancel context.CancelFunc
			runCtx, cancel = context.WithTimeout(ctx, bound)
			defer cancel()
		}
		if err := s.setupCheckpoints(ctx, p, "", opts); err != nil {
			return Outcome{}, err
		}
		start := time.Now()
		err := runGraph(runCtx, p)
		elapsed := time.Since(start)
		end := explain.EndFinished
		switch {
		case err == nil && !p.Bounded:
			end = explain.EndLimit
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded) && bound > 0 && ctx.Err() == nil:
			end = explain.EndDuration
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			// Stopped by the user: the report still shows what ran.
			end = explain.EndCancelled
		default:
			return Outcome{}, err
		}
		r = explain.NewReport(elapsed, rows.Load(), end)
	}
	doc := explain.BuildDocument(p, r)
	if verbose {
		for _, st := range steps {
			doc.Rules = append(doc.Rules, explain.RuleStep{Rule: st.Rule, Plan: st.Plan})
		}
		for _, ps := range p.Passes {
			doc.Passes = append(doc.Passes, explain.PassStep{Pass: ps.Pass, Why: ps.Why, Decisions: ps.Decisions})
		}
	}
	out := Outcome{Explain: doc}
	if format == "JSON" {
		var sb strings.Builder
		enc := json.NewEncoder(&sb)
		enc.SetEscapeHTML(false) // predicates keep their '>' readable
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return Outcome{}, fmt.Errorf("EXPLAIN (FORMAT JSON): %w", err)
		}
		out.Text = sb.String()
	} else {
		out.Text = explain.Text(doc, verbose)
	}
	return out, nil
}

// parseDuration reads a DURATION bound: Go syntax ('5s', '1m30s', '500ms')
// or a number and a unit word ('5 seconds', '2 minutes').
func parseDuration(s string) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if d, err := time.ParseDuration(strings.ReplaceAll(t, " ", "")); err == nil {
		if d <= 0 {
			return 0, fmt.Errorf("must be positive")
		}
		return d, nil
	}
	f := strings.Fields(t)
	if len(f) == 2 {
		n, err := strconv.ParseFloat(f[0], 64)
		if err == nil && n > 0 {
			unit := map[string]time.Duration{
				"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
				"second": time.Second, "seconds": time.Second,
				"minute": time.Minute, "minutes": time.Minute,
				"hour": time.Hour, "hours": time.Hour,
			}[f[1]]
			if unit > 0 {
				return time.Duration(n * float64(unit)), nil
			}
		}
	}
	return 0, fmt.Errorf("not a duration (try '5s', '500ms' or '2 minutes')")
}
