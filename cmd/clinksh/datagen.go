package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/clink-sql/clink/datagen/clickbench"
	"github.com/clink-sql/clink/datagen/tpch"
)

// runDatagen is `clinksh datagen tpch|clickbench`: it writes a benchmark's
// tables as Parquet files into a directory and says what it wrote and how
// long it took.
//
//	clinksh datagen tpch --sf 1 --out DIR
//	clinksh datagen clickbench --rows 10000000 --out DIR
func runDatagen(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintf(stderr, "Usage: clinksh datagen tpch --sf N --out DIR\n"+
			"       clinksh datagen clickbench --rows N --out DIR\n\n"+
			"Writes the TPC-H tables (DIR/<table>/*.parquet) or ClickBench's hits table\n"+
			"(DIR/hits/*.parquet), deterministic for a seed, with DIR/manifest.json last.\n")
	}
	if len(args) == 0 {
		usage()
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch args[0] {
	case "tpch":
		return datagenTPCH(ctx, args[1:], stdout, stderr)
	case "clickbench":
		return datagenClickBench(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage()
		return exitOK
	}
	fmt.Fprintf(stderr, "clinksh datagen: unknown benchmark %q (tpch, clickbench)\n", args[0])
	return exitUsage
}

func datagenTPCH(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clinksh datagen tpch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := fs.Float64("sf", 1, "the scale `factor` (1: 6M lineitems, about 300 MB of Parquet)")
	out := fs.String("out", "", "the output `directory` (required)")
	seed := fs.Uint64("seed", tpch.DefaultSeed, "the random `seed`: the same seed and scale give the same files")
	workers := fs.Int("workers", 0, "files written at once (0: one per core)")
	setUsage(fs, fs.Name()+" --out DIR [flags]", datagenAbout[fs.Name()])
	if code, ok := parseDatagenFlags(fs, args, stderr); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(stderr, "clinksh datagen tpch: --out is required")
		return exitUsage
	}
	start := time.Now()
	m, err := tpch.Generate(ctx, tpch.Options{SF: *sf, Dir: *out, Seed: *seed, Workers: *workers})
	if err != nil {
		fmt.Fprintf(stderr, "clinksh datagen tpch: %s\n", err)
		return exitError
	}
	took := time.Since(start)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "table\trows\tfiles\tbytes\t\n")
	var rows, bytes int64
	for _, t := range tpch.Tables() {
		b := sizeOf(*out, m.Files[t])
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", t, m.Rows[t], len(m.Files[t]), b)
		rows += m.Rows[t]
		bytes += b
	}
	tw.Flush()
	fmt.Fprintf(stdout, "TPC-H SF %v: %d rows, %.1f MB of Parquet in %s, in %.2f s\n", *sf, rows, float64(bytes)/1e6, *out, took.Seconds())
	return exitOK
}

func datagenClickBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clinksh datagen clickbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rows := fs.Int64("rows", clickbench.DefaultRows, "the `rows` of the hits table")
	out := fs.String("out", "", "the output `directory` (required)")
	seed := fs.Uint64("seed", clickbench.DefaultSeed, "the random `seed`: the same seed and row count give the same files")
	workers := fs.Int("workers", 0, "files written at once (0: one per core)")
	setUsage(fs, fs.Name()+" --out DIR [flags]", datagenAbout[fs.Name()])
	if code, ok := parseDatagenFlags(fs, args, stderr); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(stderr, "clinksh datagen clickbench: --out is required")
		return exitUsage
	}
	start := time.Now()
	m, err := clickbench.Generate(ctx, clickbench.Options{Rows: *rows, Dir: *out, Seed: *seed, Workers: *workers})
	if err != nil {
		fmt.Fprintf(stderr, "clinksh datagen clickbench: %s\n", err)
		return exitError
	}
	took := time.Since(start)
	bytes := sizeOf(*out, m.Files)
	for _, f := range m.Files {
		fmt.Fprintln(stdout, filepath.Join(*out, f))
	}
	fmt.Fprintf(stdout, "ClickBench hits: %d rows in %d files, %.1f MB of Parquet in %s, in %.2f s\n", m.Rows, len(m.Files), float64(bytes)/1e6, *out, took.Seconds())
	return exitOK
}

// parseDatagenFlags parses args; ok is false when the command should end
// with code (help asked for, or a bad flag, which flag has reported).
var datagenAbout = map[string]string{
	"clinksh datagen tpch":       "Writes the TPC-H tables as Parquet (DIR/<table>/*.parquet), deterministic\nfor a seed, with DIR/manifest.json last.",
	"clinksh datagen clickbench": "Writes ClickBench's hits table as Parquet (DIR/hits/*.parquet),\ndeterministic for a seed, with DIR/manifest.json last.",
}

func parseDatagenFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, false
	}
	return 0, true
}

// sizeOf adds up the sizes of files (relative to dir).
func sizeOf(dir string, files []string) int64 {
	var n int64
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			n += st.Size()
		}
	}
	return n
}
