// recurse: one call is Recurse(1000), which makes 1001 calls of main.Recurse
// with a 128-byte array in every frame. Each call starts on a fresh goroutine
// (8 KB stack), so the stack is grown, that is copied, during the recursion
// every time, with entries of the outer frames still in flight.
package main

import (
	"sync/atomic"

	"fixture"
)

const depth = 1000

var recursions int64

//go:noinline
func Recurse(d int) int {
	atomic.AddInt64(&recursions, 1)
	var buf [128]byte
	buf[d%len(buf)] = byte(d)
	if d == 0 {
		return int(buf[0])
	}
	return Recurse(d-1) + int(buf[d%len(buf)])
}

var sink int64

func main() {
	fixture.ParseFlags(20, 8)
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		done := make(chan int)
		go fixture.Timed("main.Recurse(1000)", func() { done <- Recurse(depth) })
		atomic.AddInt64(&sink, int64(<-done))
	})
	// Top-level fields describe Recurse(1000); only counts exist per frame.
	r := fixture.Result("main.Recurse(1000)")
	r["per_func"] = map[string]map[string]int64{"main.Recurse": {"calls": recursions}}
	r["depth"] = depth
	r["recurse_calls"] = recursions
	fixture.Finish(r)
}
