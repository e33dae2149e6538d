package retopsdk

import (
	"reflect"
	"runtime"
)

// biasAnchor is a function whose runtime PC the SDK can take without
// knowing any address: comparing it with its link-time entry in the
// pclntab gives the load bias (zero for a non-PIE executable).
//
//go:noinline
func biasAnchor() {}

// loadBias returns runtime PC minus link-time address for this process.
func loadBias(b *exeImage) (uint64, bool) {
	pc := reflect.ValueOf(biasAnchor).Pointer()
	f := runtime.FuncForPC(pc)
	if f == nil {
		return 0, false
	}
	fn, ok := b.lookup(f.Name())
	if !ok {
		return 0, false
	}
	return uint64(f.Entry()) - fn.Entry, true
}

// isRealEntry asks the running process whether addr is the entry of a
// function called name: runtime.FuncForPC(addr) must exist and start at
// addr. FuncForPC names the innermost inlined function at a PC, so when the
// first instruction belongs to code inlined into name, the outermost frame
// of runtime.CallersFrames gives the function that owns the entry.
func isRealEntry(addr uint64, name string) bool {
	f := runtime.FuncForPC(uintptr(addr))
	if f == nil || uint64(f.Entry()) != addr {
		return false
	}
	if f.Name() == name {
		return true
	}
	// CallersFrames takes return addresses and looks up pc-1.
	frames := runtime.CallersFrames([]uintptr{uintptr(addr) + 1})
	outer := ""
	for {
		fr, more := frames.Next()
		outer = fr.Function
		if !more {
			break
		}
	}
	return outer == name
}
