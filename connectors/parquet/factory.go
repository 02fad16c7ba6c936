package parquet

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/sql"
)

// FormatOpener opens a filesystem table of one format at path.
type FormatOpener func(path string, declared *arrow.Schema) (connectors.Table, error)

// The 'format' option's dispatch. Another format plugs in from its own
// package's init, without this package importing it (that would be a
// cycle: the format imports this package to register). The JSON format,
// package connectors/jsonfile, registers itself like this:
//
//	func init() {
//		parquet.RegisterFormatFactory("json", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
//			return NewTable(options, declared)
//		})
//	}
//
// and engine/connectors.go imports it for its side effect
// (_ "github.com/clink-sql/clink/connectors/jsonfile"). The factory gets
// every WITH option ('path' is checked to be set, the rest are the
// format's to validate), so CREATE TABLE ... WITH ('connector' =
// 'filesystem', 'format' = 'json', ...) and the path query
// SELECT * FROM 'x.json' (plan/bind.go openPath: 'format' = 'json' for
// .json, .ndjson and .jsonl) both reach it. RegisterFormat is the same
// hook for a format that needs only the path.
var (
	formatsMu sync.RWMutex
	formats   = map[string]connectors.Factory{"parquet": parquetFactory}
	// pending names formats that are known but not built yet, so that the
	// error says so instead of "unknown format".
	pending = map[string]bool{"json": true}
)

func init() {
	connectors.Register("filesystem", filesystemFactory)
}

// RegisterFormat makes the filesystem connector accept 'format' = name,
// opening the table from its 'path' option alone. A duplicate registration
// panics (it is an init-time programming error).
func RegisterFormat(name string, open FormatOpener) {
	RegisterFormatFactory(name, func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return open(options["path"], declared)
	})
}

// RegisterFormatFactory makes the filesystem connector accept 'format' =
// name; f receives every WITH option. A duplicate registration panics.
func RegisterFormatFactory(name string, f connectors.Factory) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	name = strings.ToLower(name)
	if _, dup := formats[name]; dup {
		panic("parquet: duplicate filesystem format " + name)
	}
	formats[name] = f
}

// filesystemFactory is the 'filesystem' connector: options 'path'
// (required; file, glob or directory), 'format' (default 'parquet') and
// 'source.monitor-interval' (read as a stream of files; see
// MonitoredTable).
func filesystemFactory(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
	path := options["path"]
	if path == "" {
		return nil, fmt.Errorf("filesystem connector: option 'path' is required")
	}
	if local, ok := strings.CutPrefix(path, "file://"); ok {
		// Flink's local file URL (file:///tmp/x): the path itself.
		options = maps.Clone(options)
		options["path"] = local
	}
	name := strings.ToLower(options["format"])
	if name == "" {
		name = "parquet"
	}
	formatsMu.RLock()
	open, ok := formats[name]
	var known []string
	for n := range formats {
		known = append(known, "'"+n+"'")
	}
	formatsMu.RUnlock()
	if !ok {
		if pending[name] {
			return nil, fmt.Errorf("filesystem connector: format '%s' is not supported by this build yet", name)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("filesystem connector: unknown format '%s' (supported: %s)", name, strings.Join(known, ", "))
	}
	if _, ok := options[monitorOption]; ok {
		return newMonitoredTable(name, open, options, declared) // a stream of files: monitor.go
	}
	return open(options, declared)
}

// parquetOptions are the options 'format' = 'parquet' accepts.
var parquetOptions = []string{"connector", "path", "format", rolloverOption}

// rolloverOption is Flink's rolling policy interval: a sink into a
// directory publishes a file at least this often (see Dataset.rollover).
const rolloverOption = "sink.rolling-policy.rollover-interval"

// parquetFactory opens a Dataset: readable when files exist, writable by
// INSERT INTO always. An unknown option is an error rather than ignored, so
// a misspelt or unsupported one (a METADATA column) does not go unnoticed.
func parquetFactory(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		known := false
		for _, o := range parquetOptions {
			known = known || strings.EqualFold(k, o)
		}
		if !known {
			return nil, fmt.Errorf("filesystem connector: format 'parquet' has no option '%s' (known: %s)",
				k, strings.Join(parquetOptions, ", "))
		}
	}
	d, err := OpenDataset(options["path"], declared)
	if err != nil {
		return nil, err
	}
	if v, ok := options[rolloverOption]; ok {
		iv, err := sql.ParseDuration(v)
		if err != nil || iv <= 0 {
			return nil, fmt.Errorf("filesystem connector: '%s' = '%s': want a positive duration such as '1s'", rolloverOption, v)
		}
		d.rollover = iv
	}
	return d, nil
}
