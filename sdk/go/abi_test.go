package retopsdk

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Type descriptions as the DWARF decoder produces them.
var (
	tBool    = &TypeDesc{Name: "bool", Kind: KindBool, Size: 1}
	tInt8    = &TypeDesc{Name: "int8", Kind: KindInt, Size: 1}
	tUint8   = &TypeDesc{Name: "uint8", Kind: KindInt, Size: 1}
	tInt16   = &TypeDesc{Name: "int16", Kind: KindInt, Size: 2}
	tInt32   = &TypeDesc{Name: "int32", Kind: KindInt, Size: 4}
	tInt     = &TypeDesc{Name: "int", Kind: KindInt, Size: 8}
	tUintptr = &TypeDesc{Name: "uintptr", Kind: KindInt, Size: 8}
	tF32     = &TypeDesc{Name: "float32", Kind: KindFloat, Size: 4}
	tF64     = &TypeDesc{Name: "float64", Kind: KindFloat, Size: 8}
	tC64     = &TypeDesc{Name: "complex64", Kind: KindComplex, Size: 8}
	tC128    = &TypeDesc{Name: "complex128", Kind: KindComplex, Size: 16}
	tPtr     = &TypeDesc{Name: "*int", Kind: KindPointer, Size: 8}
	tMap     = &TypeDesc{Name: "map[string]int", Kind: KindPointer, Size: 8}
	tString  = &TypeDesc{Name: "string", Kind: KindString, Size: 16}
	tSlice   = &TypeDesc{Name: "[]int", Kind: KindSlice, Size: 24}
	tError   = &TypeDesc{Name: "error", Kind: KindInterface, Size: 16}
	tEmpty   = &TypeDesc{Name: "struct {}", Kind: KindStruct, Size: 0}
	// struct { N int; F float64 }: splits across an int and a float register.
	tIntF64 = &TypeDesc{Name: "main.IF", Kind: KindStruct, Size: 16, Fields: []*TypeDesc{tInt, tF64}}
	// struct { F float64; N int }
	tF64Int = &TypeDesc{Name: "main.FI", Kind: KindStruct, Size: 16, Fields: []*TypeDesc{tF64, tInt}}
	// struct { A, B int }
	tTwoInts = &TypeDesc{Name: "main.AB", Kind: KindStruct, Size: 16, Fields: []*TypeDesc{tInt, tInt}}
	// struct { S string; E struct{}; B bool }
	tNested = &TypeDesc{Name: "main.N", Kind: KindStruct, Size: 24, Fields: []*TypeDesc{tString, tEmpty, tBool}}
)

func array(n int64, elem *TypeDesc) *TypeDesc {
	return &TypeDesc{Name: fmt.Sprintf("[%d]%s", n, elem.Name), Kind: KindArray,
		Size: n * elem.Size, Elem: elem, Len: n}
}

func repeat(t *TypeDesc, n int) []*TypeDesc {
	ts := make([]*TypeDesc, n)
	for i := range ts {
		ts[i] = t
	}
	return ts
}

