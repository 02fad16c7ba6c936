package plan

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/sql/ast"
)

// Entry is one catalog object: a connector table or a view.
type Entry struct {
	Name      string
	Table     connectors.Table // nil for a view
	Connector string
	Options   map[string]string
	View      *ast.Query // nil for a table
	// ViewText is the text View was parsed from (its spans point into it).
	ViewText string
	// ViewColumns name a view's columns (CREATE VIEW v (a, b) AS ...).
	ViewColumns []string
	// Computed are the table's computed columns (col AS expr), appended
	// after the connector's columns by the binder.
	Computed []ComputedColumn
	// Watermark is the table's WATERMARK FOR clause, if any.
	Watermark *WatermarkDef
	// PrimaryKey names the table's PRIMARY KEY (NOT ENFORCED) columns, as
	// declared; DESCRIBE shows them.
	PrimaryKey []string
	// Session marks a table held in memory by the session (CREATE TABLE
	// without a connector).
	Session bool
	// Open, when set, creates Table on first use; it lets the catalog list
	// tables whose connector starts a service (the embedded broker) without
	// starting it until a statement touches it.
	Open func() (connectors.Table, error)

	once    sync.Once
	openErr error
}

// ComputedColumn is col AS expr of CREATE TABLE; Expr's spans point into
// Text.
type ComputedColumn struct {
	Name string
	Expr ast.Expr
	Text string
}

// WatermarkDef is WATERMARK FOR Column AS Expr; Expr's spans point into
// Text.
type WatermarkDef struct {
	Column string
	Expr   ast.Expr
	Text   string
}

// IsView reports whether the entry is a view.
func (e *Entry) IsView() bool { return e.View != nil }

// Resolve returns the entry's table, opening it lazily.
func (e *Entry) Resolve() (connectors.Table, error) {
	if e.Table != nil || e.Open == nil {
		return e.Table, nil
	}
	e.once.Do(func() { e.Table, e.openErr = e.Open() })
	return e.Table, e.openErr
}

// Catalog maps names (case-insensitive) to entries. Safe for concurrent use.
type Catalog struct {
	mu      sync.RWMutex
	entries map[string]*Entry
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{entries: map[string]*Entry{}} }

func key(name string) string { return strings.ToLower(name) }

// Add adds e; it fails if the name is taken, unless replace is set.
func (c *Catalog) Add(e *Entry, replace bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.entries[key(e.Name)]; dup && !replace {
		return fmt.Errorf("table or view '%s' already exists", e.Name)
	}
	c.entries[key(e.Name)] = e
	return nil
}

// Lookup finds an entry by name.
func (c *Catalog) Lookup(name string) (*Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[key(name)]
	return e, ok
}

// Drop removes an entry; it reports whether it existed.
func (c *Catalog) Drop(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[key(name)]
	delete(c.entries, key(name))
	return ok
}

// Entries lists the entries by name.
func (c *Catalog) Entries() []*Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Entry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].Name) < key(out[j].Name) })
	return out
}
