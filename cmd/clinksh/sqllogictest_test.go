package main

import (
	"bytes"
	"strings"
	"testing"
)

func runSLTCommand(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errw bytes.Buffer
	code = runSQLLogicTest(args, &out, &errw)
	return out.String(), errw.String(), code
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// `clinksh sqllogictest` runs files (flags before or after them) and ends
// with the counts; the exit status says whether anything failed.
func TestSQLLogicTestCommand(t *testing.T) {
	t.Chdir("../..") // the test files' paths are relative to the repository root

	out, errw, code := runSLTCommand(t, "testdata/sqllogictest/select.test", "--verbose", "testdata/sqllogictest/parquet.test")
	if code != exitOK || lastLine(out) != "24 passed, 0 failed, 2 skipped" {
		t.Errorf("passing files: exit %d, last line %q\n%s%s", code, lastLine(out), out, errw)
	}
	if !strings.Contains(out, "testdata/sqllogictest/select.test:8: ok\n") ||
		!strings.Contains(out, "testdata/sqllogictest/select.test:79: skipped: skipif clink\n") {
		t.Errorf("--verbose does not report each record:\n%s", out)
	}

	// A directory runs the *.test files under it. Without a skip list,
	// every deliberate failure counts.
	out, _, code = runSLTCommand(t, "--skip-file", "", "testdata/sqllogictest/fail")
	if code != exitError || lastLine(out) != "3 passed, 13 failed, 0 skipped" {
		t.Errorf("failing file: exit %d, last line %q\n%s", code, lastLine(out), out)
	}
	if !strings.Contains(out, "testdata/sqllogictest/fail/failures.test:7: wrong result\n") {
		t.Errorf("the failure is not reported:\n%s", out)
	}

	// --engine changes what skipif/onlyif match: as sqlite, the onlyif
	// sqlite record runs (and fails here) and the skipif clink one too.
	out, _, code = runSLTCommand(t, "--engine", "sqlite", "testdata/sqllogictest/select.test")
	if code != exitError || !strings.HasSuffix(lastLine(out), "skipped") || !strings.Contains(out, "select.test:85: ") {
		t.Errorf("--engine sqlite: exit %d\n%s", code, out)
	}
}

func TestSQLLogicTestCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--no-such-flag", "x.test"},
		{"no/such/file.test"},
		{"--skip-file", "no/such/skips.txt", "../../testdata/sqllogictest/select.test"},
		{"--parallelism", "0", "../../testdata/sqllogictest/select.test"},
	} {
		if _, errw, code := runSLTCommand(t, args...); code != exitUsage || errw == "" {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, errw)
		}
	}
	if _, _, code := runSLTCommand(t, "-h"); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
}
