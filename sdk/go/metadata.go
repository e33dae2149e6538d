package retopsdk

import (
	"debug/dwarf"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
)

// exePath is the binary the metadata is read from: the process itself.
// Tests may point it elsewhere.
var exePath = "/proc/self/exe"

// funcMeta is what the SDK knows about one function from the binary,
// without its parameters.
type funcMeta struct {
	Name       string `json:"name"`
	Address    uint64 `json:"address"`
	Entry      uint64 `json:"entry"`
	Offset     uint64 `json:"offset"`
	SizeBytes  uint64 `json:"size_bytes"`
	HasSize    bool   `json:"has_size"`
	SizeSource string `json:"size_source,omitempty"`
	File       string `json:"file"`
	Line       int    `json:"line"`
}

// exeImage is the lazily loaded function table of the running executable.
type exeImage struct {
	file   *elf.File
	table  *gosym.Table
	byName map[string]int    // index into table.Funcs
	sizes  map[uint64]uint64 // .symtab STT_FUNC sizes by address
	loads  []*elf.Prog       // executable PT_LOAD segments
	bias   uint64            // runtime PC - link-time address
	biasOK bool

	dwarfOnce sync.Once
	dw        *dwarfIndex // nil when the binary has no DWARF
	dwErr     error
}

var (
	loadOnce   sync.Once
	loaded     *exeImage
	loadErr    error
	errNoPclnt = errors.New("no .gopclntab section")
)

// self returns the process's own function table, loading it on first use.
// The table is shared by every Server of the process and kept for its life.
func self() (*exeImage, error) {
	loadOnce.Do(func() { loaded, loadErr = loadBinary(exePath) })
	return loaded, loadErr
}

// loadBinary reads the ELF headers, .symtab sizes and the pclntab.
func loadBinary(path string) (*exeImage, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("retopsdk: %w", err)
	}
	b := &exeImage{file: f, sizes: map[uint64]uint64{}}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			b.loads = append(b.loads, p)
		}
	}
	var textStart uint64
	if syms, err := f.Symbols(); err == nil {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
				b.sizes[s.Value] = s.Size
			}
			if s.Name == "runtime.text" {
				textStart = s.Value
			}
		}
	}
	pcln, err := sectionData(f, ".gopclntab")
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("retopsdk: %s: %w", path, err)
	}
	if textStart == 0 {
		textStart = headerTextStart(pcln)
	}
	if textStart == 0 {
		if s := f.Section(".text"); s != nil {
			textStart = s.Addr
		}
	}
	table, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, textStart))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("retopsdk: %s: pclntab: %w", path, err)
	}
	b.table = table
	b.byName = make(map[string]int, len(table.Funcs))
	for i := range table.Funcs {
		if _, dup := b.byName[table.Funcs[i].Name]; !dup {
			b.byName[table.Funcs[i].Name] = i
		}
	}
	b.bias, b.biasOK = loadBias(b)
	return b, nil
}

func sectionData(f *elf.File, name string) ([]byte, error) {
	s := f.Section(name)
	if s == nil {
		// PIE binaries linked externally may rename it.
		s = f.Section(".data.rel.ro.gopclntab")
	}
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, errNoPclnt
	}
	return s.Data()
}

// headerTextStart reads the text start that Go 1.18 to 1.25 store in the
// pclntab header (magic, pad, minLC, ptrSize, nfunc, nfiles, textStart).
// Zero when unknown (other versions, or a PIE where it is relocated).
func headerTextStart(pcln []byte) uint64 {
	if len(pcln) < 8 {
		return 0
	}
	magic := binary.LittleEndian.Uint32(pcln)
	if magic != 0xfffffff0 && magic != 0xfffffff1 {
		return 0
	}
	ps := int(pcln[7])
	off := 8 + 2*ps
	if ps != 8 || len(pcln) < off+ps {
		return 0
	}
	return binary.LittleEndian.Uint64(pcln[off:])
}

// lookup returns the pclntab function of that name.
func (b *exeImage) lookup(name string) (*gosym.Func, bool) {
	i, ok := b.byName[name]
	if !ok {
		return nil, false
	}
	return &b.table.Funcs[i], true
}

// fileOffset maps a link-time address to its offset in the file through the
// executable PT_LOAD segment holding it.
func (b *exeImage) fileOffset(v uint64) (uint64, bool) {
	if p := b.segment(v); p != nil {
		return v - p.Vaddr + p.Off, true
	}
	return 0, false
}

