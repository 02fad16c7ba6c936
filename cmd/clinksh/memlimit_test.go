package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EMemoryLimitFlag: --memory-limit sets the query budget: a GROUP BY
// over 100k distinct keys spills and answers under 1mb, two DISTINCTs
// without GROUP BY (one group, which cannot spill) fail with the limit named (and no Go crash), and a
// bad size is a usage error.
func TestE2EMemoryLimitFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	var sb strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&sb, `{"k": "key-%06d", "v": %d}`+"\n", i, i%10)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf("CREATE TABLE t (k VARCHAR, v BIGINT) WITH ('connector' = 'filesystem', 'format' = 'json', 'path' = '%s'); ", path)

	r := runClinksh(t, "", "--memory-limit", "1mb", "--format", "csv", "-c",
		ddl+"SELECT COUNT(*) AS n, SUM(c) AS s FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k) x")
	if r.code != 0 || !strings.Contains(r.stdout, "n,s\n100000,100000\n") {
		t.Errorf("GROUP BY under --memory-limit 1mb: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}

	r = runClinksh(t, "", "--memory-limit", "1mb", "-c", ddl+"SELECT COUNT(DISTINCT k), SUM(DISTINCT v) FROM t")
	if r.code != exitError || !strings.Contains(r.stderr, "aggregate needs more than the memory limit of 1.0 MB") ||
		strings.Contains(r.stderr, "goroutine") {
		t.Errorf("two DISTINCTs under 1mb: exit %d stderr %q", r.code, r.stderr)
	}

	r = runClinksh(t, "", "--memory-limit", "lots", "-c", "SELECT 1")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--memory-limit") {
		t.Errorf("--memory-limit lots: exit %d stderr %q", r.code, r.stderr)
	}
}
