package main

import (
	"strings"
	"testing"
)

// The commands the issue asks the help to list, a line each.
var wantCommands = []string{"sqllogictest", "datagen", "nexmark", "kafka-broker", "help"}

// TestE2EHelpListsEveryCommand: clinksh --help (stderr, as flag errors
// are) and clinksh help (stdout) list every command on a line of its own
// with a description, and the shell's flags.
func TestE2EHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"help", "--help"}} {
		r := runClinksh(t, "", args...)
		text := r.stdout + r.stderr
		if r.code != 0 || !strings.HasPrefix(text, "Usage: clinksh") {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
			continue
		}
		lines := strings.Split(text, "\n")
		for _, c := range wantCommands {
			found := false
			for _, l := range lines {
				if f := strings.Fields(l); len(f) > 1 && f[0] == c && strings.HasPrefix(l, "  ") {
					found = true
				}
			}
			if !found {
				t.Errorf("%q: no line for %s:\n%s", args, c, text)
			}
		}
		for _, flag := range []string{"-c SQL", "-f FILE", "-format format"} {
			if !strings.Contains(text, flag) {
				t.Errorf("%q: no %q:\n%s", args, flag, text)
			}
		}
	}
	if len(subcommands) != len(wantCommands) {
		t.Errorf("%d commands dispatch, the help test knows %d", len(subcommands), len(wantCommands))
	}
}

// TestE2ESubcommandHelp: every command has its own --help, with a usage
// line naming it and its flags, and exits 0; clinksh help COMMAND is the
// same.
func TestE2ESubcommandHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sqllogictest", "--help"}, []string{"Usage: clinksh sqllogictest", "-skip-file"}},
		{[]string{"datagen", "--help"}, []string{"Usage: clinksh datagen tpch", "clickbench"}},
		{[]string{"datagen", "tpch", "--help"}, []string{"Usage: clinksh datagen tpch --out DIR", "TPC-H", "-sf factor"}},
		{[]string{"datagen", "clickbench", "--help"}, []string{"Usage: clinksh datagen clickbench --out DIR", "hits", "-rows rows"}},
		{[]string{"nexmark", "--help"}, []string{"Usage: clinksh nexmark", "-query query"}},
		{[]string{"kafka-broker", "--help"}, []string{"Usage: clinksh kafka-broker", "embedded Kafka broker", "-listen"}},
		{[]string{"help", "kafka-broker"}, []string{"Usage: clinksh kafka-broker", "-listen"}},
	} {
		r := runClinksh(t, "", tc.args...)
		text := r.stdout + r.stderr
		if r.code != 0 {
			t.Errorf("%q: exit %d:\n%s", tc.args, r.code, text)
		}
		if strings.Contains(text, "Usage of") {
			t.Errorf("%q: Go's bare usage line:\n%s", tc.args, text)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%q: no %q in:\n%s", tc.args, w, text)
			}
		}
	}
	if r := runClinksh(t, "", "help", "bogus"); r.code != exitUsage || !strings.Contains(r.stderr, `unknown command "bogus"`) {
		t.Errorf("help bogus: exit %d stderr %q", r.code, r.stderr)
	}
}
