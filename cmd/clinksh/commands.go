package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/sqlvalue"
)

const helpText = `Statements end with ';' and may span lines. Ctrl-C cancels a running
query (or clears the line at the prompt); Ctrl-D or \q quits.

  \?              this help
  \q              quit
  \d              list tables and views (name, kind, connector)
  \d NAME         columns and types of a table or view
  \df [NAME]      scalar functions and their signatures
  \timing [on|off]  toggle printing each statement's time
  \x [on|off]     toggle expanded rows: one block per record, a line a column
  \i FILE         run the statements and commands of FILE
  \o [FILE]       send results to FILE (created anew); \o alone: back to stdout
  \format NAME    output format: table, csv, tsv, json, ndjson
  \pset pager [on|off]  page tables taller than the terminal ($PAGER, else less)
  \set [maxrows N]  rows a table shows at most (first and last halves;
                  0 shows all; csv, tsv, json, ndjson always print all)
`

// errCommand marks a failed backslash command (already reported).
var errCommand = errors.New("backslash command failed")

// command runs one backslash command and reports whether the shell should
// quit. Errors are reported here; the REPL goes on, a script stops.
func (sh *shell) command(ctx context.Context, line string) (quit bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			sh.reportErr("ERROR: " + (&internalError{v: r}).Error() + "\n")
			err = errCommand
		}
		sh.out.Flush()
	}()
	fail := func(msg string) (bool, error) {
		sh.reportErr("ERROR: " + msg + "\n")
		return false, errCommand
	}
	fields := strings.Fields(line)
	name, args := fields[0], fields[1:]
	switch name {
	case `\q`, `\quit`:
		return true, nil
	case `\?`, `\h`, `\help`:
		sh.out.WriteString(helpText)
	case `\d`:
		switch len(args) {
		case 0:
			sh.listTables()
		case 1:
			if msg := sh.describe(ctx, args[0]); msg != "" {
				return fail(msg)
			}
		default:
			return fail(`\d takes at most one name`)
		}
	case `\df`:
		if len(args) > 1 {
			return fail(`\df takes at most one name`)
		}
		if msg := sh.listFunctions(strings.Join(args, "")); msg != "" {
			return fail(msg)
		}
	case `\timing`:
		if !toggle(&sh.timing, args) {
			return fail(fmt.Sprintf(`\timing: want on or off, not %q`, args[0]))
		}
		fmt.Fprintf(sh.info(), "Timing is %s.\n", onOff(sh.timing))
	case `\x`:
		if !toggle(&sh.expanded, args) {
			return fail(fmt.Sprintf(`\x: want on or off, not %q`, args[0]))
		}
		fmt.Fprintf(sh.info(), "Expanded display is %s.\n", onOff(sh.expanded))
	case `\format`:
		if len(args) != 1 {
			fmt.Fprintf(sh.info(), "Output format is %s.\n", sh.format)
			return false, nil
		}
		if err := validFormat(args[0]); err != nil {
			return fail(`\format: ` + err.Error())
		}
		sh.format = args[0]
		fmt.Fprintf(sh.info(), "Output format is %s.\n", sh.format)
	case `\i`, `\include`:
		if len(args) != 1 {
			return fail(`\i takes one file name`)
		}
		if msg, err := sh.include(ctx, args[0]); msg != "" {
			return fail(msg)
		} else if err != nil {
			return false, errCommand // reported where it happened
		}
	case `\o`, `\out`:
		if len(args) > 1 {
			return fail(`\o takes at most one file name`)
		}
		if err := sh.redirect(strings.Join(args, "")); err != nil {
			return fail(`\o: ` + err.Error())
		}
	case `\pset`, `\pager`:
		if name == `\pset` {
			if len(args) == 0 || args[0] != "pager" {
				return fail(`\pset: only "pager" is a setting (\pset pager on|off)`)
			}
			args = args[1:]
		}
		on := !sh.noPager
		if !toggle(&on, args) {
			return fail(fmt.Sprintf(`\pset pager: want on or off, not %q`, args[0]))
		}
		sh.noPager = !on
		fmt.Fprintf(sh.info(), "Pager is %s.\n", onOff(on))
	case `\set`:
		if msg := sh.set(args); msg != "" {
			return fail(msg)
		}
	default:
		return fail(fmt.Sprintf(`unknown command %s; \? lists the commands`, name))
	}
	return false, nil
}

