#!/usr/bin/env python3
"""held.py PIDFILE GOFILE STATUSFILE PROGRAM ARGS...

Starts PROGRAM held at its first instruction, so that a short-lived program
can be traced from its very first call: the child asks to be traced
(PTRACE_TRACEME) and execs, and the kernel stops it right after the exec.
held.py then writes the child's PID to PIDFILE, waits until GOFILE exists,
lets the child go (PTRACE_DETACH: it runs as if never stopped), waits for it,
and writes "EXITCODE WALL_NS" to STATUSFILE: the exit code (negative: killed by
that signal) and the nanoseconds from the release to the exit.

Exit status: 0 when the child ran and STATUSFILE is written, 1 otherwise.
"""
import ctypes
import os
import signal
import sys
import time

PTRACE_TRACEME, PTRACE_DETACH = 0, 17


def main():
    if len(sys.argv) < 5:
        print(__doc__.split("\n")[0], file=sys.stderr)
        sys.exit(2)
    pidfile, gofile, statusfile, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    pid = os.fork()
    if pid == 0:
        try:
            if libc.ptrace(PTRACE_TRACEME, 0, None, None) == 0:
                os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, st = os.waitpid(pid, 0)
    if not os.WIFSTOPPED(st) or os.WSTOPSIG(st) != signal.SIGTRAP:
        sys.exit("held.py: %s did not stop at its exec (wait status %#x)" % (argv[0], st))
    with open(pidfile + ".tmp", "w") as f:
        f.write("%d\n" % pid)
    os.rename(pidfile + ".tmp", pidfile)
    while not os.path.exists(gofile):
        time.sleep(0.02)
    start = time.monotonic_ns()
    if libc.ptrace(PTRACE_DETACH, pid, None, None) != 0:
        os.kill(pid, signal.SIGKILL)
        sys.exit("held.py: cannot release %d: %s" % (pid, os.strerror(ctypes.get_errno())))
    _, st = os.waitpid(pid, 0)
    wall = time.monotonic_ns() - start
    with open(statusfile + ".tmp", "w") as f:
        f.write("%d %d\n" % (os.waitstatus_to_exitcode(st), wall))
    os.rename(statusfile + ".tmp", statusfile)


if __name__ == "__main__":
    main()
