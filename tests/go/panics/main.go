// panics: main.MayPanic panics when i%4 == 1; the caller recovers. A panic
// unwinds MayPanic without reaching a RET, so a tracer sees an entry with no
// return: "panics" such calls, "returns" the others, "calls" both.
package main

import (
	"sync/atomic"
	"time"

	"fixture"
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
	fixture.ParseFlags(100, 4)
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		fixture.Timed("main.MayPanic", func() { call(i) })
	})
	r := fixture.Result("main.MayPanic", "main.MayPanic")
	r["panics"], r["returns"] = panics, returns
	fixture.Finish(r)
}
