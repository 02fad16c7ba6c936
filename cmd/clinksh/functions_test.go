package main

import (
	"strings"
	"testing"
)

func TestDfListsFunctionsWithSignatures(t *testing.T) {
	r := runClinksh(t, "\\df\n\\df split_index\n")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"substring(VARCHAR, INT[, INT]) -> VARCHAR",
		"count_char(VARCHAR, VARCHAR) -> BIGINT",
		"udf (row-at-a-time)",
		"split_index(VARCHAR, VARCHAR, INT) -> VARCHAR",
		"date_format(TIMESTAMP, VARCHAR) -> VARCHAR",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("\\df output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "__clink_interval") {
		t.Error("\\df lists an internal function")
	}
	r = runClinksh(t, "\\df no_such_function\n")
	if !strings.Contains(r.stderr, `no function named "no_such_function"`) {
		t.Errorf("unknown name: stderr %q", r.stderr)
	}
}
