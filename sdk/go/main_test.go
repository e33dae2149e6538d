package retopsdk

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// hasDWARF tells whether this test binary carries DWARF and .symtab.
//
// A plain "go test" links the test binary with -s -w (cmd/go omits debug
// information unless -c, -o or a profile flag asks to keep the binary), so
// the tests run twice: first in this stripped binary, which exercises the
// pclntab-only path, then, from TestMain, in a copy built with
// "go test -c", which has DWARF and a symbol table.
var hasDWARF bool

// childEnv marks the second run.
const childEnv = "RETOPSDK_TEST_WITH_DWARF"

func TestMain(m *testing.M) {
	if f, err := elf.Open(os.Args[0]); err == nil {
		_, err = f.DWARF()
		hasDWARF = err == nil
		f.Close()
	}
	code := m.Run()
	if code == 0 && !hasDWARF && os.Getenv(childEnv) == "" {
		code = runWithDWARF()
	}
	os.Exit(code)
}

// runWithDWARF builds this package's test binary with debug information
// and runs it with the same test flags.
func runWithDWARF() int {
	dir, err := os.MkdirTemp("", "retopsdk-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "retopsdk.test")
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(gocmd, "test", "-c", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "retopsdk: building the test binary with DWARF:", err)
		return 1
	}
	var args []string
	for _, a := range os.Args[1:] {
		// The log file belongs to the parent run (go test's cache).
		if !strings.HasPrefix(a, "-test.testlogfile") {
			args = append(args, a)
		}
	}
	fmt.Fprintln(os.Stderr, "retopsdk: running the tests again in a binary with DWARF")
	run := exec.Command(bin, args...)
	run.Env = append(os.Environ(), childEnv+"=1")
	run.Stdout, run.Stderr = os.Stdout, os.Stderr
	if err := run.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "retopsdk: tests with DWARF:", err)
		return 1
	}
	return 0
}
