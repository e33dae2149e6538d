// estload: a steady or bursty load on one function, counted exactly, for
// the overhead budget's estimates (tests/bench/estimate.sh).  main.Work is a
// fixed amount of CPU work a call (-work, default 100us: a busy loop of a
// number of iterations calibrated at start-up, not a sleep), called by
// -workers goroutines (default 8), each counting its own calls (a local
// counter per goroutine, summed once they stop).  After SIGUSR1, for
// -duration (default 8 s) of the program's own clock:
//
//	-load steady   every goroutine calls Work back to back
//	-load bursty   all goroutines call Work back to back for -burst (300ms),
//	               then all pause for -pause (700ms), and again
//
// The bursts are on a common clock (from SIGUSR1), so the goroutines start
// and pause together.  Then it waits -settle (1.5 s) and writes to -out
// {"calls": N, "per_goroutine": [...], "seconds": S, "iterations": I,
// "work_ns": W, "load": L, "bursts": B}: N the calls of main.Work, S the
// seconds from SIGUSR1 until the last goroutine stopped, I the iterations a
// call and W what a call took at calibration.  -calls is not used.
package main

import (
	"flag"
	"sync"
	"time"

	"fixture"
)

// Work is a serial chain of multiplies, n of them: its time is n times one
// multiply-add whatever the CPU's width.
//
//go:noinline
func Work(n int) int {
	x := n
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	return x
}

var sink int

// calibrate returns the iterations of Work that take about d, from the
// fastest of several timed runs (the others were interrupted).
func calibrate(d time.Duration) (int, time.Duration) {
	const probe = 1 << 20
	best := time.Duration(1 << 62)
	for r := 0; r < 7; r++ {
		t0 := time.Now()
		sink += Work(probe)
		if e := time.Since(t0); e < best {
			best = e
		}
	}
	n := int(float64(probe) * float64(d) / float64(best))
	if n < 1 {
		n = 1
	}
	// What a call of that many iterations takes, fastest of a few.
	one := time.Duration(1 << 62)
	for r := 0; r < 20; r++ {
		t0 := time.Now()
		sink += Work(n)
		if e := time.Since(t0); e < one {
			one = e
		}
	}
	return n, one
}

func main() {
	work := flag.Duration("work", 100*time.Microsecond, "CPU work a call of main.Work")
	load := flag.String("load", "steady", "steady or bursty")
	dur := flag.Duration("duration", 8*time.Second, "how long the load runs")
	burst := flag.Duration("burst", 300*time.Millisecond, "bursty: calls back to back for this long")
	pause := flag.Duration("pause", 700*time.Millisecond, "bursty: then no calls for this long")
	settle := flag.Duration("settle", 1500*time.Millisecond, "wait after the load before writing the result")
	fixture.ParseFlags(0, 8)
	switch *load {
	case "steady":
		*burst, *pause = *dur, 0
	case "bursty":
		if *burst <= 0 || *pause < 0 {
			fixture.Fatal(errorString("-burst must be > 0 and -pause >= 0"))
		}
	default:
		fixture.Fatal(errorString("-load must be steady or bursty"))
	}
	iters, one := calibrate(*work)
	fixture.WaitStart()

	period := *burst + *pause
	w := fixture.Opts.Workers
	counts := make([]int64, w)
	accs := make([]int, w)
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < w; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			n, acc := int64(0), 0
			for {
				e := time.Since(start)
				if e >= *dur {
					break
				}
				if in := e % period; in >= *burst {
					// Paused: sleep to the next burst (or the end).
					next := e - in + period
					if next > *dur {
						next = *dur
					}
					time.Sleep(next - e)
					continue
				}
				acc += Work(iters)
				n++
			}
			counts[g] = n
			accs[g] = acc
		}(g)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	var calls int64
	for g := range counts {
		calls += counts[g]
		sink += accs[g]
	}
	bursts := int((*dur + period - 1) / period)
	// Let retop see the last returns before the result says "done".
	time.Sleep(*settle)
	fixture.Finish(map[string]interface{}{
		"calls": calls, "per_goroutine": counts, "seconds": secs,
		"iterations": iters, "work_ns": one.Nanoseconds(), "load": *load,
		"bursts": bursts, "workers": w, "sink": sink & 1,
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }
