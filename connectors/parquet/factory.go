package parquet

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
)

// FormatOpener opens a filesystem table of one format at path.
type FormatOpener func(path string, declared *arrow.Schema) (connectors.Table, error)

var (
	formatsMu sync.RWMutex
	// formats is the 'format' option's dispatch. Another format (json)
	// plugs in with RegisterFormat, without touching this package.
	formats = map[string]FormatOpener{
		"parquet": func(path string, declared *arrow.Schema) (connectors.Table, error) {
			return Open(path, declared)
		},
	}
	// pending names formats that are known but not built yet, so that the
	// error says so instead of "unknown format".
	pending = map[string]bool{"json": true}
)

func init() {
	connectors.Register("filesystem", filesystemFactory)
}

// RegisterFormat makes the filesystem connector accept 'format' = name. A
// duplicate registration panics (it is an init-time programming error).
func RegisterFormat(name string, open FormatOpener) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	name = strings.ToLower(name)
	if _, dup := formats[name]; dup {
		panic("parquet: duplicate filesystem format " + name)
	}
	formats[name] = open
}

// filesystemFactory is the 'filesystem' connector: options 'path'
// (required; file, glob or directory) and 'format' (default 'parquet').
func filesystemFactory(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
	path := options["path"]
	if path == "" {
		return nil, fmt.Errorf("filesystem connector: option 'path' is required")
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
	return open(path, declared)
}
