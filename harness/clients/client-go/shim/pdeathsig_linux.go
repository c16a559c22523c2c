package shim

import (
	"os"
	"syscall"
)

// Linux sends the parent-death signal to the thread that asked for it when the thread that
// spawned this process exits. Package init runs on the main thread (the runtime locks the main
// goroutine to it during init), which lives as long as the process.
func init() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(0) // the parent is already gone
	}
}
