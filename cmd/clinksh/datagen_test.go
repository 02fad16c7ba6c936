package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDatagenTPCH(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := runDatagen([]string{"tpch", "--sf", "0.01", "--out", dir}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"lineitem", "orders", "region", "TPC-H SF 0.01:", " s\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// 1500 customers at SF 0.01 (150,000 x 0.01), in the table of rows.
	if !strings.Contains(out.String(), "1500") {
		t.Errorf("output does not show customer's 1500 rows:\n%s", out.String())
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "lineitem", "*.parquet")); len(files) != 1 {
		t.Errorf("lineitem files: %v", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Error(err)
	}
}

func TestDatagenClickBench(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := runDatagen([]string{"clickbench", "--rows", "3000", "--out", dir}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "hits-000.parquet") || !strings.Contains(out.String(), "3000 rows in 1 files") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestDatagenUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"tpcds"},
		{"tpch", "--sf", "1"},         // no --out
		{"clickbench", "--rows", "x"}, // bad number
		{"tpch", "--out", t.TempDir(), "extra"},
	} {
		var out, errb bytes.Buffer
		if code := runDatagen(args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (usage)", args, code, exitUsage)
		}
		if errb.Len() == 0 {
			t.Errorf("%q: nothing said on stderr", args)
		}
	}
	var out, errb bytes.Buffer
	if code := runDatagen([]string{"tpch", "--sf", "0", "--out", t.TempDir()}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "scale factor") {
		t.Errorf("--sf 0: exit %d, %q", code, errb.String())
	}
}
