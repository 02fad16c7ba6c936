package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestE2ESIGINTStopsSkewedJoin: the skewed equi-join (two keys,
// 20k rows each on both sides: 800M pairs) is stopped by SIGINT; the
// shell exits with the interrupt's status and "Cancelled." (bounded at
// 30 s, which catches a hang, not a timing: measured end to end it is
// under 0.1 s).
func TestE2ESIGINTStopsSkewedJoin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skew.json")
	var sb strings.Builder
	for i := 0; i < 40000; i++ {
		fmt.Fprintf(&sb, `{"k": %d, "v": %d}`+"\n", i%2, i)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("CREATE TABLE s (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'format' = 'json', 'path' = '%s'); "+
		"SELECT COUNT(*), SUM(a.v + b.v) FROM s a JOIN s b ON a.k = b.k", path)
	cmd := osexec.Command(clinkshBinary(t), "-c", script)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the join finished before the interrupt (%v): %s", err, stderr.String())
	case <-time.After(2 * time.Second):
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("still running 30 s after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "Cancelled.") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
