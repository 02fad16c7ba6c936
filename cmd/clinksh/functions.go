package main

import (
	"fmt"
	"strings"

	"github.com/clink-sql/clink/exec/expr"
)

// listFunctions is \df: every scalar function (built-ins and UDFs) with
// its signatures; \df NAME shows one function. It returns an error message
// when the name is unknown.
func (sh *shell) listFunctions(name string) string {
	var fs []expr.FunctionInfo
	if name == "" {
		fs = expr.Functions()
	} else {
		f, ok := expr.LookupFunction(name)
		if !ok {
			return fmt.Sprintf("no function named %q", name)
		}
		fs = []expr.FunctionInfo{f}
	}
	var rows [][]string
	for _, f := range fs {
		kind := "built-in"
		if f.UDF {
			kind = "udf"
			if f.RowAtATime {
				kind = "udf (row-at-a-time)"
			}
		}
		desc := f.Description
		if len(f.Aliases) > 0 {
			desc += " (also: " + strings.Join(f.Aliases, ", ") + ")"
		}
		rows = append(rows, []string{f.Name, strings.Join(f.Signatures, "\n"), kind, desc})
	}
	sh.printTable([]string{"Name", "Signatures", "Kind", "Description"}, rows)
	return ""
}
