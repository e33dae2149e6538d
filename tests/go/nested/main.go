// nested: main.Outer times its own work with the Go clock and calls traced
// functions outside that interval, as a server's request-timing wrapper
// calls an observer after its timer stopped.  Each call of Outer calls
// InnerLeaf (a leaf: no stack check, its probe on its first instruction)
// and InnerSplit (a stack-check prologue: its probe on the prologue's
// jump), -inner times each, half before its clock starts and half after it
// stopped; their own work is a few nanoseconds.  Traced together
// (main.Outer and main.Inner*), retop's duration of Outer holds the inner
// probes' traps; the fixture's clock does not.  Between calls a worker
// sleeps -pause, so that the probe hits stay inside the default budget.
package main

import (
	"flag"
	"time"

	"fixture"
)

var (
	spin  = flag.Duration("spin", 4*time.Millisecond, "work of one call of main.Outer")
	inner = flag.Int("inner", 2, "calls of each inner function per call of main.Outer")
	pause = flag.Duration("pause", 4*time.Millisecond, "sleep between calls of main.Outer")
	sink  int
)

//go:noinline
func InnerLeaf(x int) int {
	return x*3 + 1
}

//go:noinline
func next(x int) int {
	return x + 7
}

//go:noinline
func InnerSplit(x int) int {
	return next(x) * 5
}

//go:noinline
func Outer(i int) int {
	r := 0
	for k := 0; k < *inner/2; k++ {
		r += InnerLeaf(i + k)
		r += InnerSplit(i + k)
	}
	start := time.Now()
	n := 0
	for time.Since(start) < *spin {
		n++
	}
	fixture.Record("main.Outer", time.Since(start))
	for k := *inner / 2; k < *inner; k++ {
		r += InnerLeaf(i + k)
		r += InnerSplit(i + k)
	}
	return r + n
}

func main() {
	fixture.ParseFlags(400, 1)
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		sink += Outer(i)
		time.Sleep(*pause)
	})
	fixture.Finish(fixture.Result("main.Outer", "main.Outer"))
}
