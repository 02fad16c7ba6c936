package main

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// Running a query file (one or more statements) on each engine. Both
// engines consume every result row the same way: every value of every
// row is read (clink: through the ResultWriter's batches; DuckDB: scanned
// from the driver), in the timed runs too.

// withTimeout runs f under a deadline and names a timeout as one.
func withTimeout(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	if d <= 0 {
		return f(ctx)
	}
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := f(tctx)
	if err != nil && ctx.Err() == nil && tctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("timed out after %s (%v)", d, err)
	}
	return err
}

// cleanup runs the DROP statements after a failed one, so that a view a
// failed run created does not fail the next run; their errors are moot.
func cleanup(stmts []string, failed int, run func(string) error) {
	for _, st := range stmts[failed+1:] {
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st)), "DROP") {
			_ = run(st)
		}
	}
}

func (r *clinkRunner) exec(ctx context.Context, stmt string) error {
	_, err := r.s.Execute(ctx, stmt, &readingWriter{}, engine.ExecOptions{})
	return err
}

// script runs q's statements in order on clink. collect keeps the answer
// in canonical form (the checked run); otherwise its values are read and
// dropped (the timed runs). n is the answer's row count.
func (r *clinkRunner) script(ctx context.Context, q suiteQuery, timeout time.Duration, collect bool) (rows [][]string, n int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	err = withTimeout(ctx, timeout, func(ctx context.Context) error {
		for i, st := range q.stmts {
			var w engine.ResultWriter = &readingWriter{}
			var cw *collectWriter
			if i == q.main && collect {
				cw = &collectWriter{}
				w = cw
			}
			out, err := r.s.Execute(ctx, st, w, engine.ExecOptions{})
			if err != nil {
				cleanup(q.stmts, i, func(s string) error { return r.exec(ctx, s) })
				return err
			}
			if i == q.main {
				n = out.Rows
				if cw != nil {
					rows = cw.rows
				}
			}
		}
		return nil
	})
	return rows, n, err
}

// readingWriter reads every value of every row it is given, the way a
// client consuming the result would, and keeps nothing.
type readingWriter struct{ rows, values int64 }

func (w *readingWriter) Columns(*arrow.Schema, bool) error { return nil }

func (w *readingWriter) Batch(b *exec.Batch) error {
	if b.IsColumnar() {
		rec := b.Record()
		n := int(rec.NumRows())
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			for i := 0; i < n; i++ {
				if exec.Value(col, i) != nil {
					w.values++
				}
			}
		}
		w.rows += int64(n)
		return nil
	}
	for _, row := range b.Rows() {
		for _, v := range row {
			if v != nil {
				w.values++
			}
		}
		w.rows++
	}
	return nil
}

func (r *duckRunner) exec(ctx context.Context, stmt string) error {
	_, err := r.db.ExecContext(ctx, stmt)
	return err
}

// script runs q's statements in order on DuckDB; the answer's column
// names and (when collect) its rows in canonical form.
func (r *duckRunner) script(ctx context.Context, q suiteQuery, timeout time.Duration, collect bool) (names []string, rows [][]string, err error) {
	if q.duck != nil {
		q = *q.duck
	}
	err = withTimeout(ctx, timeout, func(ctx context.Context) error {
		for i, st := range q.stmts {
			var err error
			if i == q.main {
				names, rows, err = r.answer(ctx, st, collect)
			} else {
				err = r.exec(ctx, st)
			}
			if err != nil {
				cleanup(q.stmts, i, func(s string) error { return r.exec(context.Background(), s) })
				return err
			}
		}
		return nil
	})
	return names, rows, err
}

// answer runs a query, scanning every value of every row; with collect it
// also renders them canonically, by the column's declared type.
func (r *duckRunner) answer(ctx context.Context, q string, collect bool) ([]string, [][]string, error) {
	rs, err := r.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	names, err := rs.Columns()
	if err != nil {
		return nil, nil, err
	}
	types, err := rs.ColumnTypes()
	if err != nil {
		return nil, nil, err
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		if collect {
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = canonDuckTyped(v, types[i].DatabaseTypeName())
			}
			out = append(out, row)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	if !collect {
		return names, nil, nil
	}
	if out == nil {
		out = [][]string{}
	}
	return names, out, nil
}

// canonDuckTyped is canonDuck knowing the column's type: a DATE is a date
// (the driver gives a time.Time), a DECIMAL keeps its scale's digits.
func canonDuckTyped(v any, typ string) string {
	switch x := v.(type) {
	case time.Time:
		if typ == "DATE" {
			return x.UTC().Format("2006-01-02")
		}
	case duckdb.Decimal:
		return decimalString(x.Value, int(x.Scale))
	}
	return canonDuck(v)
}

// decimalString writes an unscaled integer with scale digits after the
// point: -12345, 2 is "-123.45".
func decimalString(v *big.Int, scale int) string {
	if v == nil {
		return "NULL"
	}
	s := new(big.Int).Abs(v).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	return s
}
