//go:build retop_cgo

// Built with -tags retop_cgo, this makes the binary link real C code.
package main

/*
static int retop_cgo_answer(void) { return 42; }
*/
import "C"

func init() {
	if C.retop_cgo_answer() != 42 {
		panic("cgo call failed")
	}
}
