package complete

import (
	"strings"

	"github.com/clink-sql/clink/exec/expr"
)

// Function is a function as completion and inspection show it.
type Function struct{ Name, Signature, Doc string }

// Functions lists the engine's function registry (built-ins and registered
// UDFs) plus the aggregates and CAST, which the binder handles itself. It
// is read per call, so UDFs registered after start show up.
func Functions() []Function {
	out := []Function{
		{"count", "count(* | x) -> BIGINT", "number of rows (of non-NULL x)"},
		{"sum", "sum(x) -> numeric", "sum of x"},
		{"avg", "avg(x) -> numeric", "mean of x"},
		{"min", "min(x) -> type of x", "smallest x"},
		{"max", "max(x) -> type of x", "largest x"},
		{"stddev_samp", "stddev_samp(x) -> DOUBLE", "sample standard deviation of x (alias stddev)"},
		{"stddev", "stddev(x) -> DOUBLE", "sample standard deviation of x"},
		{"stddev_pop", "stddev_pop(x) -> DOUBLE", "population standard deviation of x"},
		{"var_samp", "var_samp(x) -> DOUBLE", "sample variance of x (alias variance)"},
		{"variance", "variance(x) -> DOUBLE", "sample variance of x"},
		{"var_pop", "var_pop(x) -> DOUBLE", "population variance of x"},
		{"bool_and", "bool_and(b) -> BOOLEAN", "true when every non-NULL b is true (alias every)"},
		{"every", "every(b) -> BOOLEAN", "true when every non-NULL b is true"},
		{"bool_or", "bool_or(b) -> BOOLEAN", "true when some b is true"},
		{"CAST", "CAST(x AS type) -> type", "x converted to type"},
	}
	for _, f := range expr.Functions() {
		out = append(out, Function{f.Name, strings.Join(f.Signatures, "; "), f.Description})
		for _, a := range f.Aliases {
			out = append(out, Function{a, strings.Join(f.Signatures, "; "), f.Description})
		}
	}
	return out
}
