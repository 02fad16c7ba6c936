package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
)

// maxIncludeDepth bounds \i within \i (a file that includes itself).
const maxIncludeDepth = 16

// include runs the statements and commands of file (\i), stopping at its
// first error, which is reported with the file's name and line. It returns
// a message for a file it cannot run, else the error that stopped it
// (already reported). \q in the file ends the file.
func (sh *shell) include(ctx context.Context, file string) (msg string, err error) {
	if sh.includeDepth >= maxIncludeDepth {
		return fmt.Sprintf(`\i %s: files include each other more than %d deep`, file, maxIncludeDepth), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return `\i: ` + err.Error(), nil
	}
	defer f.Close()
	sh.includeDepth++
	defer func() { sh.includeDepth-- }()
	return "", sh.runLines(ctx, newReaderLines(f, nil), scriptLoc{file: file})
}

// redirect sends results to file (\o FILE), or back to stdout when file is
// "". A file gets no live redraws: it is not a terminal.
func (sh *shell) redirect(file string) error {
	if err := sh.out.Flush(); err != nil {
		return err
	}
	if sh.stdout == nil {
		sh.stdout, sh.stdoutSize = sh.out, sh.termSize
	}
	if err := sh.closeOutput(); err != nil {
		return err
	}
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	sh.outFile = f
	sh.out = bufio.NewWriterSize(f, 64<<10)
	sh.termSize = nil
	return nil
}

// closeOutput ends a \o redirection: the file is flushed and closed and
// results go to stdout again.
func (sh *shell) closeOutput() error {
	if sh.outFile == nil {
		return nil
	}
	err := sh.out.Flush()
	if cerr := sh.outFile.Close(); err == nil {
		err = cerr
	}
	sh.outFile = nil
	sh.out, sh.termSize = sh.stdout, sh.stdoutSize
	return err
}
