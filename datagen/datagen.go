// Package datagen holds what the benchmark data generators (datagen/tpch,
// datagen/clickbench) share: writing one Parquet file from batches of Arrow
// records, and running a table's file-sized chunks on a pool of workers.
//
// Every generator is deterministic for a seed: a row's values come from a
// random stream keyed by (seed, table, row), never from a stream shared
// between rows, so the files are the same whatever the number of workers
// and whichever worker writes which chunk.
package datagen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// RowGroupRows is the row group length of every generated file: ~1M rows,
// what other writers (DuckDB, Spark) default to.
const RowGroupRows = 1 << 20

// BatchRows is how many rows a generator builds into one Arrow record
// before handing it to the file: small enough that a batch's builders stay
// in cache-friendly sizes, large enough that per-batch costs vanish.
const BatchRows = 64 << 10

// ParquetFile is one Parquet file being written: under a hidden temporary
// name next to its final path until Close renames it, so a file that
// exists under its name is whole (a cache can trust it).
type ParquetFile struct {
	path, tmp string
	f         *os.File
	w         *pqarrow.FileWriter
	rows      int64
	done      bool
}

// FileOptions say how a file is encoded beyond the defaults (snappy,
// dictionary encoding, RowGroupRows row groups, decimals as integers).
type FileOptions struct {
	// PlainColumns are columns written without a dictionary: unique-ish
	// text (comments, names), where trying a dictionary only costs time.
	PlainColumns []string
}

// CreateParquet opens path for writing rows of schema.
func CreateParquet(path string, schema *arrow.Schema, o FileOptions) (*ParquetFile, error) {
	dir, base := filepath.Split(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, "."+base+".inprogress")
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	props := []parquet.WriterProperty{
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithCompression(compress.Codecs.Snappy),
		// DECIMAL(15,2) as INT64, as DuckDB and Spark write it (the
		// default is a fixed-length byte array).
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithCreatedBy("clink datagen"),
	}
	for _, c := range o.PlainColumns {
		props = append(props, parquet.WithDictionaryFor(c, false))
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &ParquetFile{path: path, tmp: tmp, f: f, w: w}, nil
}

// Write appends rec to the current row group (a new one starts every
// RowGroupRows rows).
func (p *ParquetFile) Write(rec arrow.RecordBatch) error {
	if err := p.w.WriteBuffered(rec); err != nil {
		return fmt.Errorf("%s: %w", p.path, err)
	}
	p.rows += rec.NumRows()
	return nil
}

// Rows is the number of rows written so far.
func (p *ParquetFile) Rows() int64 { return p.rows }

// Close writes the footer and moves the file to its name.
func (p *ParquetFile) Close() error {
	if p.done {
		return nil
	}
	p.done = true
	if err := p.w.Close(); err != nil { // closes p.f too
		os.Remove(p.tmp)
		return fmt.Errorf("%s: %w", p.path, err)
	}
	if err := os.Rename(p.tmp, p.path); err != nil {
		os.Remove(p.tmp)
		return err
	}
	return nil
}

// Abort removes the file of a write that failed; after Close it does
// nothing, so it can be deferred.
func (p *ParquetFile) Abort() {
	if p.done {
		return
	}
	p.done = true
	p.w.Close()
	os.Remove(p.tmp)
}

// Task is one unit of generation: usually one output file. Cost orders
// the tasks (the costliest start first, so the last to finish is short).
type Task struct {
	Name string
	Cost int64
	Run  func(ctx context.Context) error
}

// RunTasks runs tasks on workers goroutines and returns the first error
// (the remaining tasks are then skipped).
func RunTasks(ctx context.Context, workers int, tasks []Task) error {
	if workers < 1 {
		workers = 1
	}
	sorted := append([]Task(nil), tasks...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Cost > sorted[j].Cost })
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan Task)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				err := runTask(ctx, t)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for _, t := range sorted {
		select {
		case next <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// runTask runs one task, turning a panic into its error: a generator bug
// must fail the run, not crash the shell that asked for data.
func runTask(ctx context.Context, t Task) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error: %v", t.Name, r)
		}
	}()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := t.Run(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	return nil
}

// Fill appends the rows of units [from, to) to b's field builders. A unit
// is what the generator iterates over: a row, or an order with its lines.
type Fill func(b *array.RecordBuilder, from, to int64) error

// WriteUnits writes the rows of units [from, to) to a new Parquet file at
// path, building them perBatch units at a time, and returns the number of
// rows written.
func WriteUnits(ctx context.Context, path string, schema *arrow.Schema, o FileOptions, from, to, perBatch int64, fill Fill) (int64, error) {
	f, err := CreateParquet(path, schema, o)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for lo := from; lo < to; lo += perBatch {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		hi := min(lo+perBatch, to)
		if err := fill(b, lo, hi); err != nil {
			return 0, err
		}
		rec := b.NewRecordBatch()
		err := f.Write(rec)
		rec.Release()
		if err != nil {
			return 0, err
		}
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return f.Rows(), nil
}

// ManifestName is the file a finished generation writes last into its
// directory: a directory with a manifest holds every file it names, so a
// cache can trust it.
const ManifestName = "manifest.json"

// StartDir makes dir and removes the manifest an earlier generation left:
// it no longer describes the directory once this one starts writing.
func StartDir(dir string) error {
	if dir == "" {
		return errors.New("no output directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// WriteManifest writes m as dir's manifest (under a temporary name first).
func WriteManifest(dir string, m any) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+ManifestName+".inprogress")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ManifestName))
}

// ReadManifest reads dir's manifest into m (an error when there is none).
func ReadManifest(dir string, m any) error {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
