package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// subcommand is one of clinksh's commands besides the shell itself.
type subcommand struct {
	name    string
	summary string // one line for the help
	run     func(args []string, stdout, stderr *os.File) int
}

// subcommands lists them for dispatch and for the help, in help order.
var subcommands []subcommand

func init() {
	subcommands = []subcommand{
		{"sqllogictest", "run sqllogictest files; ends with 'N passed, N failed, N skipped'",
			func(a []string, o, e *os.File) int { return runSQLLogicTest(a, o, e) }},
		{"datagen", "write TPC-H or ClickBench tables as Parquet",
			func(a []string, o, e *os.File) int { return runDatagen(a, o, e) }},
		{"nexmark", "run Nexmark queries and report events/s per core",
			func(a []string, o, e *os.File) int { return runNexmark(a, o, e) }},
		{"kafka-broker", "run only the embedded Kafka broker, for kcat and other clients",
			func(a []string, _, e *os.File) int { return runBroker(a, e) }},
		{"help", "this help; 'clinksh help COMMAND' shows the command's flags", runHelp},
	}
}

func findSubcommand(name string) *subcommand {
	for i := range subcommands {
		if subcommands[i].name == name {
			return &subcommands[i]
		}
	}
	return nil
}

// writeCommandList writes the subcommands, a line each.
func writeCommandList(w io.Writer) {
	width := 0
	for _, c := range subcommands {
		width = max(width, len(c.name))
	}
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
}

// runHelp is `clinksh help [COMMAND]`: the shell's usage on stdout, or
// COMMAND's own (what COMMAND --help prints).
func runHelp(args []string, stdout, stderr *os.File) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		printUsage(stdout, shellFlags(new(options), stdout))
		return exitOK
	}
	c := findSubcommand(args[0])
	if c == nil || c.name == "help" {
		fmt.Fprintf(stderr, "clinksh help: unknown command %q (commands: %s)\n", args[0], commandNames())
		return exitUsage
	}
	return c.run([]string{"--help"}, stdout, stderr)
}

func commandNames() string {
	names := make([]string, len(subcommands))
	for i, c := range subcommands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// setUsage gives a subcommand's flag set a usage text: the synopsis, what
// the command does, then its flags (instead of Go's bare "Usage of").
func setUsage(fs *flag.FlagSet, synopsis, about string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", synopsis, about)
		fs.PrintDefaults()
	}
}
