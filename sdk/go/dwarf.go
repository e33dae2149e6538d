package retopsdk

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// attrGoKind is DW_AT_go_kind: the reflect.Kind the Go linker records on
// its type entries.
const attrGoKind dwarf.Attr = 0x2900

// Go's reflect.Kind values, as found in DW_AT_go_kind.
const (
	goBool          = 1
	goInt           = 2
	goUintptr       = 12
	goFloat32       = 13
	goFloat64       = 14
	goComplex64     = 15
	goComplex128    = 16
	goArray         = 17
	goChan          = 18
	goFunc          = 19
	goInterface     = 20
	goMap           = 21
	goPtr           = 22
	goSlice         = 23
	goString        = 24
	goStruct        = 25
	goUnsafePointer = 26
)

// dwarfFunc is a concrete (out-of-line) subprogram.
type dwarfFunc struct {
	lowPC, highPC uint64
	off           dwarf.Offset // the subprogram entry
	origin        dwarf.Offset // its DW_AT_abstract_origin, or 0
}

// dwarfIndex finds subprograms by address and decodes their parameters.
type dwarfIndex struct {
	d       *dwarf.Data
	byPC    map[uint64]dwarfFunc
	inlined map[string]dwarf.Offset // abstract subprograms (DW_AT_inline)

	mu    sync.Mutex
	types map[dwarf.Offset]*TypeDesc
}

// param is one formal parameter: an argument or (isResult) a result.
type param struct {
	Name     string
	Type     *TypeDesc
	IsResult bool
}

