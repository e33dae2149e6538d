// change: two functions that work for a set time each call, one of which a
// second build makes slower, for retop's comparison of two periods
// (tests/integration/change-deploy.sh, change-window.sh).  main.Slower
// spins for -slow times the build's slowFactor (1; the change-slow build
// sets 2 with -ldflags -X), main.Steady for -steady in every build; each
// is called by a goroutine of its own, -pause apart.  SIGUSR1 doubles
// main.Slower's time from then on (a second phase).  SIGTERM or SIGINT
// writes -out and exits:
//
//	{"factor": F, "phases": [{"main.Slower": {"calls", "p50_ns", "p99_ns"},
//	                          "main.Steady": {...}}, ...]}
//
// Each duration is measured inside the function, from its first line to
// its last, so that the probes' traps around it (which retop takes out)
// are not in it.  Spinning, not sleeping: a timer's wake-up varies with
// the machine's load, a spin to a deadline by far less.
package main

import (
	"flag"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"fixture"
)

// slowFactor is main.Slower's time over -slow in this build.
var slowFactor = "1"

//go:noinline
func Slower(d time.Duration) time.Duration {
	t0 := time.Now()
	for time.Since(t0) < d {
	}
	return time.Since(t0)
}

//go:noinline
func Steady(d time.Duration) time.Duration {
	t0 := time.Now()
	for time.Since(t0) < d {
	}
	return time.Since(t0)
}

type stat struct {
	Calls int   `json:"calls"`
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
}

var (
	mu    sync.Mutex
	phase int32
	// durations by phase, then by function
	durs = []map[string][]int64{{}, {}}
)

func record(name string, d time.Duration) {
	p := atomic.LoadInt32(&phase)
	mu.Lock()
	durs[p][name] = append(durs[p][name], int64(d))
	mu.Unlock()
}

// summary uses nearest-rank percentiles, as the fixtures' protocol does.
func summary(ds []int64) stat {
	s := stat{Calls: len(ds)}
	if len(ds) == 0 {
		return s
	}
	ds = append([]int64(nil), ds...)
	sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
	rank := func(p int) int64 { return ds[(len(ds)*p+99)/100-1] }
	s.P50Ns, s.P99Ns = rank(50), rank(99)
	return s
}

func loop(name string, pause time.Duration, call func() time.Duration) {
	for {
		record(name, call())
		time.Sleep(pause)
	}
}

func main() {
	slow := flag.Duration("slow", 100*time.Microsecond, "main.Slower's time a call, before the build's factor")
	steady := flag.Duration("steady", 150*time.Microsecond, "main.Steady's time a call")
	pause := flag.Duration("pause", time.Millisecond, "the pause between two calls of a function")
	fixture.ParseFlags(0, 1)
	factor, err := strconv.ParseFloat(slowFactor, 64)
	if err != nil {
		fixture.Fatal(err)
	}
	slowNs := int64(float64(*slow) * factor)
	go loop("main.Slower", *pause, func() time.Duration {
		return Slower(time.Duration(atomic.LoadInt64(&slowNs)))
	})
	go loop("main.Steady", *pause, func() time.Duration { return Steady(*steady) })
	fixture.TouchReady()
	for s := range fixture.Signals {
		if s == syscall.SIGUSR1 {
			atomic.StoreInt64(&slowNs, 2*atomic.LoadInt64(&slowNs))
			atomic.StoreInt32(&phase, 1)
			continue
		}
		mu.Lock()
		out := map[string]interface{}{"factor": factor}
		var phases []map[string]stat
		for _, m := range durs {
			phases = append(phases, map[string]stat{
				"main.Slower": summary(m["main.Slower"]), "main.Steady": summary(m["main.Steady"])})
		}
		out["phases"] = phases
		mu.Unlock()
		if fixture.Opts.Out != "" {
			fixture.WriteResult(fixture.Opts.Out, out)
		}
		os.Exit(0)
	}
}
