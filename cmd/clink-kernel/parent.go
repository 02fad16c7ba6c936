package main

import (
	"context"
	"os"
	"strconv"
	"time"
)

// parentPoll is how often the kernel looks for its parent.
const parentPoll = time.Second

// watchParent calls gone once when the process that started the kernel
// exits: a kernel whose frontend died (killed, crashed) would otherwise
// run forever, and keep its demo broker alive with it. Jupyter names that
// process in JPY_PARENT_PID; without it the kernel watches the parent it
// started under. A parent is gone when the process no longer exists, or
// when the kernel, its direct child, has been reparented (which also
// covers the parent's pid being reused by an unrelated process). It
// returns when ctx ends.
func watchParent(ctx context.Context, env string, interval time.Duration, gone func(reason string)) {
	ppid := os.Getppid()
	pid := ppid
	if n, err := strconv.Atoi(env); err == nil && n > 1 {
		pid = n
	}
	if pid <= 1 {
		return // started by init or a container's pid 1: nothing to watch
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch {
		case !processExists(pid):
			gone("parent process " + strconv.Itoa(pid) + " exited")
			return
		case pid == ppid && os.Getppid() != ppid:
			gone("parent process " + strconv.Itoa(pid) + " exited (the kernel was reparented)")
			return
		}
	}
}
