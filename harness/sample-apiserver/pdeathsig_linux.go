package main

import (
	"os"
	"syscall"
)

// The server asks Linux to end it when the thread that spawned it exits, so that a conformance run
// that dies leaves no server behind. Package init runs on the main thread (the runtime locks the main
// goroutine to it during init), which lives as long as the process.
func init() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(0) // the parent is already gone
	}
}
