// inlined: calls the compiler inlines.  main.Scale is inlined at three
// sites (one in ScaleLoop, two in ScalePairs) and also called through a
// func value, so it has an out-of-line copy too; main.(*Acc).Add is only
// ever inlined (three sites, in AddLoop and AddPairs) and has no copy of
// its own; main.Twice is inlined at two sites (TwiceLoop, TwiceMix) whose
// marks are no NOP of their own but an instruction of the call's line
// (the load of its argument), and called through a func value too.  The parents are kept out of line so each site is one site in
// the binary.  The result counts every call by how it was made.
package main

import (
	"fixture"
)

// Acc sums what it is given.
type Acc struct{ n int64 }

// Add is small enough to inline everywhere and is never used as a value.
func (a *Acc) Add(v int64) {
	a.n += v
}

// Scale is small enough to inline.
func Scale(x int64) int64 {
	return x*3 + 1
}

// Twice is inlined where the compiler reuses an instruction of the call's
// line as the inline mark.
func Twice(x int64) int64 {
	return x ^ (x >> 3)
}

var twiceFn = Twice

//go:noinline
func TwiceLoop(p *int64, n int) int64 {
	var s int64
	for i := 0; i < n; i++ {
		s += Twice(*p - int64(i))
	}
	return s
}

//go:noinline
func TwiceMix(p *int64, n int) int64 {
	var s int64
	for i := 0; i < n; i++ {
		s ^= Twice(*p ^ int64(i))
	}
	return s
}

// scaleFn calls Scale out of line: a package variable the inliner cannot
// see through.
var scaleFn = Scale

var sink int64

//go:noinline
func ScaleLoop(n int) int64 {
	var s int64
	for i := 0; i < n; i++ {
		v := Scale(int64(i))
		s ^= v
	}
	return s
}

//go:noinline
func ScalePairs(n int) int64 {
	var s int64
	for i := 0; i < n; i++ {
		a := Scale(int64(i))
		s ^= a
		b := Scale(s)
		s += b
	}
	return s
}

//go:noinline
func AddLoop(acc *Acc, n int) {
	for i := 0; i < n; i++ {
		acc.Add(int64(i))
	}
}

//go:noinline
func AddPairs(acc *Acc, n int) {
	for i := 0; i < n; i++ {
		acc.Add(int64(i))
		acc.Add(1)
	}
}

//go:noinline
func ScaleByValue(n int) int64 {
	var s int64
	for i := 0; i < n; i++ {
		s += scaleFn(int64(i))
	}
	return s
}

func main() {
	fixture.ParseFlags(1000, 1)
	fixture.WaitStart()
	n := fixture.Opts.Calls
	var acc Acc
	var rounds int64
	for r := 0; fixture.Opts.Loop || r < 1; r++ {
		sink += ScaleLoop(n)
		sink += ScalePairs(n / 2)
		AddLoop(&acc, n)
		AddPairs(&acc, n/2)
		sink += ScaleByValue(25)
		sink += TwiceLoop(&sink, n) + TwiceMix(&sink, n)
		for i := 0; i < 25; i++ {
			sink += twiceFn(int64(i))
		}
		rounds++
	}
	sink += acc.n
	fixture.Finish(map[string]interface{}{
		"calls": rounds * int64(n+2*(n/2)+25),
		"per_func": map[string]map[string]int64{
			"main.Scale":      {"inlined_calls": rounds * int64(n+2*(n/2)), "calls": rounds * 25},
			"main.(*Acc).Add": {"inlined_calls": rounds * int64(n+2*(n/2)), "calls": 0},
			"main.Twice":      {"inlined_calls": rounds * int64(2*n), "calls": rounds * 25},
		},
	})
}
