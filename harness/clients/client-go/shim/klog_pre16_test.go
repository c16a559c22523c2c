//go:build clientgo_pre16

package shim

import (
	"os"
	"os/exec"
	"testing"

	"k8s.io/klog"
)

// The shim before v0.16 leaves no klog files in the temporary directory (compat_klog_pre16.go). The
// check runs in a fresh process of this test binary, whose klog has logged nothing before and whose
// temporary directory is the test's own.
func TestKlogLeavesNoFiles(t *testing.T) {
	if os.Getenv("SHIM_KLOG_CHILD") == "1" {
		klog.Error("a message klog v0.3 would write to a file")
		klog.Flush()
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKlogLeavesNoFiles$")
	cmd.Env = append(os.Environ(), "SHIM_KLOG_CHILD=1", "TMPDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child test process failed: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("klog left %s in the temporary directory", e.Name())
	}
}
