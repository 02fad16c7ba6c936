package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/chzyer/readline"
)

const (
	prompt     = "clink> "
	contPrompt = "   ...> "
)

// errInterrupt is what a lineReader returns for Ctrl-C at the prompt.
var errInterrupt = errors.New("interrupt")

// lineReader is where the REPL's lines come from: readline on a terminal,
// any io.Reader in the tests. Readline returns errInterrupt for Ctrl-C and
// io.EOF for Ctrl-D or the end of input.
type lineReader interface {
	Readline() (string, error)
	SetPrompt(p string)
	// SaveHistory records one finished statement or command.
	SaveHistory(entry string) error
}

// repl reads statements from the terminal until EOF or \q (see runLines).
func (sh *shell) repl(ctx context.Context, lr lineReader) error {
	return sh.runLines(ctx, lr, scriptLoc{interactive: true})
}

// historyEntry folds a multi-line statement into one history line (the
// history file holds one entry per line).
func historyEntry(script string) string {
	return strings.Join(strings.Fields(script), " ")
}

// readerLines reads lines from an io.Reader: the REPL without a terminal.
type readerLines struct {
	r   *bufio.Reader
	out io.Writer // prompts are echoed here when set
	p   string
}

func newReaderLines(r io.Reader, promptOut io.Writer) *readerLines {
	return &readerLines{r: bufio.NewReader(r), out: promptOut}
}

func (l *readerLines) Readline() (string, error) {
	if l.out != nil {
		io.WriteString(l.out, l.p)
	}
	line, err := l.r.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (l *readerLines) SetPrompt(p string)       { l.p = p }
func (l *readerLines) SaveHistory(string) error { return nil }

// termLines is readline on a terminal, with history and Tab completion.
type termLines struct {
	rl   *readline.Instance
	tabs *tabCompleter
}

func newTermLines(historyFile string, tabs *tabCompleter) (*termLines, error) {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:       prompt,
		HistoryFile:  historyFile,
		AutoComplete: tabs,
		// Whole statements go to the history, not their lines.
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
	})
	if err != nil {
		return nil, err
	}
	return &termLines{rl: rl, tabs: tabs}, nil
}

func (t *termLines) Readline() (string, error) {
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errInterrupt
	}
	return line, err
}

func (t *termLines) SetPrompt(p string)             { t.rl.SetPrompt(p) }
func (t *termLines) SetPending(stmt string)         { t.tabs.SetPending(stmt) }
func (t *termLines) SaveHistory(entry string) error { return t.rl.SaveHistory(entry) }
func (t *termLines) Close() error                   { return t.rl.Close() }
