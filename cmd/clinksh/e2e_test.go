package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The end-to-end tests build the real binary (with the real engine) once
// and run it as a user would.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func clinkshBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clinksh-e2e-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "clinksh")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type result struct {
	stdout, stderr string
	code           int
}

func runClinksh(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(clinkshBinary(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CLINK_HISTORY="+filepath.Join(cmd.Dir, "hist"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = strings.NewReader(stdin)
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func TestE2ESelectOneTable(t *testing.T) {
	r := runClinksh(t, "", "-c", "SELECT 1 AS one")
	want := "+-----+\n| one |\n+-----+\n|   1 |\n+-----+\n1 row, finished\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", r.code, r.stdout, r.stderr, want)
	}
}

func TestE2ECSV(t *testing.T) {
	r := runClinksh(t, "", "--format", "csv", "-c", "SELECT 1 AS a, 'x,y' AS b, 'say \"hi\"' AS c")
	if want := "a,b,c\n1,\"x,y\",\"say \"\"hi\"\"\"\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d stdout %q stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
}

func TestE2EFirstErrorStopsWithExitCode(t *testing.T) {
	r := runClinksh(t, "", "--format", "csv", "-c",
		"SELECT 1 AS a; SELECT nope FROM nowhere; SELECT 2 AS b")
	if r.code != exitError {
		t.Errorf("exit %d, want %d", r.code, exitError)
	}
	if r.stdout != "a\n1\n" {
		t.Errorf("stdout %q: only the first statement's result", r.stdout)
	}
	for _, want := range []string{"ERROR at line 1, column ", "nowhere", "LINE 1: SELECT 1 AS a; SELECT nope FROM nowhere", "^"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestE2EFileErrorPositionAndAcksOnStderr(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.sql")
	script := "CREATE VIEW v AS SELECT 1 AS a;\n\nSELECT a,\n  zzz FROM v;\nSELECT 2;\n"
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runClinksh(t, "", "--format", "csv", "-f", file)
	if r.code != exitError {
		t.Errorf("exit %d", r.code)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q: a machine format keeps acknowledgements off stdout", r.stdout)
	}
	want := "View 'v' created.\nERROR at " + file + " line 4, column 3: column 'zzz' not found\nLINE 4:   zzz FROM v;\n          ^\n"
	if r.stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
}

func TestE2EStdinScript(t *testing.T) {
	r := runClinksh(t, "SELECT 1 AS a;\nSELECT 'x' AS s;\n", "--format", "ndjson")
	if want := "{\"a\":1}\n{\"s\":\"x\"}\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestE2EUnboundedWithLimitAndCommands(t *testing.T) {
	r := runClinksh(t, "", "--format", "csv", "-c", "SELECT auction FROM bid LIMIT 3")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || lines[0] != "auction" {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runClinksh(t, "", "-c", `\d`)
	if r.code != 0 || !strings.Contains(r.stdout, "| bid ") || !strings.Contains(r.stdout, "nexmark") {
		t.Errorf(`\d: exit %d stdout %q stderr %q`, r.code, r.stdout, r.stderr)
	}
	r = runClinksh(t, "", "--format", "csv", "-c", "EXPLAIN SELECT 1")
	if r.code != 0 || !strings.Contains(r.stdout, "Values") {
		t.Errorf("EXPLAIN: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestE2EFlags(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // substring
		stderr     string // substring
		stdoutNone bool
	}{
		{args: []string{"--version"}, code: 0, stdout: "clinksh "},
		{args: []string{"--help"}, code: 0, stderr: "Usage: clinksh"},
		{args: []string{"--bogus"}, code: exitUsage, stderr: "flag provided but not defined"},
		{args: []string{"--format", "xml", "-c", "SELECT 1"}, code: exitUsage, stderr: `unknown format "xml"`},
		{args: []string{"-f", "/nonexistent/q.sql"}, code: exitUsage, stderr: "no such file"},
		{args: []string{"-c", "SELECT 1", "-f", "x.sql"}, code: exitUsage, stderr: "not both"},
		{args: []string{"-c", "SELECT 1", "extra"}, code: exitUsage, stderr: `unexpected argument "extra"`},
		{args: []string{"--metrics-addr", "127.0.0.1:0", "--format", "csv", "-c", "SELECT 1 AS a"}, code: 0, stdout: "a\n1\n"},
	} {
		r := runClinksh(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%q: exit %d stdout %q stderr %q", tc.args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestE2EUntypedNull: SELECT NULL (Arrow's null type, which has no
// validity bitmap) prints as NULL in the table, null in JSON and an empty
// field in CSV, like a typed NULL, and not as Arrow's "(null)".
func TestE2EUntypedNull(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{"table", "| NULL | NULL |"},
		{"csv", "n,t\n,\n"},
		{"tsv", "n\tt\n\t\n"},
		{"json", `{"n":null,"t":null}`},
		{"ndjson", `{"n":null,"t":null}`},
	} {
		r := runClinksh(t, "", "--format", tc.format, "-c", "SELECT NULL AS n, CAST(NULL AS INT) AS t")
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) || strings.Contains(r.stdout, "(null)") {
			t.Errorf("%s: exit %d stdout %q stderr %q, want %q", tc.format, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// TestE2EDescribeAgrees: \d NAME shows the kind of the table and then
// exactly the table DESCRIBE NAME prints.
func TestE2EDescribeAgrees(t *testing.T) {
	d := runClinksh(t, "", "-c", `\d bid`)
	desc := runClinksh(t, "", "-c", "DESCRIBE bid")
	if d.code != 0 || desc.code != 0 {
		t.Fatalf(`\d: exit %d %q; DESCRIBE: exit %d %q`, d.code, d.stderr, desc.code, desc.stderr)
	}
	kind, table, _ := strings.Cut(d.stdout, "\n")
	if !strings.HasPrefix(kind, "bid: ") || !strings.HasSuffix(kind, "unbounded") {
		t.Errorf("first line %q", kind)
	}
	if table != desc.stdout || !strings.Contains(table, "| auction ") {
		t.Errorf("\\d bid:\n%s\nDESCRIBE bid:\n%s", table, desc.stdout)
	}
}

// A query over a file that is not there says so with the path and a caret
// under it; the CREATE TABLE advice (declare the columns) is not given for
// a SELECT, which cannot use it.
func TestE2EMissingFileError(t *testing.T) {
	for _, c := range []struct{ sql, path string }{
		{"SELECT *\n  FROM 'data/bids.parquet' LIMIT 3", "data/bids.parquet"},
		{"SELECT *\n  FROM read_parquet('data/*.parquet')", "data/*.parquet"},
		{"SELECT *\n  FROM 'data/bids.ndjson'", "data/bids.ndjson"},
	} {
		r := runClinksh(t, "", "-c", c.sql)
		if r.code != exitError {
			t.Errorf("%s: exit %d", c.sql, r.code)
		}
		want := "LINE 2:   FROM " + c.sql[len("SELECT *\n  FROM "):] + "\n               ^\n"
		if !strings.HasPrefix(r.stderr, "ERROR at line 2, column 8: ") || !strings.Contains(r.stderr, c.path) ||
			!strings.HasSuffix(r.stderr, want) || strings.Contains(r.stderr, "declare the columns") {
			t.Errorf("%s: stderr:\n%s\nwant the path, and ending:\n%s", c.sql, r.stderr, want)
		}
	}
}

// \d and DESCRIBE print the same table for a table with a primary key, a
// METADATA column, a computed column and a watermark, and both show them.
func TestE2EDescribeAgreesOnExtras(t *testing.T) {
	create := "CREATE TABLE ev (id BIGINT, ts TIMESTAMP(3), part INT METADATA FROM 'partition', d AS id * 2, " +
		"PRIMARY KEY (id) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'kafka', " +
		"'topic' = 'x', 'properties.bootstrap.servers' = 'localhost:1', 'format' = 'json');\n"
	d := runClinksh(t, create+"\\d ev\n")
	desc := runClinksh(t, create+"DESCRIBE ev;\n")
	if d.code != 0 || desc.code != 0 {
		t.Fatalf(`\d: exit %d %q; DESCRIBE: exit %d %q`, d.code, d.stderr, desc.code, desc.stderr)
	}
	_, table, _ := strings.Cut(d.stdout, "ev: table (kafka), unbounded\n")
	if table == "" || !strings.HasSuffix(desc.stdout, table) {
		t.Fatalf("\\d ev:\n%s\nDESCRIBE ev:\n%s", d.stdout, desc.stdout)
	}
	for _, want := range []string{" key ", " extras ", " watermark ", "PRI(id)", "TIMESTAMP(3) *ROWTIME*",
		"ts - INTERVAL '5' SECOND", "METADATA FROM 'partition'", "AS id * 2"} {
		if !strings.Contains(table, want) {
			t.Errorf("DESCRIBE lacks %q:\n%s", want, table)
		}
	}
}