// segment returns the executable PT_LOAD segment holding v, or nil.
func (b *exeImage) segment(v uint64) *elf.Prog {
	for _, p := range b.loads {
		if p.Vaddr <= v && v < p.Vaddr+p.Memsz {
			return p
		}
	}
	return nil
}

// dwarf returns the DWARF index, building it on first use; nil without DWARF.
func (b *exeImage) dwarf() *dwarfIndex {
	b.dwarfOnce.Do(func() {
		d, err := b.file.DWARF()
		if err != nil {
			b.dwErr = err
			return
		}
		b.dw, b.dwErr = newDwarfIndex(d)
	})
	return b.dw
}

// meta describes one pclntab function.
func (b *exeImage) meta(fn *gosym.Func) funcMeta {
	m := funcMeta{Name: fn.Name, Entry: fn.Entry, Address: fn.Entry + b.bias}
	m.Offset, _ = b.fileOffset(fn.Entry)
	m.File, m.Line, _ = b.table.PCToLine(fn.Entry)
	if m.Line < 0 {
		m.Line = 0 // no line table (assembly stubs, cgo glue)
	}
	m.SizeBytes, m.SizeSource = b.size(fn)
	m.HasSize = m.SizeBytes > 0
	return m
}

// size is the function's size in bytes: the .symtab size, else DWARF
// high_pc - low_pc, else (stripped) the pclntab end minus entry with the
// trailing int3 padding trimmed.
func (b *exeImage) size(fn *gosym.Func) (uint64, string) {
	if s, ok := b.sizes[fn.Entry]; ok {
		return s, "symtab"
	}
	if dw := b.dwarf(); dw != nil {
		if df, ok := dw.byPC[fn.Entry]; ok && df.highPC > df.lowPC {
			return df.highPC - df.lowPC, "dwarf"
		}
	}
	if fn.End <= fn.Entry {
		return 0, ""
	}
	n := fn.End - fn.Entry
	p := b.segment(fn.Entry)
	if p == nil || n > 1<<24 {
		return 0, ""
	}
	code := make([]byte, n)
	if _, err := p.ReadAt(code, int64(fn.Entry-p.Vaddr)); err != nil && err != io.EOF {
		return 0, ""
	}
	if n = codeLen(code); n == 0 {
		return 0, ""
	}
	return n, "pclntab"
}

// codeLen returns the length of a function's code without the int3 (0xCC)
// padding up to the next function. Go functions with a stack check end
// with the morestack path's jump back to the entry, and that JMP's last
// byte can itself be 0xCC (JMP rel8 -52 is EB CC): when the bytes trimmed
// hold such a jump, the code ends after it.
func codeLen(code []byte) uint64 {
	n := len(code)
	for n > 0 && code[n-1] == 0xcc {
		n--
	}
	if !jumpsToEntry(code[:n]) {
		for e := n + 1; e <= len(code); e++ {
			if jumpsToEntry(code[:e]) {
				return uint64(e)
			}
		}
	}
	return uint64(n)
}

// jumpsToEntry reports whether code ends with a JMP rel8 or JMP rel32 to
// its first byte.
func jumpsToEntry(code []byte) bool {
	e := len(code)
	if e >= 2 && code[e-2] == 0xeb && e+int(int8(code[e-1])) == 0 {
		return true
	}
	return e >= 5 && code[e-5] == 0xe9 &&
		int64(e)+int64(int32(binary.LittleEndian.Uint32(code[e-4:]))) == 0
}

// sortedFuncs returns the pclntab functions in address order (the table
// is already sorted; this guards against a linker that is not).
func (b *exeImage) sortedFuncs() []gosym.Func {
	fs := b.table.Funcs
	if !sort.SliceIsSorted(fs, func(i, j int) bool { return fs[i].Entry < fs[j].Entry }) {
		fs = append([]gosym.Func(nil), fs...)
		sort.Slice(fs, func(i, j int) bool { return fs[i].Entry < fs[j].Entry })
	}
	return fs
}

// lookupDwarfOnly reports a name DWARF knows only as inlined code.
func (b *exeImage) lookupDwarfOnly(name string) (dwarf.Offset, bool) {
	dw := b.dwarf()
	if dw == nil {
		return 0, false
	}
	off, ok := dw.inlined[name]
	return off, ok
}
