// callers: one function, main.Work, called from two callers with different
// latencies (main.FastPath spins 4 ms in it, main.SlowPath 12 ms). Each
// caller times its own call of Work with the Go clock, so a test can check
// retop's latency by caller against the program's own numbers.  Last, one
// planted outlier: main.Planted calls Work for 500 ms on a goroutine whose
// id it reads from runtime.Stack, and reports it with its arguments and
// its result.
package main

import (
	"bytes"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"fixture"
)

const (
	fastSpin = 4000 // us
	slowSpin = 12000
)

var (
	mu    sync.Mutex
	spent = map[string][]time.Duration{}
	sink  int
)

//go:noinline
func Work(us int, tag string) int {
	n, spin := 0, time.Duration(us)*time.Microsecond
	for start := time.Now(); time.Since(start) < spin; n++ {
	}
	return n + len(tag)
}

func record(name string, d time.Duration) {
	mu.Lock()
	spent[name] = append(spent[name], d)
	mu.Unlock()
}

//go:noinline
func FastPath() {
	start := time.Now()
	r := Work(fastSpin, "fast")
	record("main.FastPath", time.Since(start))
	sink += r & 1
}

//go:noinline
func SlowPath() {
	start := time.Now()
	r := Work(slowSpin, "slow")
	record("main.SlowPath", time.Since(start))
	sink += r & 1
}

// goid is the "goroutine N" of runtime.Stack's first line.
func goid() int64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		return -1
	}
	id, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return -1
	}
	return id
}

//go:noinline
func Planted() map[string]interface{} {
	// A hostile string in its first 64 bytes: terminal escapes that would
	// set the clipboard and the title, a newline that would forge a line,
	// a carriage return and a C1 control (CSI); then more than retop reads.
	const spin, tag = 500000, "planted: \x1b]52;c;Zm9yZ2Vk\x07\x1b]0;x\x07\nmain.Fake 9\r\u009b and more bytes past the 64 retop reads"
	id := goid()
	start := time.Now()
	r := Work(spin, tag)
	d := time.Since(start)
	sink += r & 1
	return map[string]interface{}{"goid": id, "caller": "main.Planted", "duration_ns": int64(d),
		"start": float64(start.UnixNano()) / 1e9, "spin": int64(spin) * 1000, "us": spin, "tag": tag,
		"result": r}
}

func summary(name string) map[string]int64 {
	mu.Lock()
	defer mu.Unlock()
	var sum time.Duration
	for _, d := range spent[name] {
		sum += d
	}
	s := map[string]int64{"calls": int64(len(spent[name]))}
	for _, d := range spent[name] {
		if d >= 10*time.Millisecond {
			s["over_10ms"]++
		}
	}
	if len(spent[name]) > 0 {
		s["mean_ns"] = int64(sum) / int64(len(spent[name]))
		// The median, and what calls stretched past one and a half of it
		// (a preemption) added over it: the program's clock holds the
		// time around the call, where retop's traps may be preempted
		// outside the window they time.
		d := append([]time.Duration(nil), spent[name]...)
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		p50 := d[(len(d)-1)/2]
		s["p50_ns"] = int64(p50)
		for _, v := range d {
			if v > p50+p50/2 {
				s["stretch_ns"] += int64(v - p50)
			}
		}
	}
	return s
}

func main() {
	fixture.ParseFlags(60, 1)
	fixture.WaitStart()
	// Index i decides the caller: two thirds fast, one third slow.
	fixture.RunWorkers(func(i int) {
		if i%3 == 2 {
			SlowPath()
		} else {
			FastPath()
		}
	})
	f, s := summary("main.FastPath"), summary("main.SlowPath")
	outlier := make(chan map[string]interface{})
	go func() { outlier <- Planted() }()
	fixture.Finish(map[string]interface{}{
		"calls":    f["calls"] + s["calls"] + 1,
		"per_func": map[string]map[string]int64{"main.Work": {"calls": f["calls"] + s["calls"] + 1}},
		"callers":  map[string]map[string]int64{"main.FastPath": f, "main.SlowPath": s},
		"outlier":  <-outlier,
		// Calls of Work of 10 ms or more, as the callers timed them: the
		// slow path's and the planted one.
		"over_10ms": f["over_10ms"] + s["over_10ms"] + 1,
	})
}
