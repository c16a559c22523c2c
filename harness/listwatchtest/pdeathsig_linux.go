package listwatchtest

import (
	"os"
	"syscall"
)

// A process listwatch started (serveEnv set) asks Linux to end it when the thread that spawned it
// exits. Package init runs on the main thread (the runtime locks the main goroutine to it during
// init), which lives as long as the process.
func init() {
	if os.Getenv(serveEnv) == "" {
		return
	}
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(0) // the parent is already gone
	}
}
