// manyfuncs: a package of sixteen exported functions of which four are busy,
// as when an operator traces a whole package: batch mode's order and folding,
// the browser's package key. After SIGUSR1, one goroutine each calls
// main.Fast (a few operations) every millisecond, main.Medium (sleeps 10 ms)
// and main.Slow (sleeps 50 ms) back to back, and every 100 ms a new
// goroutine calls main.Stuck, which never returns: calls/s, P99 and INFL
// each put another one first. main.Idle01 to main.Idle12 are never called
// (with -call-idle, once each after SIGUSR1). It runs until SIGTERM.
package main

import (
	"flag"
	"time"

	"fixture"
)

//go:noinline
func Fast(x int) int { return x*3 + 1 }

//go:noinline
func Medium() { time.Sleep(10 * time.Millisecond) }

//go:noinline
func Slow() { time.Sleep(50 * time.Millisecond) }

var never = make(chan struct{})

//go:noinline
func Stuck() { <-never }

//go:noinline
func Idle01(x int) int { return x + 1 }

//go:noinline
func Idle02(x int) int { return x + 2 }

//go:noinline
func Idle03(x int) int { return x + 3 }

//go:noinline
func Idle04(x int) int { return x + 4 }

//go:noinline
func Idle05(x int) int { return x + 5 }

//go:noinline
func Idle06(x int) int { return x + 6 }

//go:noinline
func Idle07(x int) int { return x + 7 }

//go:noinline
func Idle08(x int) int { return x + 8 }

//go:noinline
func Idle09(x int) int { return x + 9 }

//go:noinline
func Idle10(x int) int { return x + 10 }

//go:noinline
func Idle11(x int) int { return x + 11 }

//go:noinline
func Idle12(x int) int { return x + 12 }

// The idle functions are reached through this table, so the linker keeps
// their code although nothing calls them unless asked.
var idle = []func(int) int{Idle01, Idle02, Idle03, Idle04, Idle05, Idle06, Idle07, Idle08,
	Idle09, Idle10, Idle11, Idle12}

var sink int

func main() {
	callIdle := flag.Bool("call-idle", false, "call each idle function once after SIGUSR1")
	fixture.ParseFlags(0, 1)
	fixture.WaitStart()
	if *callIdle {
		for _, f := range idle {
			sink += f(sink)
		}
	}
	go func() {
		acc := 0
		for i := 0; ; i++ {
			acc += Fast(i)
			time.Sleep(time.Millisecond)
		}
	}()
	go func() {
		for {
			Medium()
		}
	}()
	go func() {
		for {
			Slow()
		}
	}()
	go func() {
		for {
			go Stuck()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	fixture.Finish(map[string]interface{}{})
}