// toggle flips *b, or sets it from "on" or "off"; false for anything else.
func toggle(b *bool, args []string) bool {
	switch {
	case len(args) == 0:
		*b = !*b
	case len(args) == 1 && args[0] == "on":
		*b = true
	case len(args) == 1 && args[0] == "off":
		*b = false
	default:
		return false
	}
	return true
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// set shows or changes a shell setting; it returns an error message for a
// bad one.
func (sh *shell) set(args []string) string {
	switch {
	case len(args) == 0:
		fmt.Fprintf(sh.info(), "maxrows = %d\n", sh.maxRows)
		return ""
	case !strings.EqualFold(args[0], "maxrows"):
		return fmt.Sprintf(`\set: unknown setting %q (settings: maxrows)`, args[0])
	case len(args) != 2:
		return `\set maxrows takes one number`
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		return fmt.Sprintf(`\set maxrows: want a row count (0 for all), not %q`, args[1])
	}
	sh.maxRows = n
	fmt.Fprintf(sh.info(), "maxrows = %d\n", sh.maxRows)
	return ""
}

func (sh *shell) listTables() {
	tables := sh.sess.Tables()
	sort.Slice(tables, func(i, j int) bool { return tables[i].Name < tables[j].Name })
	rows := make([][]string, len(tables))
	for i, t := range tables {
		rows[i] = []string{t.Name, t.Kind, t.Connector}
	}
	sh.printTable([]string{"Name", "Kind", "Connector"}, rows)
}

// describe prints a table's kind and then what DESCRIBE says of it, so \d
// and DESCRIBE cannot disagree; it returns an error message when there is
// nothing to describe.
func (sh *shell) describe(ctx context.Context, name string) string {
	var found *engine.TableInfo
	tables := sh.sess.Tables()
	for i := range tables {
		if strings.EqualFold(tables[i].Name, name) {
			found = &tables[i]
			break
		}
	}
	if found == nil {
		return fmt.Sprintf("no table or view named %q", name)
	}
	if found.Schema == nil {
		return fmt.Sprintf("%s %q has no resolved columns", found.Kind, found.Name)
	}
	kind := found.Kind
	if found.Connector != "" {
		kind += " (" + found.Connector + ")"
	}
	if found.Bounded {
		kind += ", bounded"
	} else {
		kind += ", unbounded"
	}
	fmt.Fprintf(sh.out, "%s: %s\n", found.Name, kind)
	// The human format whatever the result format, as for \d's list.
	snk := newSink(formatTable, sinkOptions{out: sh.out, mem: sh.mem})
	_, err := sh.sess.Execute(ctx, "DESCRIBE "+sqlvalue.QuoteIdent(found.Name), snk, engine.ExecOptions{})
	if ferr := snk.finish(err); err == nil {
		err = ferr
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// printTable draws a small table on stdout for a backslash command (these
// are for the human whatever the result format).
func (sh *shell) printTable(header []string, rows [][]string) {
	t := tablewriter.NewTable(sh.out,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
	)
	t.Configure(func(cfg *tablewriter.Config) {
		cfg.Header.Formatting.AutoFormat = tw.Off
		cfg.Row.Formatting.AutoWrap = tw.WrapNone
	})
	t.Header(header)
	err := t.Bulk(rows)
	if err == nil {
		err = t.Render()
	}
	if err != nil {
		sh.reportErr("ERROR: " + err.Error() + "\n")
		return
	}
	fmt.Fprintln(sh.out, rowsLabel(int64(len(rows))))
}
