package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
)

func (s *Session) show(x *sql.Show, w ResultWriter) (Outcome, error) {
	switch x.What {
	case "TABLES", "VIEWS":
		var rows []exec.Row
		for _, t := range s.Tables() {
			if (x.What == "VIEWS") != (t.Kind == "view") && x.What == "VIEWS" {
				continue
			}
			rows = append(rows, exec.Row{t.Name, t.Kind, t.Connector})
		}
		return writeRows(w, []string{"name", "kind", "connector"}, rows)
	case "CONNECTORS":
		var rows []exec.Row
		for _, n := range connectors.Names() {
			rows = append(rows, exec.Row{n})
		}
		return writeRows(w, []string{"connector"}, rows)
	case "CREATE TABLE":
		e, ok := s.cat.Lookup(x.Name)
		if !ok {
			return Outcome{}, fmt.Errorf("table '%s' not found", x.Name)
		}
		return Outcome{Text: showCreate(e)}, nil
	}
	return Outcome{}, fmt.Errorf("SHOW %s is not supported", x.What)
}

func showCreate(e *plan.Entry) string {
	if e.IsView() {
		return fmt.Sprintf("CREATE VIEW `%s` AS %s\n", e.Name, e.View.Text)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "CREATE TABLE `%s` (\n", e.Name)
	if t, err := e.Resolve(); err == nil {
		for i, f := range t.Schema().Fields() {
			sep := ","
			if i == len(t.Schema().Fields())-1 {
				sep = ""
			}
			fmt.Fprintf(&sb, "  `%s` %s%s\n", f.Name, sql.TypeString(f.Type), sep)
		}
	}
	sb.WriteString(") WITH (\n")
	keys := make([]string, 0, len(e.Options))
	for k := range e.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&sb, "  '%s' = '%s'%s\n", k, e.Options[k], sep)
	}
	sb.WriteString(")\n")
	return sb.String()
}

func (s *Session) describe(name string, w ResultWriter) (Outcome, error) {
	for _, t := range s.Tables() {
		if strings.EqualFold(t.Name, name) {
			if t.Schema == nil {
				e, _ := s.cat.Lookup(name)
				tbl, err := e.Resolve()
				if err != nil {
					return Outcome{}, err
				}
				t.Schema = tbl.Schema()
			}
			var rows []exec.Row
			for _, f := range t.Schema.Fields() {
				null := "true"
				if !f.Nullable {
					null = "false"
				}
				rows = append(rows, exec.Row{f.Name, sql.TypeString(f.Type), null})
			}
			return writeRows(w, []string{"name", "type", "null"}, rows)
		}
	}
	return Outcome{}, fmt.Errorf("table or view '%s' not found", name)
}

var quoted = regexp.MustCompile(`'([^']+)'`)

// positioned gives a planning error the position of the first quoted name
// it mentions, when that name occurs in the statement.
func positioned(text string, err error) error {
	var se *sql.Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) {
		return err
	}
	e := &sql.Error{Msg: err.Error()}
	for _, m := range quoted.FindAllStringSubmatch(err.Error(), -1) {
		name := m[1]
		if i := strings.LastIndex(name, "."); i >= 0 && !strings.Contains(text, name) {
			name = name[i+1:]
		}
		idx := indexWord(text, name)
		if idx < 0 {
			continue
		}
		e.Line = 1 + strings.Count(text[:idx], "\n")
		e.Column = idx - strings.LastIndex(text[:idx], "\n")
		break
	}
	return e
}

// indexWord finds name in text as a whole word, case-insensitively.
func indexWord(text, name string) int {
	lt, ln := strings.ToLower(text), strings.ToLower(name)
	for from := 0; ; {
		i := strings.Index(lt[from:], ln)
		if i < 0 {
			return -1
		}
		i += from
		before := i == 0 || !isWordByte(lt[i-1])
		after := i+len(ln) >= len(lt) || !isWordByte(lt[i+len(ln)])
		if before && after {
			return i
		}
		from = i + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
