// fanout: many goroutines in a traced function at once, each calling
// another traced function, and goroutine exits between the two.  Each
// SIGUSR1 runs the next round; round N's counts go to -out FILE as FILE.N.
//
//	round 1  -wide W goroutines each call main.A once; A waits until all W
//	         are in A at once, then calls main.B: W calls of each, W
//	         goroutines' records held by one call each.
//	round 2  -calls C goroutines each call main.A once; while all C are
//	         in A, -churn X other goroutines start and exit (retop watches
//	         exits at runtime.goexit1, which writes a record of each), then
//	         the C calls go on to main.B: C calls of each.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"fixture"
)

var (
	wide           = flag.Int("wide", 100000, "round 1: goroutines in main.A at once")
	churn          = flag.Int("churn", 10000, "round 2: goroutines that start and exit while main.A waits")
	aCalls, bCalls int64
	sink           int64
)

//go:noinline
func B(x int) int {
	atomic.AddInt64(&bCalls, 1)
	return x*3 + 1
}

//go:noinline
func A(x int, in *sync.WaitGroup, release chan struct{}) int {
	atomic.AddInt64(&aCalls, 1)
	in.Done()
	<-release
	return B(x) + 1
}

// round has n goroutines call A, all in A at once; between is run while
// they are there.
func round(n int, between func()) {
	var in, done sync.WaitGroup
	release := make(chan struct{})
	in.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			defer done.Done()
			atomic.AddInt64(&sink, int64(A(i, &in, release)))
		}(i)
	}
	in.Wait()
	between()
	close(release)
	done.Wait()
}

func result(r int) {
	res := map[string]interface{}{
		"round": r,
		"per_func": map[string]map[string]int64{
			"main.A": {"calls": atomic.LoadInt64(&aCalls)},
			"main.B": {"calls": atomic.LoadInt64(&bCalls)},
		},
	}
	// Counts of this round only.
	atomic.StoreInt64(&aCalls, 0)
	atomic.StoreInt64(&bCalls, 0)
	if fixture.Opts.Out != "" {
		fixture.WriteResult(fmt.Sprintf("%s.%d", fixture.Opts.Out, r), res)
	}
}

func main() {
	fixture.ParseFlags(3000, 1)
	fixture.WaitStart()
	round(*wide, func() {})
	result(1)
	for s := range fixture.Signals {
		if s != syscall.SIGUSR1 {
			os.Exit(0)
		}
		break
	}
	round(fixture.Opts.Calls, func() {
		var exited sync.WaitGroup
		exited.Add(*churn)
		for i := 0; i < *churn; i++ {
			go func() { exited.Done() }()
		}
		exited.Wait()
		// Done runs before the goroutine's exit: give the last ones
		// time to reach runtime.goexit1.
		time.Sleep(100 * time.Millisecond)
	})
	result(2)
	for s := range fixture.Signals {
		if s != syscall.SIGUSR1 {
			os.Exit(0)
		}
	}
}
