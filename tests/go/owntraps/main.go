// owntraps: functions of a few nanoseconds, ~5 us and ~50 us, each as a
// frameless leaf (no stack check: the entry probe of the loops sits on
// their first jump, which the kernel emulates; LeafTiny has none, its
// probe sits on its first instruction, which the kernel single-steps) and
// as a framed function (a stack-check prologue: the probe sits on the
// prologue's jump, which the kernel emulates).  The ground truth is the
// program's untraced clock, read at the same moments: each function has
// an untraced twin (the same code under another name, never traced),
// called beside it in every round and timed with the Go clock around it.
// A clock read before the attach, on a VM whose speed drifts from second
// to second, was 11% off the same calls a few seconds later.  Before it
// announces readiness (before retop attaches) it makes -calls rounds; after
// SIGUSR1 (retop attached) -calls rounds again, the twins timed.  The CPU
// time of both is measured: their difference is what the probes cost the
// program.  Rounds are paced by -pause, so that the probe hits stay far
// inside the default budget, and each round starts with the next function
// (the first call after a sleep finds cold caches), its twin first every
// other round.  It writes the twins' timings under the traced functions'
// names (per_func), how much longer the traced calls took than their twins
// in all (traced_more_ns: what the probes cost the program, measured side
// by side), untraced_cpu_ns and traced_cpu_ns, and idles.
package main

import (
	"flag"
	"syscall"
	"time"

	"fixture"
)

var (
	pause = flag.Duration("pause", 2*time.Millisecond, "sleep between rounds")
	// Loop counts for ~5 us and ~50 us, set at start from the machine's
	// speed; variables, so the compiler cannot fold the loops.
	n5, n50 int
	sink    int
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
func LeafTiny(x int) int {
	return x ^ 0x5a
}

//go:noinline
func Leaf5us(x int) int {
	y := x
	for i := 0; i < n5; i++ {
		y = y*31 + i
	}
	return y
}

//go:noinline
func Leaf50us(x int) int {
	y := x
	for i := 0; i < n50; i++ {
		y = y*31 + i
	}
	return y
}

//go:noinline
func FramedTiny(x int) int {
	return tinyHelper(x) + 1
}

//go:noinline
func tinyHelper(x int) int {
	return x ^ 0x33
}

//go:noinline
func Framed5us(x int) int {
	return spin(n5) + x
}

//go:noinline
func Framed50us(x int) int {
	return spin(n50) + x
}

// The untraced twins, line for line.

//go:noinline
func twinLeafTiny(x int) int {
	return x ^ 0x5a
}

//go:noinline
func twinLeaf5us(x int) int {
	y := x
	for i := 0; i < n5; i++ {
		y = y*31 + i
	}
	return y
}

//go:noinline
func twinLeaf50us(x int) int {
	y := x
	for i := 0; i < n50; i++ {
		y = y*31 + i
	}
	return y
}

//go:noinline
func twinFramedTiny(x int) int {
	return tinyHelper(x) + 1
}

//go:noinline
func twinFramed5us(x int) int {
	return spin(n5) + x
}

//go:noinline
func twinFramed50us(x int) int {
	return spin(n50) + x
}

var funcs = []struct {
	name    string
	f, twin func(int) int
}{
	{"main.LeafTiny", LeafTiny, twinLeafTiny}, {"main.Leaf5us", Leaf5us, twinLeaf5us},
	{"main.Leaf50us", Leaf50us, twinLeaf50us}, {"main.FramedTiny", FramedTiny, twinFramedTiny},
	{"main.Framed5us", Framed5us, twinFramed5us}, {"main.Framed50us", Framed50us, twinFramed50us},
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

// rounds calls every function and its twin once a round, n rounds, each
// round from the next function on, the twin first every other round, each
// call timed; if record, the twin's duration under its function's name,
// and the sum of what the function's calls took more than its twin's.
func rounds(n int, record bool) (more time.Duration) {
	for i := 0; i < n; i++ {
		for k := range funcs {
			fn := funcs[(i+k)%len(funcs)]
			var d, dt time.Duration
			for j := 0; j < 2; j++ {
				start := time.Now()
				if (i+j)%2 == 0 {
					sink += fn.twin(i)
					d = time.Since(start)
				} else {
					sink += fn.f(i)
					dt = time.Since(start)
				}
			}
			if record {
				fixture.Record(fn.name, d)
				more += dt - d
			}
		}
		time.Sleep(*pause)
	}
	return more
}

// cpu is the process's CPU time so far, user and system, in ns.
func cpu() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fixture.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func main() {
	fixture.ParseFlags(1000, 1)
	n5, n50 = loops(5*time.Microsecond), loops(50*time.Microsecond)
	// The CPU time of as many rounds untraced and traced: the difference
	// is what the probes cost the program.  The untraced clock is the
	// twins', beside the traced calls.
	before := cpu()
	rounds(fixture.Opts.Calls, false)
	untracedCPU := cpu() - before
	fixture.WaitStart()
	before = cpu()
	more := rounds(fixture.Opts.Calls, true)
	tracedCPU := cpu() - before
	names := make([]string, len(funcs))
	for i, fn := range funcs {
		names[i] = fn.name
	}
	res := fixture.Result(names[0], names...)
	res["untraced_cpu_ns"], res["traced_cpu_ns"] = untracedCPU, tracedCPU
	res["traced_more_ns"] = more.Nanoseconds()
	fixture.Finish(res)
}
