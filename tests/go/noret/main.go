// noret: main.Forever has no RET instruction (an endless select loop), so a
// tracer can only trace its entry; main.Tick is a normal function next to it.
// Only -ready is honoured: the process runs until SIGTERM.
package main

import (
	"syscall"
	"time"

	"fixture"
)

var ticks int

//go:noinline
func Forever(c <-chan time.Time) {
	for {
		select {
		case <-c:
			ticks = Tick(ticks)
		}
	}
}

//go:noinline
func Tick(n int) int { return n + 1 }

func main() {
	fixture.ParseFlags(0, 1)
	go Forever(time.NewTicker(10 * time.Millisecond).C)
	fixture.TouchReady()
	for s := range fixture.Signals {
		if s != syscall.SIGUSR1 {
			return
		}
	}
}
