package shim

import (
	"os"
	"syscall"
)

// dieWithParent asks Linux to SIGKILL this process when the thread that started it exits, and exits
// at once if that already happened.
func dieWithParent() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(0)
	}
}
