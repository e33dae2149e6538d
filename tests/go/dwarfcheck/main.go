// Command dwarfcheck is the DWARF fixture for tests/unit/test_dwarf_info.c:
// functions with known signatures, kept out of line so each has its own
// DW_TAG_subprogram with parameters the test can assert exactly.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Card gives the test a method with a pointer receiver.
type Card struct {
	Number string
}

//go:noinline
func Add(a, b int) int {
	return a + b
}

//go:noinline
func Greet(name string, times int) (string, error) {
	if times < 0 {
		return "", errors.New("negative times")
	}
	return strings.Repeat("hello "+name+" ", times), nil
}

//go:noinline
func Scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

//go:noinline
func (c *Card) Valid() bool {
	return len(c.Number) == 16
}

func main() {
	s, err := Greet("gopher", Add(1, 1))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c := &Card{Number: "4111111111111111"}
	fmt.Println(s, Scale([]float64{1, 2}, 1.5), c.Valid())
}
