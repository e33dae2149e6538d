// migrate: many goroutines block inside main.Block (a sleep, then a channel
// round-trip through a server goroutine), so a call usually ends on another
// thread than it began on. Run with -workers 1000.
package main

import (
	"time"

	"fixture"
)

type request struct {
	i     int
	reply chan int
}

var server = make(chan request)

func serve() {
	for r := range server {
		r.reply <- r.i + 1
	}
}

//go:noinline
func Block(i int) int {
	time.Sleep(time.Duration(1+i%3) * time.Millisecond)
	reply := make(chan int)
	server <- request{i, reply}
	return <-reply
}

func main() {
	fixture.ParseFlags(5000, 1000)
	go serve()
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		fixture.Timed("main.Block", func() { Block(i) })
	})
	fixture.Finish(fixture.Result("main.Block", "main.Block"))
}
