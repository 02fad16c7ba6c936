package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clink-sql/clink/sqllogictest"
)

// defaultSkipFile is the skip list `clinksh sqllogictest` reads when
// --skip-file is not given (relative to the working directory; the
// repository root in CI).
const defaultSkipFile = "testdata/sqllogictest/skips.txt"

// runSQLLogicTest is `clinksh sqllogictest [flags] FILE...`: it runs
// sqllogictest files (or every *.test file under a directory) against
// fresh sessions, prints each failure, and ends with the line
// "N passed, N failed, N skipped". Exit status 1 when anything failed.
func runSQLLogicTest(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("clinksh sqllogictest", flag.ContinueOnError)
	flags.SetOutput(stderr)
	verbose := flags.Bool("verbose", false, "report every record, not only failures")
	skipFile := flags.String("skip-file", defaultSkipFile, "the skip list: lines 'file:line reason' or 'file:* reason' ('' for none)")
	engineName := flags.String("engine", sqllogictest.DefaultEngine, "the engine `name` skipif/onlyif lines are matched against")
	par := flags.Int("parallelism", 1, "each session's SET 'parallelism' (`N` subtasks)")
	timeout := flags.Duration("timeout", sqllogictest.DefaultTimeout, "the time one statement may take")
	setUsage(flags, "clinksh sqllogictest [flags] FILE|DIR...",
		"Runs sqllogictest files (a directory: every *.test file under it), one\n"+
			"fresh session per file, and prints each failure and then\n"+
			"'N passed, N failed, N skipped'.")
	files, err := parseInterspersed(flags, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "clinksh sqllogictest: no files given\n")
		flags.Usage()
		return exitUsage
	}
	if *par < 1 {
		fmt.Fprintf(stderr, "clinksh sqllogictest: --parallelism must be at least 1\n")
		return exitUsage
	}
	paths, err := expandTestFiles(files)
	if err != nil {
		fmt.Fprintf(stderr, "clinksh sqllogictest: %s\n", err)
		return exitUsage
	}
	var skips *sqllogictest.SkipList
	if *skipFile != "" {
		skips, err = sqllogictest.LoadSkipList(*skipFile)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !flagSet(flags, "skip-file"):
			// The default list is optional: run from elsewhere, there is none.
			skips = nil
		case err != nil:
			fmt.Fprintf(stderr, "clinksh sqllogictest: --skip-file: %s\n", err)
			return exitUsage
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r := sqllogictest.NewRunner(sqllogictest.Options{
		Engine:      *engineName,
		Timeout:     *timeout,
		Parallelism: *par,
		Skips:       skips,
		Out:         stdout,
		Verbose:     *verbose,
	})
	sum := r.Run(ctx, paths...)
	fmt.Fprintln(stdout, sum.String())
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case sum.Failed > 0:
		return exitError
	}
	return exitOK
}

// parseInterspersed parses flags that may come after the file arguments
// (`clinksh sqllogictest a.test --verbose`), which flag.Parse alone stops at.
func parseInterspersed(flags *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := flags.Parse(args); err != nil {
			return nil, err
		}
		args = flags.Args()
		if len(args) == 0 {
			return files, nil
		}
		if args[0] == "--" {
			return append(files, args[1:]...), nil
		}
		files = append(files, args[0])
		args = args[1:]
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(flags *flag.FlagSet, name string) bool {
	set := false
	flags.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// expandTestFiles replaces each directory by the *.test files under it,
// sorted; files are kept as given.
func expandTestFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".test") {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no *.test files", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
