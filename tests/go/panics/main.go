// panics: main.MayPanic panics when i%4 == 1; the caller recovers. A panic
// unwinds MayPanic without reaching a RET, so a tracer sees an entry with no
// return: "panics" such calls, "returns" the others, "calls" both.
package main

import (
	"sync/atomic"
	"time"
)

var panics, returns int64

//go:noinline
func MayPanic(i int) int {
	time.Sleep(2 * time.Millisecond)
	if i%4 == 1 {
		panic(i)
	}
	return i * 2
}

func call(i int) {
	defer func() {
		if recover() != nil {
			atomic.AddInt64(&panics, 1)
		}
	}()
	MayPanic(i)
	atomic.AddInt64(&returns, 1)
}

func main() {
	parseFlags(100, 4)
	waitStart()
	runWorkers(func(i int) {
		timed("main.MayPanic", func() { call(i) })
	})
	r := result("main.MayPanic", "main.MayPanic")
	r["panics"], r["returns"] = panics, returns
	finish(r)
}