func join(lists ...[]*TypeDesc) []*TypeDesc {
	var out []*TypeDesc
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func render(locs []Location) string {
	s := make([]string, len(locs))
	for i, l := range locs {
		s[i] = l.String()
	}
	return strings.Join(s, " ")
}

func TestAssignAMD64(t *testing.T) {
	i9 := repeat(tInt, 9) // exhausts the integer registers
	const ints9 = "RAX RBX RCX RDI RSI R8 R9 R10 R11"
	const floats15 = "X0 X1 X2 X3 X4 X5 X6 X7 X8 X9 X10 X11 X12 X13 X14"
	cases := []struct {
		name       string
		args, res  []*TypeDesc
		want, wres string
	}{
		{"one int", []*TypeDesc{tInt}, nil, "RAX", ""},
		{"int float string", []*TypeDesc{tInt, tF64, tString}, nil, "RAX X0 RBX+RCX", ""},
		{"slice string interface", []*TypeDesc{tSlice, tString, tError}, nil,
			"RAX+RBX+RCX RDI+RSI R8+R9", ""},
		{"pointer map bool int8 float32", []*TypeDesc{tPtr, tMap, tBool, tInt8, tF32}, nil,
			"RAX RBX RCX RDI X0", ""},
		{"complex", []*TypeDesc{tC128, tC64, tInt}, nil, "X0+X1 X2+X3 RAX", ""},
		// A struct is its fields in order, across both register classes.
		{"struct int+float64", []*TypeDesc{tIntF64, tInt}, nil, "RAX+X0 RBX", ""},
		{"nested struct with zero-size field", []*TypeDesc{tNested}, nil, "RAX+RBX+RCX", ""},
		// 10 ints: the 10th is the first stack slot, above the return address.
		{"ten ints", repeat(tInt, 10), nil, ints9 + " SP+8", ""},
		{"fifteen ints", repeat(tInt, 15), nil,
			ints9 + " SP+8 SP+16 SP+24 SP+32 SP+40 SP+48", ""},
		{"fifteen floats", repeat(tF64, 15), nil, floats15, ""},
		{"sixteen floats", repeat(tF64, 16), nil, floats15 + " SP+8", ""},
		{"fifteen mixed", join(repeat(tInt, 4), repeat(tF64, 4), []*TypeDesc{tString, tSlice},
			repeat(tF32, 3), []*TypeDesc{tIntF64, tBool}), nil,
			"RAX RBX RCX RDI X0 X1 X2 X3 RSI+R8 R9+R10+R11 X4 X5 X6 SP+8 SP+24", ""},
		// A struct that does not fit goes whole to the stack and gives its
		// registers back: the next int still gets R11.
		{"struct does not fit", join(repeat(tInt, 8), []*TypeDesc{tTwoInts, tInt}), nil,
			"RAX RBX RCX RDI RSI R8 R9 R10 SP+8 R11", ""},
		// Floats run out inside a struct whose int part came second: the
		// reset means the following int is still RAX.
		{"floats exhausted", join(repeat(tF64, 15), []*TypeDesc{tF64Int, tInt}), nil,
			floats15 + " SP+8 RAX", ""},
		{"string needs two, one left", join(repeat(tInt, 8), []*TypeDesc{tString, tF64, tInt}), nil,
			"RAX RBX RCX RDI RSI R8 R9 R10 SP+8 X0 R11", ""},
		// Arrays: length 0 is zero-sized (stack, no space), length 1 is its
		// element, longer ones always go to the stack.
		{"arrays", []*TypeDesc{array(0, tInt), array(1, tInt), array(2, tInt), array(1, tF64), tInt}, nil,
			"SP+8 RAX SP+8 X0 RBX", ""},
		{"array of one array of two", []*TypeDesc{array(1, array(2, tInt8)), tInt}, nil, "SP+8 RAX", ""},
		{"zero-size struct", []*TypeDesc{tEmpty, tInt}, nil, "SP+8 RAX", ""},
		// Stack slots at each type's alignment: int8 at 0, int at 8, int16
		// at 16, int32 at 20, uint8 at 24, string at 32, int32 at 48, and
		// struct{float64; int} (X0 is free but no int register is) at 56.
		{"stack alignment", join(i9, []*TypeDesc{tInt8, tInt, tInt16, tInt32, tUint8, tString, tInt32, tF64Int}),
			nil, ints9 + " SP+8 SP+16 SP+24 SP+28 SP+32 SP+40 SP+56 SP+64", ""},
		// Results start again at RAX and X0; stack results follow the
		// argument area, pointer-aligned.
		{"results", []*TypeDesc{tInt, tF64}, []*TypeDesc{tInt, tError, tF64}, "RAX X0", "RAX RBX+RCX X0"},
		{"stack results after stack args", join(i9, []*TypeDesc{tUint8}),
			[]*TypeDesc{array(2, tInt32), tInt}, ints9 + " SP+8", "SP+16 RAX"},
		{"ten results", nil, repeat(tInt, 10), "", ints9 + " SP+8"},
		// The worked example of abi-internal.md:
		// f(a1 uint8, a2 [2]uintptr, a3 uint8) (r1 struct{x uintptr; y [2]uintptr}, r2 string)
		{"abi-internal.md example", []*TypeDesc{tUint8, array(2, tUintptr), tUint8},
			[]*TypeDesc{{Name: "r1", Kind: KindStruct, Size: 24,
				Fields: []*TypeDesc{tUintptr, array(2, tUintptr)}}, tString},
			"RAX SP+8 RBX", "SP+24 RAX+RBX"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, r := AssignAMD64(c.args, c.res)
			if got := render(a); got != c.want {
				t.Errorf("arguments:\n got %s\nwant %s", got, c.want)
			}
			if got := render(r); got != c.wres {
				t.Errorf("results:\n got %s\nwant %s", got, c.wres)
			}
		})
	}
}