// newDwarfIndex reads every subprogram of every compile unit once.
func newDwarfIndex(d *dwarf.Data) (*dwarfIndex, error) {
	x := &dwarfIndex{
		d:       d,
		byPC:    map[uint64]dwarfFunc{},
		inlined: map[string]dwarf.Offset{},
		types:   map[dwarf.Offset]*TypeDesc{},
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			continue // descend into it
		case dwarf.TagSubprogram:
			x.addSubprogram(e)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return x, nil
}

func (x *dwarfIndex) addSubprogram(e *dwarf.Entry) {
	if _, ok := e.Val(dwarf.AttrInline).(int64); ok {
		if name, ok := e.Val(dwarf.AttrName).(string); ok {
			x.inlined[name] = e.Offset
		}
		return
	}
	low, ok := e.Val(dwarf.AttrLowpc).(uint64)
	if !ok {
		return
	}
	f := dwarfFunc{lowPC: low, off: e.Offset}
	switch h := e.Val(dwarf.AttrHighpc).(type) {
	case uint64:
		f.highPC = h
	case int64: // DWARF 4 class constant: an offset from low_pc
		f.highPC = low + uint64(h)
	}
	f.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	x.byPC[low] = f
}

// entryAt reads the entry at off and, when it has children, its direct
// children.
func (x *dwarfIndex) entryAt(off dwarf.Offset) (*dwarf.Entry, []*dwarf.Entry, error) {
	r := x.d.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil {
		return nil, nil, err
	}
	if e == nil || e.Offset != off {
		return nil, nil, fmt.Errorf("no DWARF entry at %#x", off)
	}
	var kids []*dwarf.Entry
	if !e.Children {
		return e, nil, nil
	}
	for {
		c, err := r.Next()
		if err != nil {
			return nil, nil, err
		}
		if c == nil || c.Tag == 0 {
			break
		}
		kids = append(kids, c)
		if c.Children {
			r.SkipChildren()
		}
	}
	return e, kids, nil
}

// params decodes the formal parameters of the subprogram at off in
// declaration order. Results are the ones with DW_AT_variable_parameter
// (Go names unnamed results ~r0, ~r1, ...). An out-of-line copy of an
// inlined function has its names and types on the abstract origin, which
// lists every parameter, so that list is used.
func (x *dwarfIndex) params(off dwarf.Offset) ([]param, error) {
	_, kids, err := x.entryAt(off)
	if err != nil {
		return nil, err
	}
	var out []param
	for _, c := range kids {
		if c.Tag != dwarf.TagFormalParameter {
			continue
		}
		if o, ok := c.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			if c, _, err = x.entryAt(o); err != nil {
				return nil, err
			}
		}
		p := param{}
		p.Name, _ = c.Val(dwarf.AttrName).(string)
		p.IsResult, _ = c.Val(dwarf.AttrVarParam).(bool)
		toff, ok := c.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok {
			return nil, fmt.Errorf("parameter %q has no type", p.Name)
		}
		if p.Type, err = x.typeDesc(toff); err != nil {
			return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		if p.IsResult && hasResult(out, p.Name) {
			// Go 1.19 can list a result twice (seen on unnamed
			// results of functions with several return statements).
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

func hasResult(ps []param, name string) bool {
	for _, p := range ps {
		if p.IsResult && p.Name == name {
			return true
		}
	}
	return false
}

// typeDesc returns the ABI description of the type entry at off.
func (x *dwarfIndex) typeDesc(off dwarf.Offset) (*TypeDesc, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.typeDescLocked(off, 0)
}

var errTypeDepth = errors.New("DWARF type nesting too deep")

func (x *dwarfIndex) typeDescLocked(off dwarf.Offset, depth int) (*TypeDesc, error) {
	if t, ok := x.types[off]; ok {
		return t, nil
	}
	if depth > 32 {
		return nil, errTypeDepth
	}
	e, kids, err := x.entryAt(off)
	if err != nil {
		return nil, err
	}
	t := &TypeDesc{}
	t.Name, _ = e.Val(dwarf.AttrName).(string)
	size, hasSize := e.Val(dwarf.AttrByteSize).(int64)
	goKind, hasKind := e.Val(attrGoKind).(int64)

	// Follow typedefs to the entry that carries the Go kind and the shape
	// (error -> error(kind) -> runtime.iface; main.T -> struct main.T).
	for e.Tag == dwarf.TagTypedef && (!hasKind || goKind == goStruct || goKind == goArray) {
		next, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok {
			break
		}
		if depth++; depth > 32 {
			return nil, errTypeDepth
		}
		if e, kids, err = x.entryAt(next); err != nil {
			return nil, err
		}
		if !hasSize {
			size, hasSize = e.Val(dwarf.AttrByteSize).(int64)
		}
		if !hasKind {
			goKind, hasKind = e.Val(attrGoKind).(int64)
		}
	}
	t.Size = size
	if !hasKind || goKind == 0 {
		goKind = kindFromTag(e, t.Name)
	}
	switch {
	case goKind == goBool:
		t.Kind = KindBool
	case goKind >= goInt && goKind <= goUintptr:
		t.Kind = KindInt
	case goKind == goFloat32 || goKind == goFloat64:
		t.Kind = KindFloat
	case goKind == goComplex64 || goKind == goComplex128:
		t.Kind = KindComplex
	case goKind == goChan || goKind == goFunc || goKind == goMap ||
		goKind == goPtr || goKind == goUnsafePointer:
		t.Kind, t.Size = KindPointer, ptrSize
	case goKind == goString:
		t.Kind, t.Size = KindString, 2*ptrSize
	case goKind == goInterface:
		t.Kind, t.Size = KindInterface, 2*ptrSize
	case goKind == goSlice:
		t.Kind, t.Size = KindSlice, 3*ptrSize
	case goKind == goStruct:
		t.Kind = KindStruct
		for _, c := range kids {
			if c.Tag != dwarf.TagMember {
				continue
			}
			foff, ok := c.Val(dwarf.AttrType).(dwarf.Offset)
			if !ok {
				return nil, fmt.Errorf("struct %s: member without type", t.Name)
			}
			ft, err := x.typeDescLocked(foff, depth+1)
			if err != nil {
				return nil, err
			}
			t.Fields = append(t.Fields, ft)
		}
	case goKind == goArray:
		t.Kind = KindArray
		eoff, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok {
			return nil, fmt.Errorf("array %s: no element type", t.Name)
		}
		if t.Elem, err = x.typeDescLocked(eoff, depth+1); err != nil {
			return nil, err
		}
		t.Len = arrayLen(kids, t.Size, t.Elem.Size)
	default:
		return nil, fmt.Errorf("type %q: unknown Go kind %d", t.Name, goKind)
	}
	x.types[off] = t
	return t, nil
}

// kindFromTag guesses the Go kind of a type entry without DW_AT_go_kind.
func kindFromTag(e *dwarf.Entry, name string) int64 {
	switch e.Tag {
	case dwarf.TagPointerType, dwarf.TagSubroutineType:
		return goPtr
	case dwarf.TagArrayType:
		return goArray
	case dwarf.TagStructType:
		switch {
		case name == "string":
			return goString
		case strings.HasPrefix(name, "[]"):
			return goSlice
		case name == "error" || strings.HasPrefix(name, "interface {") ||
			name == "runtime.iface" || name == "runtime.eface":
			return goInterface
		}
		return goStruct
	case dwarf.TagBaseType:
		enc, _ := e.Val(dwarf.AttrEncoding).(int64)
		switch enc {
		case 0x2: // DW_ATE_boolean
			return goBool
		case 0x3: // DW_ATE_complex_float
			return goComplex128
		case 0x4: // DW_ATE_float
			return goFloat64
		case 0x5, 0x6, 0x7, 0x8: // signed, signed_char, unsigned, unsigned_char
			return goInt
		}
	}
	return 0
}

// arrayLen reads the element count from the subrange child, falling back
// to byte size / element size.
func arrayLen(kids []*dwarf.Entry, size, elem int64) int64 {
	for _, c := range kids {
		if c.Tag != dwarf.TagSubrangeType {
			continue
		}
		if n, ok := c.Val(dwarf.AttrCount).(int64); ok {
			return n
		}
		if ub, ok := c.Val(dwarf.AttrUpperBound).(int64); ok {
			return ub + 1
		}
	}
	if elem > 0 {
		return size / elem
	}
	return 0
}

// funcParams returns the parameters of a concrete subprogram, from its
// abstract origin when it is an out-of-line copy of an inlinable function.
func (x *dwarfIndex) funcParams(f dwarfFunc) ([]param, error) {
	if f.origin != 0 {
		return x.params(f.origin)
	}
	return x.params(f.off)
}
