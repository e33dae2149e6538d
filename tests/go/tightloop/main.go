// tightloop: main.Tiny is a few arithmetic operations, called as fast as
// possible from one goroutine: elapsed_ns/calls is the cost of a call, with
// or without probes. Calls are not timed one by one (time.Now costs more).
package main

import (
	"time"

	"fixture"
)

//go:noinline
func Tiny(x int) int { return (x*3 + 7) ^ (x >> 2) }

var sink int

func main() {
	fixture.ParseFlags(200000, 1)
	fixture.WaitStart()
	n := fixture.Opts.Calls
	start := time.Now()
	for i := 0; fixture.Opts.Loop || i < n; i++ {
		sink += Tiny(i)
	}
	elapsed := time.Since(start).Nanoseconds()
	var perCall int64
	if n > 0 {
		perCall = elapsed / int64(n)
	}
	fixture.Finish(map[string]interface{}{
		"calls": n, "elapsed_ns": elapsed, "mean_ns": perCall,
		"per_func": map[string]map[string]int64{"main.Tiny": {"calls": int64(n), "mean_ns": perCall}},
	})
}
