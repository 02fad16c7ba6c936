// Package pqread reads generated Parquet files back for the generators'
// tests: whole, through arrow-go (an independent reader), and through
// clink's own filesystem connector (the reader the engine will use).
package pqread

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	_ "github.com/clink-sql/clink/connectors/parquet" // registers 'filesystem'
	"github.com/clink-sql/clink/exec"
)

// Table is the columns of every file matching glob, concatenated (one
// chunk per column), read with arrow-go.
type Table struct {
	Schema *arrow.Schema
	Cols   map[string]arrow.Array
	Rows   int
}

// Release frees the columns.
func (t *Table) Release() {
	for _, c := range t.Cols {
		c.Release()
	}
}

// ReadAll reads every file matching glob, in name order.
func ReadAll(ctx context.Context, glob string) (*Table, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no file matches %s", glob)
	}
	parts := map[string][]arrow.Array{}
	defer func() {
		for _, cs := range parts {
			for _, c := range cs {
				c.Release()
			}
		}
	}()
	t := &Table{Cols: map[string]arrow.Array{}}
	for _, p := range paths {
		tbl, err := readFile(ctx, p)
		if err != nil {
			return nil, err
		}
		if t.Schema == nil {
			t.Schema = tbl.Schema()
		} else if !t.Schema.Equal(tbl.Schema()) {
			tbl.Release()
			return nil, fmt.Errorf("%s: schema %v differs from the first file's %v", p, tbl.Schema(), t.Schema)
		}
		for i := 0; i < int(tbl.NumCols()); i++ {
			for _, c := range tbl.Column(i).Data().Chunks() {
				c.Retain()
				parts[tbl.Schema().Field(i).Name] = append(parts[tbl.Schema().Field(i).Name], c)
			}
		}
		t.Rows += int(tbl.NumRows())
		tbl.Release()
	}
	for n, chunks := range parts {
		c, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			t.Release()
			return nil, err
		}
		t.Cols[n] = c
	}
	return t, nil
}

func readFile(ctx context.Context, path string) (arrow.Table, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	return fr.ReadTable(ctx)
}

// RowGroups lists the row counts of the row groups of every file matching
// glob (in name order), from the footers alone.
func RowGroups(glob string) ([][]int64, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	var out [][]int64
	for _, p := range paths {
		pf, err := file.OpenParquetFile(p, false)
		if err != nil {
			return nil, err
		}
		var groups []int64
		for i := 0; i < pf.NumRowGroups(); i++ {
			groups = append(groups, pf.MetaData().RowGroup(i).NumRows())
		}
		pf.Close()
		out = append(out, groups)
	}
	return out, nil
}

// ClinkScan reads path (a file, directory or glob) through clink's
// filesystem connector, as CREATE TABLE ... WITH ('connector' =
// 'filesystem', 'format' = 'parquet') would, and returns the table's
// schema and its row count. It reads the columns cols (all when none are
// given).
func ClinkScan(ctx context.Context, path string, cols ...int) (*arrow.Schema, int64, error) {
	f, ok := connectors.Lookup("filesystem")
	if !ok {
		return nil, 0, fmt.Errorf("the filesystem connector is not registered")
	}
	tbl, err := f(map[string]string{"path": path, "format": "parquet"}, nil)
	if err != nil {
		return nil, 0, err
	}
	src, err := tbl.Open(connectors.ScanSpec{Columns: cols})
	if err != nil {
		return nil, 0, err
	}
	c := &counter{}
	if err := src.Run(ctx, c); err != nil {
		return nil, 0, err
	}
	return tbl.Schema(), c.rows, nil
}

type counter struct{ rows int64 }

func (c *counter) Emit(_ context.Context, b *exec.Batch) error { c.rows += int64(b.Len()); return nil }
func (c *counter) EmitWatermark(context.Context, int64) error  { return nil }

// HashFiles is the SHA-256 of the files matching glob, concatenated in
// name order, and how many there were: two generations wrote the same
// bytes when their hashes are equal.
func HashFiles(glob string) ([32]byte, int, error) {
	var out [32]byte
	paths, err := filepath.Glob(glob)
	if err != nil {
		return out, 0, err
	}
	h := sha256.New()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return out, 0, err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return out, 0, err
		}
	}
	copy(out[:], h.Sum(nil))
	return out, len(paths), nil
}
