package main

import (
	"strings"
	"testing"
)

// The result modes over an updating result: tableau (default) prints every
// change with its kind; table applies them and prints the table at the end.
func TestE2EResultModes(t *testing.T) {
	setup := "CREATE TABLE bf WITH ('connector' = 'nexmark', 'table' = 'bid'); SET 'parallelism' = '1';"
	query := "SELECT channel, COUNT(*) AS n FROM bf WHERE channel IN ('Google', 'Apple') GROUP BY channel LIMIT 8;"

	r := runClinksh(t, "", "--format", "csv", "-c", setup+query)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if lines[0] != "op,channel,n" || len(lines) != 9 {
		t.Fatalf("changelog output:\n%s", r.stdout)
	}
	// Replay the changelog by hand: what table mode must print.
	table := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		switch f[0] {
		case "+I", "+U":
			table[f[1]] = f[2]
		case "-U", "-D":
			delete(table, f[1])
		default:
			t.Fatalf("row kind %q in %q", f[0], l)
		}
	}

	r = runClinksh(t, "", "--format", "csv", "-c", setup+"SET 'sql-client.execution.result-mode' = 'table';"+query)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if got[0] != "channel,n" || len(got)-1 != len(table) {
		t.Fatalf("table mode printed:\n%s\nwant the %d rows %v", r.stdout, len(table), table)
	}
	for _, l := range got[1:] {
		f := strings.Split(l, ",")
		if table[f[0]] != f[1] {
			t.Fatalf("table mode row %q, the changelog says %s = %s", l, f[0], table[f[0]])
		}
	}
}
