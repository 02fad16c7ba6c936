// Command clinksh is clink's interactive SQL shell.
//
//	clinksh                          interactive (readline, history, Ctrl-C cancels the query)
//	clinksh -c "SQL; SQL"            run statements, exit non-zero on the first error
//	clinksh -f file.sql              the same from a file
//	echo "SELECT 1;" | clinksh       the same from stdin when it is not a terminal,
//	                                 each statement run as soon as its ';' is read
//	clinksh --format csv -c "..."    table (default), csv, tsv, json, ndjson
//	clinksh sqllogictest FILE...     run sqllogictest files; ends with "N passed, N failed, N skipped"
//	clinksh datagen tpch --sf 1 --out DIR          TPC-H tables as Parquet
//	clinksh datagen clickbench --rows N --out DIR  ClickBench's hits as Parquet
//	clinksh nexmark --query q5       Nexmark queries, events/s per core
//	clinksh kafka-broker             only the embedded Kafka broker
//	clinksh help [COMMAND]           the commands, or one command's flags
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/metrics"

	"github.com/chzyer/readline"
)

// version is set at build time: -ldflags "-X main.version=v0.1.0".
var version = "dev"

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1 // a statement failed
	exitUsage       = 2 // bad flags or unreadable input
	exitInterrupted = 130
)

func main() {
	engine.TuneRuntime()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	command     string
	file        string
	format      string
	version     bool
	metricsAddr string
	memoryLimit string
}

// errFlagReported: the flag package already printed the problem.
var errFlagReported = errors.New("bad flags")

// shellFlags declares the shell's flags into o.
func shellFlags(o *options, output io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("clinksh", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.command, "c", "", "run the `SQL` statements (separated by ';') and exit")
	fs.StringVar(&o.file, "f", "", "run the statements of `FILE` and exit")
	fs.StringVar(&o.format, "format", formatTable, "output `format`: table, csv, tsv, json, ndjson")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics on `ADDR` (host:port)")
	fs.StringVar(&o.memoryLimit, "memory-limit", "", "a query's memory budget before GROUP BY, ORDER BY and joins spill to disk, e.g. 2gb or unlimited (default: half the memory; SET 'execution.memory-limit' changes it)")
	fs.Usage = func() { printUsage(fs.Output(), fs) }
	return fs
}

// printUsage is the shell's help: how to run it, its commands, its flags.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: clinksh [flags]\n       clinksh COMMAND [flags] (COMMAND --help for its flags)\n\n"+
		"Without -c or -f, clinksh reads statements from stdin: interactively on a\n"+
		"terminal (\\? for help), as a script otherwise (each statement runs as\n"+
		"soon as its ';' is read).\n\nCommands:\n")
	writeCommandList(w)
	fmt.Fprintf(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := shellFlags(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, errFlagReported // flag printed it, with the usage
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (statements go in -c, or -f for a file; 'clinksh help' lists the commands)", fs.Arg(0))
	}
	if o.command != "" && o.file != "" {
		return o, errors.New("use -c or -f, not both")
	}
	if err := validFormat(o.format); err != nil {
		return o, fmt.Errorf("--format: %w", err)
	}
	return o, nil
}

func run(args []string, stdin *os.File, stdout, stderr *os.File) int {
	if len(args) > 0 {
		if c := findSubcommand(args[0]); c != nil {
			return c.run(args[1:], stdout, stderr)
		}
	}
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if errors.Is(err, errFlagReported) {
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "clinksh: %s\n", err)
		return exitUsage
	}
	if o.version {
		fmt.Fprintf(stdout, "clinksh %s (%s)\n", version, runtime.Version())
		return exitOK
	}
	if o.memoryLimit != "" {
		if err := engine.SetDefaultMemoryLimit(o.memoryLimit); err != nil {
			fmt.Fprintf(stderr, "clinksh: --memory-limit: %s\n", err)
			return exitUsage
		}
	}

	// Open the script before anything else, so a missing file costs
	// nothing but the message. Scripts are read line by line as they run:
	// a statement from a pipe runs as soon as its ';' arrives.
	interactive := o.command == "" && o.file == "" && readline.IsTerminal(int(stdin.Fd()))
	var lines lineReader = newReaderLines(strings.NewReader(o.command), nil)
	loc := scriptLoc{}
	switch {
	case o.file != "":
		f, err := os.Open(o.file)
		if err != nil {
			fmt.Fprintf(stderr, "clinksh: %s\n", err)
			return exitUsage
		}
		defer f.Close()
		lines, loc.file = newReaderLines(f, nil), o.file
	case o.command == "" && !interactive:
		lines = newReaderLines(stdin, nil)
	}

	ctx, stopCtx := context.WithCancel(context.Background())
	defer stopCtx()
	if o.metricsAddr != "" {
		// Served until the shell exits, on its own mux (package metrics).
		addr, err := metrics.Serve(ctx, o.metricsAddr)
		if err != nil {
			fmt.Fprintf(stderr, "clinksh: --metrics-addr: %s\n", err)
			return exitUsage
		}
		fmt.Fprintf(stderr, "clink: metrics on http://%s/metrics\n", addr)
	}

	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	sess := openSession()
	defer sess.Close()
	sh := &shell{
		sess:        sess,
		out:         out,
		errw:        stderr,
		format:      o.format,
		maxRows:     defaultMaxRows,
		progressTTY: readline.IsTerminal(int(stderr.Fd())),
	}
	if fd := int(stdout.Fd()); readline.IsTerminal(fd) {
		sh.pagerOut = stdout
		sh.termSize = func() (int, int) {
			w, h, err := readline.GetSize(fd)
			if err != nil || h <= 0 {
				return 80, 24
			}
			return w, h
		}
	}

	defer func() {
		if err := sh.closeOutput(); err != nil {
			fmt.Fprintf(stderr, "clinksh: \\o: %s\n", err)
		}
	}()
	if interactive {
		return runInteractive(ctx, sh, stderr)
	}
	// A script: Ctrl-C cancels the statement running and stops the script.
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	err = sh.runLines(sigCtx, cancelableLines{lines, sigCtx}, loc)
	switch {
	case err == nil:
		return exitOK
	case sigCtx.Err() != nil && ctx.Err() == nil:
		return exitInterrupted
	default:
		return exitError
	}
}

func runInteractive(ctx context.Context, sh *shell, stderr io.Writer) int {
	lines, err := newTermLines(historyPath(), &tabCompleter{tables: sh.sess.Tables})
	if err != nil {
		fmt.Fprintf(stderr, "clinksh: %s\n", err)
		return exitUsage
	}
	defer lines.Close()
	// Ctrl-C at the prompt reaches readline as a key (the terminal is in raw
	// mode there); while a statement runs the terminal is cooked and it
	// arrives as SIGINT, which cancels that statement only.
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	defer signal.Stop(sigc)
	intr := make(chan struct{}, 1)
	go func() {
		for range sigc {
			select {
			case intr <- struct{}{}:
			default:
			}
		}
	}()
	sh.interrupts = intr
	fmt.Fprintf(stderr, "clinksh %s. Statements end with ';'. \\? for help, \\q to quit.\n", version)
	if err := sh.repl(ctx, lines); err != nil {
		fmt.Fprintf(stderr, "clinksh: %s\n", err)
		return exitError
	}
	return exitOK
}

// historyPath is $CLINK_HISTORY, else ~/.clink_history ("" disables
// history when there is no home directory).
func historyPath() string {
	if p := os.Getenv("CLINK_HISTORY"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".clink_history")
}
