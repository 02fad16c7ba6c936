package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/chzyer/readline"

	"github.com/clink-sql/clink/sql"
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

// repl reads statements until EOF or \q. Lines accumulate until the text
// ends with a ';' that ends a statement (sql.Complete), then each statement
// runs in turn; a failing one is reported and the shell keeps going. A
// backslash command is a line of its own, recognised when no statement is
// pending.
func (sh *shell) repl(ctx context.Context, lr lineReader) error {
	var pending strings.Builder
	for {
		if pending.Len() == 0 {
			lr.SetPrompt(prompt)
		} else {
			lr.SetPrompt(contPrompt)
		}
		line, err := lr.Readline()
		if errors.Is(err, errInterrupt) {
			// Ctrl-C at the prompt drops what was typed, statement included.
			pending.Reset()
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		trimmed := strings.TrimSpace(line)
		if pending.Len() == 0 {
			if trimmed == "" {
				continue
			}
			if strings.HasPrefix(trimmed, `\`) {
				lr.SaveHistory(trimmed)
				if quit, _ := sh.command(trimmed); quit {
					return nil
				}
				continue
			}
		} else {
			pending.WriteByte('\n')
		}
		pending.WriteString(line)
		script := pending.String()
		if !sql.Complete(script) {
			continue
		}
		pending.Reset()
		lr.SaveHistory(historyEntry(script))
		for _, p := range sql.Split(script) {
			// Errors are reported by runPiece; the shell goes on.
			_ = sh.runPiece(ctx, script, p, false)
		}
	}
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

// termLines is readline on a terminal, with history.
type termLines struct{ rl *readline.Instance }

func newTermLines(historyFile string) (*termLines, error) {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:      prompt,
		HistoryFile: historyFile,
		// Whole statements go to the history, not their lines.
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
	})
	if err != nil {
		return nil, err
	}
	return &termLines{rl: rl}, nil
}

func (t *termLines) Readline() (string, error) {
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errInterrupt
	}
	return line, err
}

func (t *termLines) SetPrompt(p string)             { t.rl.SetPrompt(p) }
func (t *termLines) SaveHistory(entry string) error { return t.rl.SaveHistory(entry) }
func (t *termLines) Close() error                   { return t.rl.Close() }
