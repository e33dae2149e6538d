// tightloop: main.Tiny is a few arithmetic operations, called as fast as
// possible from one goroutine: elapsed_ns/calls is the cost of a call, with
// or without probes. Calls are not timed one by one (time.Now costs more).
package main

import "time"

//go:noinline
func Tiny(x int) int { return (x*3 + 7) ^ (x >> 2) }

var sink int

func main() {
	parseFlags(200000, 1)
	waitStart()
	n := opts.calls
	start := time.Now()
	for i := 0; opts.loop || i < n; i++ {
		sink += Tiny(i)
	}
	elapsed := time.Since(start).Nanoseconds()
	var perCall int64
	if n > 0 {
		perCall = elapsed / int64(n)
	}
	finish(map[string]interface{}{
		"calls": n, "elapsed_ns": elapsed, "mean_ns": perCall,
		"per_func": map[string]map[string]int64{"main.Tiny": {"calls": int64(n), "mean_ns": perCall}},
	})
}
