// timesplit: four functions whose time goes each to one place, for retop's
// time split (on CPU, waiting for a CPU, blocked in the kernel, parked by
// Go).  After SIGUSR1 it calls each -calls times, one function after the
// other, on one goroutine:
//
//	main.Busy       ~-dur of arithmetic: on CPU
//	main.Syscall    a -dur nanosleep(2) system call: blocked in the kernel
//	main.Sleep      time.Sleep(-dur): parked by Go's scheduler
//	main.Contended  ~-cdur of arithmetic while -hogs other processes (this
//	                program again, spinning) load every CPU: a good part
//	                waiting for a CPU.  Long enough to span the kernel's
//	                time slices, it runs with GOMAXPROCS 1: when Go preempts
//	                it (after 10 ms) its own thread takes it back.
//
// Each call starts a time slice of its own (runtime.Gosched before it).
// Around each call of all but main.Sleep it reads its thread's CPU time
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) and, around that, its run-queue
// wait (/proc/thread-self/schedstat): its own figures, per function in
// "own" ({cpu_ns, runq_ns, wall_ns} summed over the calls that stayed on
// one thread, "calls" of them), beside the usual per_func.
//
// -prio puts it in a session of its own whose scheduling group (the
// kernel's autogroup) has nice -20, and itself at nice -20: other work on
// the machine then takes little of its CPU, and its -hogs, in the same
// group, compete with it alone.
package main

import (
	"flag"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"fixture"
)

var (
	dur  = flag.Duration("dur", 5*time.Millisecond, "each call's work")
	cdur = flag.Duration("cdur", 10*time.Millisecond, "main.Contended's work, alone on a CPU")
	prio = flag.Bool("prio", false, "run first among the machine's other work (root)")
	hogs = flag.Int("hogs", 0, "processes loading the CPUs during main.Contended (0: twice the CPUs)")
	hog  = flag.Bool("hog", false, "spin for ever (a loading process)")
	// spin's iterations for -dur and -cdur, from the machine's speed.
	nDur, nCdur int
	sink        int
)

// spin is ~n iterations of dependent arithmetic: no calls, no stack.
//
//go:noinline
func spin(n int) int {
	x := 1
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	return x
}

//go:noinline
func Busy() int {
	return spin(nDur)
}

//go:noinline
func Syscall() {
	ts := syscall.NsecToTimespec(int64(*dur))
	_ = syscall.Nanosleep(&ts, nil)
}

//go:noinline
func Sleep() {
	time.Sleep(*dur)
}

//go:noinline
func Contended() int {
	return spin(nCdur)
}

// loops returns the iterations of spin that take d: the fastest of a few
// timed runs (a run the scheduler interrupted says nothing of the loop).
func loops(d time.Duration) int {
	const n = 1 << 20
	best := time.Duration(1 << 62)
	for r := 0; r < 9; r++ {
		start := time.Now()
		sink += spin(n)
		if el := time.Since(start); el < best {
			best = el
		}
	}
	return int(float64(n) * float64(d) / float64(best))
}

// schedstat is this thread's run-queue wait so far, in ns.
func schedstat() int64 {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		fixture.Fatal(err)
	}
	runq, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	return runq
}

// threadCPU is this thread's CPU time so far, in ns: one raw system call
// (no file to read), so that little of it is its own.
func threadCPU() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime,
		uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		fixture.Fatal(e)
	}
	return ts.Nano()
}

type own struct {
	Calls int   `json:"calls"`
	CPU   int64 `json:"cpu_ns"`
	Runq  int64 `json:"runq_ns"`
	Wall  int64 `json:"wall_ns"`
}

// run calls f -calls times under name; measured: its own figures read
// around each call, kept for the calls that stayed on one thread.
func run(name string, f func(), measured bool, owns map[string]*own) {
	o := &own{}
	owns[name] = o
	for i := 0; i < fixture.Opts.Calls; i++ {
		var c0, r0 int64
		// A time slice of its own: Go preempts a goroutine that ran
		// 10 ms, calls back to back or not, and from Go 1.22 on it may
		// resume on another thread (a call parked by Go).
		runtime.Gosched()
		tid := syscall.Gettid()
		before := time.Now()
		if measured {
			r0 = schedstat()
			c0 = threadCPU()
		}
		start := time.Now()
		f()
		el := time.Since(start)
		if measured && syscall.Gettid() == tid {
			c1 := threadCPU()
			r1 := schedstat()
			if syscall.Gettid() == tid {
				o.Calls++
				o.CPU += c1 - c0
				o.Runq += r1 - r0
				o.Wall += int64(time.Since(before))
			}
		}
		fixture.Record(name, el)
	}
}

// first: a session of its own, its autogroup and itself at nice -20.
func first() {
	_, _ = syscall.Setsid()
	if err := os.WriteFile("/proc/self/autogroup", []byte("-20"), 0); err != nil &&
		!os.IsNotExist(err) {
		fixture.Fatal(err)
	}
	// Per thread on Linux: each one now, and those made later inherit it.
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		fixture.Fatal(err)
	}
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, -20); err != nil {
			fixture.Fatal(err)
		}
	}
}

// loaders starts n processes that spin until killed.
func loaders(n int) []*exec.Cmd {
	var cmds []*exec.Cmd
	for i := 0; i < n; i++ {
		c := exec.Command("/proc/self/exe", "-hog")
		if err := c.Start(); err != nil {
			fixture.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	// Until they spin: each has run a while.
	time.Sleep(300 * time.Millisecond)
	return cmds
}

func main() {
	fixture.ParseFlags(100, 1)
	if *hog {
		for {
			sink += spin(1 << 20)
		}
	}
	if *prio {
		first()
	}
	if *hogs <= 0 {
		*hogs = 2 * runtime.NumCPU()
	}
	nDur, nCdur = loops(*dur), loops(*cdur)
	fixture.WaitStart()
	owns := map[string]*own{}
	run("main.Busy", func() { sink += Busy() }, true, owns)
	run("main.Syscall", Syscall, true, owns)
	run("main.Sleep", Sleep, false, owns)
	cmds := loaders(*hogs)
	procs := runtime.GOMAXPROCS(1)
	run("main.Contended", func() { sink += Contended() }, true, owns)
	runtime.GOMAXPROCS(procs)
	for _, c := range cmds {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	res := fixture.Result("main.Busy", "main.Busy", "main.Syscall", "main.Sleep", "main.Contended")
	res["own"] = owns
	fixture.Finish(res)
}