// TestAssignAMD64Counts covers every arity from 1 to 15 for ints alone and
// floats alone.
func TestAssignAMD64Counts(t *testing.T) {
	for n := 1; n <= 15; n++ {
		a, _ := AssignAMD64(repeat(tInt, n), nil)
		for i, l := range a {
			want := ""
			if i < 9 {
				want = intRegNames[i]
			} else {
				want = fmt.Sprintf("SP+%d", 8+8*(i-9))
			}
			if l.String() != want {
				t.Errorf("%d ints: argument %d at %s, want %s", n, i, l, want)
			}
		}
		f, _ := AssignAMD64(repeat(tF64, n), nil)
		for i, l := range f {
			if want := fmt.Sprintf("X%d", i); l.String() != want || *l.Register != i {
				t.Errorf("%d floats: argument %d at %s, want %s", n, i, l, want)
			}
		}
	}
}

func TestLocationJSONShape(t *testing.T) {
	a, _ := AssignAMD64(join(repeat(tInt, 9), []*TypeDesc{tF64, tString, tInt32}), nil)
	if l := a[1]; l.Type != "register" || *l.Register != 1 || l.RegisterName != "RBX" {
		t.Errorf("second int: %+v", l)
	}
	if l := a[9]; l.Type != "register" || *l.Register != 0 || l.RegisterName != "X0" {
		t.Errorf("float: %+v", l)
	}
	if l := a[10]; l.Type != "stack" || *l.Offset != 8 || l.Base != "SP" {
		t.Errorf("string on the stack: %+v", l)
	}
	if l := a[11]; l.Type != "stack" || *l.Offset != 24 {
		t.Errorf("int32 on the stack: %+v", l)
	}
	b, _ := AssignAMD64([]*TypeDesc{tIntF64}, nil)
	if l := b[0]; l.Type != "registers" || fmt.Sprint(l.Registers) != "[0 0]" ||
		strings.Join(l.RegisterNames, ",") != "RAX,X0" {
		t.Errorf("split struct: %+v", l)
	}
}

func TestCodeLen(t *testing.T) {
	pad := func(b []byte, n int) []byte { return append(b, bytes.Repeat([]byte{0xcc}, n)...) }
	body := bytes.Repeat([]byte{0x90}, 50)
	cases := []struct {
		name string
		code []byte
		want uint64
	}{
		{"plain padding", pad(append(body[:10:10], 0xc3), 5), 11},
		// JMP rel8 -52 back to the entry is EB CC.
		{"jmp rel8 ending in 0xcc", pad(append(body[:50:50], 0xeb, 0xcc), 12), 52},
		{"jmp rel8 then padding", pad(append(body[:30:30], 0xeb, 0xe0), 4), 32},
		// JMP rel32 -0x134 back to the entry: E9 CC FE FF FF.
		{"jmp rel32", pad(append(bytes.Repeat([]byte{0x90}, 0x12f), 0xe9, 0xcc, 0xfe, 0xff, 0xff), 9), 0x134},
		{"all padding", pad(nil, 16), 0},
	}
	for _, c := range cases {
		if got := codeLen(c.code); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
