package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"strconv"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// duckRunner runs queries on an in-memory DuckDB in this process.
type duckRunner struct {
	db *sql.DB
}

func newDuckRunner(ctx context.Context, threads int) (*duckRunner, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	// One connection: the settings and every query share it, as a DuckDB
	// CLI session would.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads = %d", threads)); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: SET threads = %d: %w", threads, err)
	}
	return &duckRunner{db: db}, nil
}

func (r *duckRunner) Close() error { return r.db.Close() }

// time runs q once, fetching every row and scanning every value (DuckDB's
// equivalent of delivering the result), and returns its wall time.
func (r *duckRunner) time(ctx context.Context, q string) (time.Duration, int64, error) {
	start := time.Now()
	n, err := r.query(ctx, q, nil)
	return time.Since(start), n, err
}

// result runs q once and returns its rows in canonical form (untimed).
func (r *duckRunner) result(ctx context.Context, q string) ([][]string, error) {
	var rows [][]string
	_, err := r.query(ctx, q, func(vals []any) {
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = canonDuck(v)
		}
		rows = append(rows, row)
	})
	return rows, err
}

func (r *duckRunner) query(ctx context.Context, q string, each func([]any)) (int64, error) {
	rows, err := r.db.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		if each != nil {
			each(vals)
		}
		n++
	}
	return n, rows.Err()
}

// canonDuck renders a value scanned from duckdb-go in the canonical form
// canonArrow gives the same value from clink.
func canonDuck(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return canonTime(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case *big.Int: // HUGEINT: DuckDB's SUM(BIGINT)
		return x.String()
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}
