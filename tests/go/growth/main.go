// growth: every call of Grow grows, that is copies, its goroutine's stack in
// Grow's own prologue. Each call runs on a fresh goroutine that first fills
// its stack to just under 4 MiB with a chain of 4 KiB frames (so the stack
// has been grown to exactly 4 MiB); Grow's 64 KiB frame then does not fit,
// and its stack check calls runtime.morestack, which allocates an 8 MiB
// stack, copies the ~4 MB in use and restarts Grow from its entry (a copy
// long enough against the probes' own traps). The caller times
// the whole call, copy included, and what its thread waited for a CPU
// meanwhile (grow_wait_ns: a wait as a probe's trap returns is on its
// clock, not on retop's).
//
// For scale, the same goroutine then calls Steady (Grow's body under another
// name, not traced) at the same depth, now with room to spare: the difference
// of the two means is what the growth costs. Both calls check, by the address
// of a local of the caller, whether the stack moved during the call.
package main

import (
	"flag"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"fixture"
)

const (
	padSize   = 64 << 10 // Grow's and Steady's frames
	chainSize = 4 << 10  // each frame of the chain
)

var (
	fill = flag.Int("fill", 4<<20-40<<10,
		"`BYTES` of stack the chain uses before calling Grow (under a power of two by less than Grow's frame)")
	grown, steadyGrown, chainDepth int64
	sink, growWait                 int64
)

//go:noinline
func Grow(depth int) int {
	var pad [padSize]byte
	pad[depth%padSize] = byte(depth)
	return int(pad[(depth*7)%padSize]) + depth
}

//go:noinline
func Steady(depth int) int {
	var pad [padSize]byte
	pad[depth%padSize] = byte(depth)
	return int(pad[(depth*7)%padSize]) + depth
}

// chain recurses with 4 KiB frames until the stack in use, from the
// goroutine's outermost local top down to this frame, is within one frame of
// fill, then makes the timed calls. top is a pointer into this stack, so a
// copy of the stack updates it; used is therefore right after any copy.
//
//go:noinline
func chain(top *byte, depth int, sched *os.File) {
	var pad [chainSize]byte
	pad[depth%chainSize] = byte(depth)
	here := uintptr(unsafe.Pointer(&pad[0]))
	used := uintptr(unsafe.Pointer(top)) - here
	if used+chainSize+256 < uintptr(*fill) {
		chain(top, depth+1, sched)
	} else {
		atomic.StoreInt64(&chainDepth, int64(depth))
		var r int
		// (A read takes far less stack than the 40 KiB left under the
		// chain: it cannot grow the stack itself.)
		w := fixture.RunDelay(sched)
		fixture.Timed("main.Grow", func() { r = Grow(depth) })
		atomic.AddInt64(&growWait, int64(fixture.RunDelay(sched)-w))
		if moved := uintptr(unsafe.Pointer(&pad[0])); moved != here {
			atomic.AddInt64(&grown, 1)
			here = moved
		}
		fixture.Timed("main.Steady", func() { r += Steady(depth) })
		if uintptr(unsafe.Pointer(&pad[0])) != here {
			atomic.AddInt64(&steadyGrown, 1)
		}
		atomic.AddInt64(&sink, int64(r))
	}
	atomic.AddInt64(&sink, int64(pad[(depth*3)%chainSize]))
}

func main() {
	fixture.ParseFlags(60, 2)
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		done := make(chan struct{})
		go func() {
			// On one thread throughout: its schedstat is the call's.
			runtime.LockOSThread()
			sched, err := os.Open("/proc/thread-self/schedstat")
			if err != nil {
				fixture.Fatal(err)
			}
			var top byte
			chain(&top, 0, sched)
			sched.Close()
			done <- struct{}{}
		}()
		<-done
	})
	r := fixture.Result("main.Grow", "main.Grow", "main.Steady")
	r["fill_bytes"] = *fill
	r["chain_depth"] = atomic.LoadInt64(&chainDepth)
	// Calls of Grow during which the stack moved: all of them, if the
	// prologue grew it every time. Steady should never move it.
	r["grown"] = atomic.LoadInt64(&grown)
	r["steady_grown"] = atomic.LoadInt64(&steadyGrown)
	r["grow_wait_ns"] = (time.Duration(atomic.LoadInt64(&growWait)) / time.Duration(fixture.Opts.Calls)).Nanoseconds()
	fixture.Finish(r)
}
