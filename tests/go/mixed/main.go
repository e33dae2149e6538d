// mixed: three functions far apart in cost, traced together, for the
// overhead budget at its defaults. main.Hot is a few operations called in a
// tight loop by -hot goroutines (far over any budget); main.Slow sleeps
// 200 ms, -calls times over -workers goroutines (a handful of hits);
// main.Burst is ~200 ns of work, called -burst times back to back by one
// goroutine after -quiet of silence (a short spike). After SIGUSR1 all three
// run; once Slow and Burst are done, Hot goes on for -hot-after, stops, and
// 0.5 s later the result is written: per_func calls of all three (Hot's
// counted exactly, one counter per goroutine, summed), and the mean and p50
// of Slow and Burst by the program's own clock.
// With -loop Hot never stops: the result (without main.Hot, whose count is
// still moving) is written once Slow and Burst are done.
package main

import (
	"flag"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"fixture"
)

//go:noinline
func Hot(x int) int { return x*7 + 3 }

//go:noinline
func Slow() { time.Sleep(200 * time.Millisecond) }

// Burst is a serial chain of multiplies: a few hundred ns whatever the CPU.
//
//go:noinline
func Burst(x int) int {
	for i := 0; i < 200; i++ {
		x = x*31 + i
	}
	return x
}

// timer keeps each call's duration by the program's clock (time.Now around
// the call, as retop's probes see it from the outside).
type timer struct {
	mu sync.Mutex
	d  []time.Duration
}

func (t *timer) call(f func()) {
	start := time.Now()
	f()
	d := time.Since(start)
	t.mu.Lock()
	t.d = append(t.d, d)
	t.mu.Unlock()
}

// summary: calls, mean, nearest-rank p50 and max, as every fixture writes.
func (t *timer) summary() map[string]int64 {
	ds := t.d
	s := map[string]int64{"calls": int64(len(ds))}
	if len(ds) == 0 {
		return s
	}
	sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	s["mean_ns"] = int64(sum) / int64(len(ds))
	s["p50_ns"] = int64(ds[(len(ds)*50+99)/100-1])
	s["max_ns"] = int64(ds[len(ds)-1])
	return s
}

var sink int64

func main() {
	hotG := flag.Int("hot", 8, "goroutines calling main.Hot in a tight loop")
	burst := flag.Int("burst", 5000, "main.Burst calls made back to back")
	quiet := flag.Duration("quiet", time.Second, "wait before the burst")
	hotAfter := flag.Duration("hot-after", time.Second, "how long main.Hot goes on once Slow and Burst are done")
	fixture.ParseFlags(12, 3) // -calls and -workers are main.Slow's
	// -loop is the hot loop's alone: Slow (through RunWorkers) still ends.
	forever := fixture.Opts.Loop
	fixture.Opts.Loop = false
	fixture.WaitStart()

	// The hot loop: a local counter per goroutine (a shared atomic would
	// make the loop a cache-line fight), published once it stops.
	var stop atomic.Bool
	var hotWG sync.WaitGroup
	counts := make([]int64, *hotG)
	for g := range counts {
		hotWG.Add(1)
		go func(g int) {
			defer hotWG.Done()
			n, acc := int64(0), 0
			for !stop.Load() {
				acc += Hot(int(n))
				n++
			}
			counts[g] = n
			atomic.AddInt64(&sink, int64(acc))
		}(g)
	}

	var slow, bursts timer
	var work sync.WaitGroup
	work.Add(2)
	go func() {
		defer work.Done()
		fixture.RunWorkers(func(int) { slow.call(Slow) })
	}()
	go func() {
		defer work.Done()
		time.Sleep(*quiet)
		acc := 0
		for i := 0; i < *burst; i++ {
			bursts.call(func() { acc += Burst(i) })
		}
		atomic.AddInt64(&sink, int64(acc))
	}()
	work.Wait()

	perFunc := map[string]map[string]int64{"main.Slow": slow.summary(), "main.Burst": bursts.summary()}
	if !forever {
		time.Sleep(*hotAfter)
		stop.Store(true)
		hotWG.Wait()
		var hot int64
		for _, n := range counts {
			hot += n
		}
		perFunc["main.Hot"] = map[string]int64{"calls": hot}
		// Let retop see the last returns before the result says "done".
		time.Sleep(500 * time.Millisecond)
	}
	fixture.Finish(map[string]interface{}{
		"calls": perFunc["main.Slow"]["calls"], "mean_ns": perFunc["main.Slow"]["mean_ns"],
		"per_func": perFunc,
	})
}
