package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
)

// defaultPager is used when $PAGER is unset: less, chopping long lines
// (-S) rather than wrapping a table, keeping colours (-R), quitting at once
// when the text fits one screen (-F) and leaving it on the screen (-X).
const defaultPager = "less -SRFX"

// pagerCommand is the pager to run: $PAGER, else defaultPager; "" (PAGER
// set empty) means none.
func pagerCommand() string {
	if p, ok := os.LookupEnv("PAGER"); ok {
		return p
	}
	return defaultPager
}

// page shows a bounded table through the pager when it is taller than the
// terminal (\pset pager on, stdout a terminal), else writes it as it is.
// The pager writes to the terminal itself; if it cannot be started the
// text is printed instead.
func (sh *shell) page(text []byte) error {
	_, height := sh.termSize()
	cmdline := pagerCommand()
	if cmdline == "" || bytes.Count(text, []byte{'\n'}) < height-1 {
		_, err := sh.out.Write(text)
		return err
	}
	if err := sh.out.Flush(); err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin = bytes.NewReader(text)
	cmd.Stdout, cmd.Stderr = sh.pagerOut, sh.errw
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err == nil || errors.As(err, &exitErr) {
		return nil // the pager ran (quitting it early is not an error)
	}
	_, err = sh.out.Write(text)
	return err
}

// pageStream starts the pager for a table that streams: the writer feeds
// its stdin as rows arrive (less shows the first screen at once), and Close
// waits until the user quits it. nil when no pager is set or it cannot
// start (the table is then printed as it is).
func (sh *shell) pageStream() io.WriteCloser {
	cmdline := pagerCommand()
	if cmdline == "" || sh.out.Flush() != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdout, cmd.Stderr = sh.pagerOut, sh.errw
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		return nil
	}
	return &pagerPipe{WriteCloser: in, cmd: cmd}
}

// pagerPipe is a running pager's stdin; Close ends the input and waits for
// the pager to exit.
type pagerPipe struct {
	io.WriteCloser
	cmd *exec.Cmd
}

func (p *pagerPipe) Close() error {
	_ = p.WriteCloser.Close()
	err := p.cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil // quitting the pager early is not an error
	}
	return err
}

// pagerOn tells whether bounded tables go through the pager: on a
// terminal, in the table format, with the pager not turned off.
func (sh *shell) pagerOn() bool {
	return !sh.noPager && sh.termSize != nil && sh.pagerOut != nil && sh.format == formatTable
}
