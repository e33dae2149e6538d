// matrix: main.Work is called exactly -calls times (1000 by default), each
// call timed by the program's own clock, so every cell of the build matrix
// (Go release x build mode) can be checked for exact counts and the mean.
// Work has two RET instructions: even calls leave by one, odd by the other;
// it sleeps 3 ms, so the few microseconds the program's own timing adds
// around each call stay far below the 5% allowed.
package main

import (
	"time"

	"fixture"
)

var sink int

//go:noinline
func Work(i int) int {
	time.Sleep(3 * time.Millisecond)
	if i%2 == 0 {
		return i * 3
	}
	s := 0
	for k := 0; k < i%7; k++ {
		s += k * i
	}
	return s
}

func main() {
	fixture.ParseFlags(1000, 8)
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		fixture.Timed("main.Work", func() { sink += Work(i) })
	})
	fixture.Finish(fixture.Result("main.Work", "main.Work"))
}
