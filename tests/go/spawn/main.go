// spawn: a goroutine-heavy program. After SIGUSR1, -workers goroutines
// (default 2) each start and end goroutines as fast as they can, -batch at a
// time (go func(){ tiny work; wg.Done() }(), then wg.Wait()), for -duration
// (default 3 s) of the program's own clock. It then writes
// {"goroutines": N, "seconds": S, "rate": N/S} to -out: the goroutines
// completed, the seconds from SIGUSR1 until the last worker stopped, and
// goroutines per second. With -loop it spawns until SIGTERM and writes
// nothing. -calls is not used.
//
// main.Cold is never called in the measured phase (only -cold N times after
// it, 0 by default): a tracer that probes it alone should cost nothing,
// whatever else it watches to keep its books (goroutine exits).
package main

import (
	"flag"
	"os"
	"sync"
	"syscall"
	"time"

	"fixture"
)

// Cold is never called while the goroutines are counted.
//
//go:noinline
func Cold(x int) int { return x*7 + 3 }

//go:noinline
func tiny(x int) int { return (x*3 + 7) ^ (x >> 2) }

var sink int

// worker spawns batches of goroutines until stop (or forever when loop is
// set) and returns how many completed.
func worker(batch int, start time.Time, d time.Duration, loop bool) int64 {
	out := make([]int, batch)
	var wg sync.WaitGroup
	var n int64
	for loop || time.Since(start) < d {
		wg.Add(batch)
		for j := 0; j < batch; j++ {
			go func(j int) {
				out[j] = tiny(j)
				wg.Done()
			}(j)
		}
		wg.Wait()
		n += int64(batch)
	}
	return n
}

func main() {
	dur := flag.Duration("duration", 3*time.Second, "how long to spawn goroutines")
	batch := flag.Int("batch", 64, "goroutines a worker starts before waiting for them")
	cold := flag.Int("cold", 0, "call main.Cold `N` times after the measured phase")
	fixture.ParseFlags(0, 2)
	if *batch < 1 {
		*batch = 1
	}
	fixture.WaitStart()
	w := fixture.Opts.Workers
	counts := make([]int64, w)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			counts[i] = worker(*batch, start, *dur, fixture.Opts.Loop)
		}(i)
	}
	if fixture.Opts.Loop {
		for s := range fixture.Signals {
			if s != syscall.SIGUSR1 {
				os.Exit(0)
			}
		}
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	var total int64
	for _, c := range counts {
		total += c
	}
	for i := 0; i < *cold; i++ {
		sink += Cold(i)
	}
	fixture.Finish(map[string]interface{}{
		"goroutines": total, "seconds": secs, "rate": float64(total) / secs,
	})
}
