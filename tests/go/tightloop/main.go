// tightloop: main.Tiny is a few arithmetic operations, called as fast as
// possible from one goroutine: elapsed_ns/calls is the cost of a call, with
// or without probes. Calls are not timed one by one (time.Now costs more).
// With -framed the loop calls main.Framed instead: the same work behind
// Go's usual stack-check prologue (cmp rsp, [r14+0x10]; jbe), which a leaf
// as small as Tiny does without.  With -err N it calls main.TinyErr, the same
// work returning an error, non-nil every Nth call (0: never).
package main

import (
	"errors"
	"flag"
	"time"

	"fixture"
)

//go:noinline
func Tiny(x int) int { return (x*3 + 7) ^ (x >> 2) }

var (
	errTiny   = errors.New("tiny")
	failEvery int
)

//go:noinline
func TinyErr(x int) error {
	if failEvery > 0 && x%failEvery == 0 {
		return errTiny
	}
	sink += (x*3 + 7) ^ (x >> 2)
	return nil
}

// Framed calls Tiny, so it has a frame and the stack check before it.
//
//go:noinline
func Framed(x int) int { return Tiny(x) + 1 }

var sink int

func main() {
	framed := flag.Bool("framed", false, "call main.Framed (with a stack-check prologue) instead of main.Tiny")
	errEvery := flag.Int("err", -1, "call main.TinyErr, failing every `N`th call (0: never)")
	fixture.ParseFlags(200000, 1)
	fixture.WaitStart()
	n := fixture.Opts.Calls
	name := "main.Tiny"
	failed := 0
	start := time.Now()
	if *errEvery >= 0 {
		name, failEvery = "main.TinyErr", *errEvery
		for i := 0; fixture.Opts.Loop || i < n; i++ {
			if TinyErr(i) != nil {
				failed++
			}
		}
	} else if *framed {
		name = "main.Framed"
		for i := 0; fixture.Opts.Loop || i < n; i++ {
			sink += Framed(i)
		}
	} else {
		for i := 0; fixture.Opts.Loop || i < n; i++ {
			sink += Tiny(i)
		}
	}
	elapsed := time.Since(start).Nanoseconds()
	var perCall int64
	if n > 0 {
		perCall = elapsed / int64(n)
	}
	fixture.Finish(map[string]interface{}{
		"calls": n, "elapsed_ns": elapsed, "mean_ns": perCall, "errors": failed,
		"per_func": map[string]map[string]int64{name: {"calls": int64(n), "mean_ns": perCall}},
	})
}
