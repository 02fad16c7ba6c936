// Package clickbench generates ClickBench's 105-column web-analytics table
// `hits`, with data shaped so that the benchmark's 43 queries have
// something to find: many distinct users, URLs and titles with skewed
// popularity, URLs that share prefixes and sometimes mention google, a
// search phrase on a minority of hits, AdvEngineID mostly 0, a few hundred
// counters of which counter 62 is the largest, events over July 2013, and
// the IDs and hashes that queries 19, 39 and 40 look for.
//
// The table has the column types of ClickBench's duckdb/create.sql, the
// DuckDB-typed variant: EventTime, ClientEventTime and LocalEventTime are
// TIMESTAMPs and EventDate a DATE (the published hits.parquet stores them
// as integer seconds and day numbers, which ClickBench's DuckDB loader
// converts), so the queries of duckdb/queries.sql run unmodified on a
// table that reads the files.
package clickbench

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/clink-sql/clink/datagen"
)

// DefaultRows is the row count of the command-line generator and bench
// (the published data set has ~100M).
const DefaultRows = 10_000_000

// DefaultSeed is the seed of the command-line generator and the bench.
const DefaultSeed = 20130701

// Options say what to generate.
type Options struct {
	Rows int64
	// Dir receives hits/hits-NNN.parquet (about 1M rows each) and
	// manifest.json, written last.
	Dir     string
	Seed    uint64
	Workers int // files written at once (0: GOMAXPROCS)
	// RowsPerFile is the size of each file (0: 1,000,000, one row group).
	RowsPerFile int64
}

// Manifest describes a finished generation.
type Manifest struct {
	Rows  int64    `json:"rows"`
	Seed  uint64   `json:"seed"`
	Files []string `json:"files"` // relative to the directory
	Took  string   `json:"took"`
}

// ReadManifest reads dir's manifest (an error when there is none).
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	return m, datagen.ReadManifest(dir, &m)
}

// defaultRowsPerFile keeps each file one row group of ~1M rows.
const defaultRowsPerFile = 1_000_000

// Generate writes the hits table under o.Dir and the manifest last.
func Generate(ctx context.Context, o Options) (Manifest, error) {
	start := time.Now()
	if o.Rows <= 0 {
		return Manifest{}, fmt.Errorf("clickbench: %d rows: want a positive count", o.Rows)
	}
	if err := datagen.StartDir(o.Dir); err != nil {
		return Manifest{}, fmt.Errorf("clickbench: %w", err)
	}
	g := newGenerator(o.Seed, o.Rows)
	rowsPerFile := o.RowsPerFile
	if rowsPerFile <= 0 {
		rowsPerFile = defaultRowsPerFile
	}
	m := Manifest{Rows: o.Rows, Seed: o.Seed}
	var mu sync.Mutex
	var tasks []datagen.Task
	for i, lo := 0, int64(0); lo < o.Rows; i, lo = i+1, lo+rowsPerFile {
		hi := min(lo+rowsPerFile, o.Rows)
		rel := filepath.Join("hits", fmt.Sprintf("hits-%03d.parquet", i))
		path := filepath.Join(o.Dir, rel)
		tasks = append(tasks, datagen.Task{Name: rel, Cost: hi - lo, Run: func(ctx context.Context) error {
			n, err := datagen.WriteUnits(ctx, path, Schema(), fileOptions(), lo, hi, datagen.BatchRows, g.fill)
			if err != nil {
				return err
			}
			if n != hi-lo {
				return fmt.Errorf("wrote %d rows, want %d", n, hi-lo)
			}
			mu.Lock()
			m.Files = append(m.Files, rel)
			mu.Unlock()
			return nil
		}})
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if err := datagen.RunTasks(ctx, workers, tasks); err != nil {
		return Manifest{}, err
	}
	sort.Strings(m.Files)
	m.Took = time.Since(start).Round(time.Millisecond).String()
	return m, datagen.WriteManifest(o.Dir, m)
}

// fileOptions: the nearly unique columns skip the dictionary (the writer
// would try one for the first megabyte of each, only to fall back).
func fileOptions() datagen.FileOptions {
	return datagen.FileOptions{PlainColumns: []string{"URL", "Referer", "Title", "OriginalURL", "WatchID",
		"EventTime", "ClientEventTime", "LocalEventTime", "HID", "RemoteIP", "FUniqID", "WindowName", "OpenerName"}}
}
