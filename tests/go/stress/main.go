// stress: the load and the endings a tracer must stay exact under. -mode:
//
//	hold    -rounds R of -workers W goroutines, each Recurse(-depth D),
//	        all held at the bottom until the W are there: W*(D+1) calls of
//	        main.Recurse in flight at once, R*W*(D+1) calls in all.
//	        -pause FILE: in the first round, with every call in flight,
//	        create FILE and wait for it to be removed.
//	unwind  -workers W goroutines each for three functions, each diving
//	        -depth D deep, then: main.PanicExit panics at the bottom, is
//	        recovered above the dive, and the goroutine exits;
//	        main.PanicLive the same, then the goroutine calls PanicLive(-1)
//	        (one call that returns) and blocks forever; main.GoexitDive
//	        calls runtime.Goexit at the bottom. W*(D+1) frames of each
//	        never return.
//	exit    -workers W goroutines block in main.Hold; then the process
//	        exits (after -exit-after) with those W calls in flight.
//	steady  -workers W goroutines call main.Work (sleeps 200us) in a loop,
//	        forever (-loop) or -calls times.
//	long    -workers W goroutines make -calls calls of main.Long in all,
//	        each sleeping -long (3 s), timed by the fixture around the call.
package main

import (
	"flag"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"fixture"
)

var recursions, works int64

var pause = flag.String("pause", "", "-mode hold: create `FILE` with every call in flight, go on once it is removed")

//go:noinline
func Recurse(d int, b *barrier) int {
	atomic.AddInt64(&recursions, 1)
	var buf [128]byte
	buf[d%len(buf)] = byte(d)
	if d == 0 {
		b.wait()
		return int(buf[0])
	}
	return Recurse(d-1, b) + int(buf[d%len(buf)])
}

// barrier releases each group of n arrivals together.
type barrier struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
	in   int
	gen  int
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.gen
	b.in++
	if b.in == b.n {
		if b.gen == 0 && *pause != "" {
			// Every call in flight: let the test look, then go on.
			if err := os.WriteFile(*pause, nil, 0o644); err != nil {
				fixture.Fatal(err)
			}
			for {
				if _, err := os.Stat(*pause); os.IsNotExist(err) {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		b.in, b.gen = 0, b.gen+1
		b.cond.Broadcast()
		return
	}
	for gen == b.gen {
		b.cond.Wait()
	}
}

func hold(depth, rounds int) map[string]interface{} {
	w := fixture.Opts.Workers
	b := newBarrier(w)
	var wg sync.WaitGroup
	for r := 0; r < rounds; r++ {
		for i := 0; i < w; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); Recurse(depth, b) }()
		}
		wg.Wait()
	}
	return map[string]interface{}{
		"calls": recursions, "in_flight_peak": w * (depth + 1),
		"per_func": map[string]map[string]int64{"main.Recurse": {"calls": recursions}},
	}
}

//go:noinline
func PanicExit(d int) int {
	if d == 0 {
		panic("unwind")
	}
	return PanicExit(d-1) + 1
}

//go:noinline
func PanicLive(d int) int {
	if d < 0 {
		return 0
	}
	if d == 0 {
		panic("unwind")
	}
	return PanicLive(d-1) + 1
}

//go:noinline
func GoexitDive(d int) int {
	if d == 0 {
		runtime.Goexit()
	}
	return GoexitDive(d-1) + 1
}

func recovered(f func()) {
	defer func() { recover() }()
	f()
}

func unwind(depth int) map[string]interface{} {
	w := fixture.Opts.Workers
	var wg, live sync.WaitGroup
	for i := 0; i < w; i++ {
		wg.Add(2)
		live.Add(1)
		go func() { defer wg.Done(); recovered(func() { PanicExit(depth) }) }()
		go func() { defer wg.Done(); GoexitDive(depth) }()
		go func() {
			recovered(func() { PanicLive(depth) })
			PanicLive(-1)
			live.Done()
			select {}
		}()
	}
	wg.Wait()
	live.Wait()
	n := int64(w * (depth + 1))
	return map[string]interface{}{
		"unwound": n,
		"per_func": map[string]map[string]int64{
			"main.PanicExit": {"calls": 0}, "main.GoexitDive": {"calls": 0},
			"main.PanicLive": {"calls": int64(w)},
		},
	}
}

var held int64

//go:noinline
func Hold(c chan struct{}) {
	atomic.AddInt64(&held, 1)
	<-c
}

//go:noinline
func Work() {
	time.Sleep(200 * time.Microsecond)
	atomic.AddInt64(&works, 1)
}

//go:noinline
func Long(d time.Duration) {
	time.Sleep(d)
}

func main() {
	mode := flag.String("mode", "hold", "hold, unwind, exit, steady or long")
	long := flag.Duration("long", 3*time.Second, "-mode long: how long a call takes")
	depth := flag.Int("depth", 1000, "recursion depth")
	rounds := flag.Int("rounds", 3, "rounds of -mode hold")
	exitAfter := flag.Duration("exit-after", time.Second, "-mode exit: how long the calls stay in flight")
	fixture.ParseFlags(0, 100)
	fixture.WaitStart()
	switch *mode {
	case "hold":
		fixture.Finish(hold(*depth, *rounds))
	case "unwind":
		fixture.Finish(unwind(*depth))
	case "exit":
		c := make(chan struct{})
		for i := 0; i < fixture.Opts.Workers; i++ {
			go Hold(c)
		}
		for atomic.LoadInt64(&held) < int64(fixture.Opts.Workers) {
			time.Sleep(time.Millisecond)
		}
		// The result first (the calls are in flight), then the exit.
		go func() { time.Sleep(*exitAfter); os.Exit(0) }()
		fixture.Finish(map[string]interface{}{"held": held})
	case "steady":
		// -loop never reaches Finish: SIGTERM and SIGINT end it here.
		go func() {
			for s := range fixture.Signals {
				if s != syscall.SIGUSR1 {
					os.Exit(0)
				}
			}
		}()
		fixture.RunWorkers(func(int) { Work() })
		fixture.Finish(map[string]interface{}{"calls": works})
	case "long":
		fixture.RunWorkers(func(int) {
			fixture.Timed("main.Long", func() { Long(*long) })
		})
		fixture.Finish(fixture.Result("main.Long", "main.Long"))
	default:
		fixture.Fatal(os.ErrInvalid)
	}
}
