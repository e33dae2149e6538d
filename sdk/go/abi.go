package retopsdk

import (
	"strconv"
	"strings"
)

// This file assigns arguments and results to registers and stack slots by
// the Go internal ABI (ABIInternal) on amd64, as specified for Go 1.17+ in
// src/cmd/compile/abi-internal.md. It is a pure function over TypeDesc so
// that it can be tested without DWARF.

// Kind is the ABI-relevant category of a type. Every Go kind maps onto one
// of these: chan, map, func, pointers and unsafe.Pointer are all KindPointer
// (one integer register), every integer width is KindInt.
type Kind int

// The ABI kinds.
const (
	KindInvalid   Kind = iota
	KindBool           // one integer register
	KindInt            // one integer register (every width up to 8 bytes on amd64)
	KindFloat          // one floating-point register
	KindComplex        // two floating-point registers (real, imaginary)
	KindPointer        // one integer register: pointers, chan, map, func, unsafe.Pointer
	KindString         // two integer registers: ptr, len
	KindSlice          // three integer registers: ptr, len, cap
	KindInterface      // two integer registers: type/itab, data
	KindStruct         // its fields, in order
	KindArray          // length 0: nothing; length 1: its element; longer: stack only
)

// TypeDesc is the little an ABI assignment needs to know about a type.
type TypeDesc struct {
	Name   string
	Kind   Kind
	Size   int64
	Align  int64       // 0: derived from Kind, Size and Fields/Elem
	Fields []*TypeDesc // KindStruct: the field types in order
	Elem   *TypeDesc   // KindArray: the element type
	Len    int64       // KindArray: the number of elements
}

// Alignment returns the type's alignment on amd64.
func (t *TypeDesc) Alignment() int64 {
	if t.Align > 0 {
		return t.Align
	}
	switch t.Kind {
	case KindStruct:
		a := int64(1)
		for _, f := range t.Fields {
			if fa := f.Alignment(); fa > a {
				a = fa
			}
		}
		return a
	case KindArray:
		if t.Elem != nil {
			return t.Elem.Alignment()
		}
		return 1
	case KindComplex:
		return clampAlign(t.Size / 2)
	case KindString, KindSlice, KindInterface, KindPointer:
		return ptrSize
	}
	return clampAlign(t.Size)
}

func clampAlign(n int64) int64 {
	switch {
	case n >= 8:
		return 8
	case n >= 4:
		return 4
	case n >= 2:
		return 2
	}
	return 1
}

const ptrSize = 8

// The amd64 argument register sequences.
var (
	intRegNames   = []string{"RAX", "RBX", "RCX", "RDI", "RSI", "R8", "R9", "R10", "R11"}
	floatRegNames = []string{"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14"}
)

// Location says where a value is at function entry (arguments) or at a RET
// (results). Type is "register" (one register), "registers" (several, in
// the order of the value's components), or "stack" (Offset bytes above SP,
// Base "SP"; at entry SP points at the return address so the first stack
// slot is SP+8). Register numbers are indexes into the ABI sequence of
// their class: 0..8 for RAX, RBX, RCX, RDI, RSI, R8, R9, R10, R11 and 0..14
// for X0..X14; the names tell the classes apart.
type Location struct {
	Type          string   `json:"type"`
	Register      *int     `json:"register,omitempty"`
	RegisterName  string   `json:"register_name,omitempty"`
	Registers     []int    `json:"registers,omitempty"`
	RegisterNames []string `json:"register_names,omitempty"`
	Offset        *int64   `json:"offset,omitempty"`
	Base          string   `json:"base,omitempty"`
}

// String renders a location compactly: "RAX", "RAX+RBX", "SP+8".
func (l Location) String() string {
	switch l.Type {
	case "register":
		return l.RegisterName
	case "registers":
		return strings.Join(l.RegisterNames, "+")
	case "stack":
		return l.Base + "+" + strconv.FormatInt(*l.Offset, 10)
	}
	return "?"
}

type reg struct {
	float bool
	index int
}

// assigner holds the state of one assignment: the next free integer and
// floating-point register, and the end of the stack sequence so far
// (relative to the first stack slot).
type assigner struct {
	ni, nf int
	stack  int64
	regs   []reg
}

// AssignAMD64 returns the locations of a function's arguments (receiver
// first, for a method) and results. It follows the algorithm of
// abi-internal.md: each value is register-assigned whole or put whole on
// the stack (resetting the register counters to where they were before
// it); zero-sized values go to the stack; results start again from the
// first registers and their stack slots follow the arguments' stack area,
// pointer-aligned.
func AssignAMD64(args, results []*TypeDesc) (argLocs, resLocs []Location) {
	var a assigner
	for _, t := range args {
		argLocs = append(argLocs, a.assign(t))
	}
	a.stack = alignUp(a.stack, ptrSize)
	a.ni, a.nf = 0, 0
	for _, t := range results {
		resLocs = append(resLocs, a.assign(t))
	}
	return argLocs, resLocs
}

// assign places one argument or result.
func (a *assigner) assign(t *TypeDesc) Location {
	ni, nf := a.ni, a.nf
	a.regs = a.regs[:0]
	if t.Size > 0 && a.regAssign(t) {
		return a.regLocation()
	}
	a.ni, a.nf = ni, nf
	a.stack = alignUp(a.stack, t.Alignment())
	off := a.stack + ptrSize // above the return address
	a.stack += t.Size
	return Location{Type: "stack", Offset: &off, Base: "SP"}
}

// regAssign register-assigns t recursively; false means it does not fit
// (the caller then resets the counters).
func (a *assigner) regAssign(t *TypeDesc) bool {
	switch t.Kind {
	case KindBool, KindInt, KindPointer:
		return a.intReg(1)
	case KindFloat:
		return a.floatReg()
	case KindComplex:
		return a.floatReg() && a.floatReg()
	case KindString, KindInterface:
		return a.intReg(2)
	case KindSlice:
		return a.intReg(3)
	case KindStruct:
		for _, f := range t.Fields {
			if !a.regAssign(f) {
				return false
			}
		}
		return true
	case KindArray:
		switch {
		case t.Len == 0:
			return true
		case t.Len == 1 && t.Elem != nil:
			return a.regAssign(t.Elem)
		}
	}
	return false
}

func (a *assigner) intReg(n int) bool {
	for ; n > 0; n-- {
		if a.ni >= len(intRegNames) {
			return false
		}
		a.regs = append(a.regs, reg{index: a.ni})
		a.ni++
	}
	return true
}

func (a *assigner) floatReg() bool {
	if a.nf >= len(floatRegNames) {
		return false
	}
	a.regs = append(a.regs, reg{float: true, index: a.nf})
	a.nf++
	return true
}

func (a *assigner) regLocation() Location {
	name := func(r reg) string {
		if r.float {
			return floatRegNames[r.index]
		}
		return intRegNames[r.index]
	}
	if len(a.regs) == 1 {
		n := a.regs[0].index
		return Location{Type: "register", Register: &n, RegisterName: name(a.regs[0])}
	}
	loc := Location{Type: "registers", Registers: []int{}, RegisterNames: []string{}}
	for _, r := range a.regs {
		loc.Registers = append(loc.Registers, r.index)
		loc.RegisterNames = append(loc.RegisterNames, name(r))
	}
	return loc
}

func alignUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}
