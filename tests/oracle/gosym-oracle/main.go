// gosym-oracle: Go's own reading of a binary's function table (debug/gosym)
// and objdump's reading of its instructions, to check retop's index against.
//
//	gosym-oracle dump BINARY              one JSON object per function
//	gosym-oracle check BINARY LIST.json   check `retop -l -x BINARY -o json`
//	gosym-oracle bench BINARY             time debug/gosym on BINARY
//	gosym-oracle names BINARY             time debug/gosym reading names alone
//	gosym-oracle compare A.json B.json    compare two retop lists
//	gosym-oracle packages BINARY          distinct package names (Sym.PackageName)
//
// Exit status: 0 ok, 1 mismatch or failure, 2 usage.
package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"debug/gosym"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

const usage = "usage: gosym-oracle dump BINARY | check BINARY LIST.json | bench BINARY | names BINARY | compare A.json B.json | packages BINARY"

// fn is one function as debug/gosym sees it.
type fn struct {
	Name  string `json:"name"`
	Entry uint64 `json:"entry"`
	End   uint64 `json:"end"`
	File  string `json:"file"`
	Line  int    `json:"line"`
}

type image struct {
	elf   *elf.File
	table *gosym.Table
	funcs []fn
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		die(2, usage)
	}
	var err error
	switch {
	case args[0] == "dump" && len(args) == 2:
		err = dump(args[1])
	case args[0] == "check" && len(args) == 3:
		err = check(args[1], args[2])
	case args[0] == "bench" && len(args) == 2:
		err = bench(args[1])
	case args[0] == "names" && len(args) == 2:
		err = names(args[1])
	case args[0] == "compare" && len(args) == 3:
		err = compare(args[1], args[2])
	case args[0] == "packages" && len(args) == 2:
		err = packages(args[1])
	default:
		die(2, usage)
	}
	if err != nil {
		die(1, "gosym-oracle: "+err.Error())
	}
}

func die(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(code)
}

// load reads the pclntab of path; debug/gosym panics on some corrupt input,
// which becomes an error here.
func load(path string) (img *image, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: debug/gosym: %v", path, r)
		}
	}()
	f, table, err := open(path)
	if err != nil {
		return nil, err
	}
	img = &image{elf: f, table: table}
	for i := range table.Funcs {
		g := &table.Funcs[i]
		file, line, _ := table.PCToLine(g.Entry)
		img.funcs = append(img.funcs, fn{g.Name, g.Entry, g.End, file, line})
	}
	return img, nil
}

// open reads the function table of the binary at path.
func open(path string) (f *elf.File, table *gosym.Table, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: debug/gosym: %v", path, r)
		}
	}()
	f, err = elf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	var pcln *elf.Section
	for _, s := range f.Sections {
		// PIE builds name it .data.rel.ro.gopclntab.
		if s.Name == ".gopclntab" || strings.HasSuffix(s.Name, ".gopclntab") {
			pcln = s
			break
		}
	}
	if pcln == nil {
		return nil, nil, fmt.Errorf("%s: no .gopclntab section", path)
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: .gopclntab: %v", path, err)
	}
	table, err = gosym.NewTable(nil, gosym.NewLineTable(data, textStart(f)))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return f, table, nil
}

// textStart is runtime.text when the binary has a symbol table, else the
// start of .text (the same thing in a pure Go binary).
func textStart(f *elf.File) uint64 {
	if syms, err := f.Symbols(); err == nil {
		for _, s := range syms {
			if s.Name == "runtime.text" {
				return s.Value
			}
		}
	}
	if s := f.Section(".text"); s != nil {
		return s.Addr
	}
	return 0
}

func dump(path string) error {
	img, err := load(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for _, f := range img.funcs {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return w.Flush()
}

// bench times what an index needs from debug/gosym, without process start.
func bench(path string) error {
	start := time.Now()
	img, err := load(path) // name, entry, end, file:line of every entry
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("{\"funcs\":%d,\"seconds\":%.6f}\n", len(img.funcs), secs)
	return nil
}

// names times debug/gosym reading every function's name and nothing else:
// the least any listing of a binary's functions does.
func names(path string) error {
	start := time.Now()
	_, table, err := open(path)
	if err != nil {
		return err
	}
	bytes := 0
	for i := range table.Funcs {
		bytes += len(table.Funcs[i].Name)
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("{\"funcs\":%d,\"name_bytes\":%d,\"seconds\":%.6f}\n", len(table.Funcs), bytes, secs)
	return nil
}

// retopFunc is one line of `retop -l -x BINARY -o json` (man retop: a contract).
type retopFunc struct {
	Name       string  `json:"name"`
	Entry      *uint64 `json:"entry"`
	FileOffset *uint64 `json:"file_offset"`
	Size       *uint64 `json:"size"`
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Source     string  `json:"source"`
	RetSites   []struct {
		Offset uint64 `json:"offset"`
		Line   int    `json:"line"`
	} `json:"ret_sites"`
	Traceable  string `json:"traceable"`
	Reason     string `json:"reason"`
	InlineOnly bool   `json:"inline_only"`
}

// readList reads one JSON object per line; a bad line is an error, because
// the list is a contract.
func readList(path string) ([]retopFunc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list []retopFunc
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r retopFunc
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n+1, err)
		}
		if r.Entry == nil || r.Size == nil || r.FileOffset == nil {
			return nil, fmt.Errorf("%s:%d: entry, size or file_offset missing", path, n+1)
		}
		list = append(list, r)
	}
	return list, nil
}

// mismatches collects problems; the first 20 are printed after the summary,
// or as many as GOSYM_ORACLE_DETAIL says (tests that sort them all).
type mismatches struct {
	n      int
	detail []string
}

func (m *mismatches) add(format string, a ...interface{}) {
	m.n++
	if m.n <= detailLimit() {
		m.detail = append(m.detail, fmt.Sprintf("  "+format, a...))
	}
}

func detailLimit() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("GOSYM_ORACLE_DETAIL"), &n); err == nil && n > 0 {
		return n
	}
	return 20
}

// report prints the summary line and the details; exit 1 on any mismatch.
func (m *mismatches) report(summary string) {
	fmt.Printf("%s: %d mismatches\n", summary, m.n)
	for _, d := range m.detail {
		fmt.Println(d)
	}
	if m.n > 0 {
		os.Exit(1)
	}
}

type key struct {
	name  string
	entry uint64
}

func check(binary, listPath string) error {
	img, err := load(binary)
	if err != nil {
		return err
	}
	list, err := readList(listPath)
	if err != nil {
		return err
	}
	rets, err := objdumpRets(binary)
	if err != nil {
		return err
	}
	var m mismatches
	// Compare multisets of (name, entry): a table may repeat a name.
	byKey := map[key][]*retopFunc{}
	for i := range list {
		r := &list[i]
		// A function that exists only inlined has no code, so no row in
		// debug/gosym's table: it must claim none either.
		if r.InlineOnly {
			if *r.Entry != 0 || *r.Size != 0 || len(r.RetSites) != 0 || r.Traceable != "no" {
				m.add("%s: inline-only, yet entry %#x, size %d, %d RET sites, traceable %q",
					r.Name, *r.Entry, *r.Size, len(r.RetSites), r.Traceable)
			}
			continue
		}
		k := key{r.Name, *r.Entry}
		byKey[k] = append(byKey[k], r)
	}
	for _, g := range img.funcs {
		k := key{g.Name, g.Entry}
		if len(byKey[k]) == 0 {
			m.add("%s @%#x: missing from retop's list", g.Name, g.Entry)
			continue
		}
		r := byKey[k][0]
		byKey[k] = byKey[k][1:]
		checkFunc(img, g, r, rets, &m)
	}
	for k, rs := range byKey {
		for range rs {
			m.add("%s @%#x: in retop's list, not in debug/gosym's table", k.name, k.entry)
		}
	}
	m.report(fmt.Sprintf("checked %d functions", len(img.funcs)))
	return nil
}

func checkFunc(img *image, g fn, r *retopFunc, rets []uint64, m *mismatches) {
	size := *r.Size
	// A linker marker (go:textfipsstart) names an address in the padding:
	// gosym gives it no line and the extent up to the next function; retop
	// refuses it, with size 0. Only its address has to agree.
	if r.Traceable == "no" && strings.Contains(r.Reason, "linker marker") && g.Line <= 0 {
		if size != 0 || len(r.RetSites) != 0 {
			m.add("%s: a linker marker with size %d and %d RET sites", g.Name, size, len(r.RetSites))
		}
		if off, ok := fileOffset(img.elf, g.Entry); !ok || off != *r.FileOffset {
			m.add("%s: file_offset %#x, program headers say %#x", g.Name, *r.FileOffset, off)
		}
		return
	}
	if r.File != g.File || r.Line != g.Line {
		m.add("%s: at %s:%d, gosym says %s:%d", g.Name, r.File, r.Line, g.File, g.Line)
	}
	if size == 0 || g.Entry+size > g.End {
		m.add("%s: size %d, gosym's extent is %d", g.Name, size, g.End-g.Entry)
		size = g.End - g.Entry
	}
	if off, ok := fileOffset(img.elf, g.Entry); !ok || off != *r.FileOffset {
		m.add("%s: file_offset %#x, program headers say %#x", g.Name, *r.FileOffset, off)
	}
	want := retsIn(rets, g.Entry, g.Entry+size)
	var got []uint64
	for _, s := range r.RetSites {
		got = append(got, g.Entry+s.Offset)
		if _, line, _ := img.table.PCToLine(g.Entry + s.Offset); line != s.Line {
			m.add("%s: RET +%#x at line %d, gosym says %d", g.Name, s.Offset, s.Line, line)
		}
	}
	if !sameSet(got, want) {
		m.add("%s: RET sites %s, objdump finds %s", g.Name, offsets(got, g.Entry), offsets(want, g.Entry))
	}
	if pad := retsIn(rets, g.Entry+size, g.End); len(pad) > 0 {
		m.add("%s: objdump finds RET %s past size %d", g.Name, offsets(pad, g.Entry), size)
	}
	switch {
	case len(r.RetSites) > 0 && r.Traceable != "full" && r.Reason == "":
		// The interlock may refuse a function whose RETs are real.
		m.add("%s: has RET sites but traceable %q without a reason", g.Name, r.Traceable)
	case len(r.RetSites) == 0 && r.Traceable != "entry-only" && r.Traceable != "no":
		m.add("%s: no RET sites but traceable %q", g.Name, r.Traceable)
	case len(r.RetSites) == 0 && r.Reason == "":
		m.add("%s: traceable %q without a reason", g.Name, r.Traceable)
	}
}

// fileOffset maps a virtual address through the executable PT_LOAD holding it.
func fileOffset(f *elf.File, v uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= v && v < p.Vaddr+p.Memsz {
			return v - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// objdumpRets runs objdump once and returns the sorted addresses of every
// ret instruction (ret, retq, ret $imm16; with or without prefixes).
func objdumpRets(binary string) ([]uint64, error) {
	cmd := exec.Command("objdump", "-d", "--no-show-raw-insn", binary)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("objdump: %v", err)
	}
	var rets []uint64
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		// "  4b03f0:\tret    " ; addresses only grow within objdump's output
		// of one section, and sections come in address order.
		line := sc.Text()
		colon := strings.IndexByte(line, ':')
		if colon < 0 || !strings.HasPrefix(line, " ") {
			continue
		}
		var addr uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(line[:colon]), "%x", &addr); err != nil {
			continue
		}
		if isRet(strings.Fields(line[colon+1:])) {
			rets = append(rets, addr)
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("objdump: %v", err)
	}
	for i := 1; i < len(rets); i++ {
		if rets[i] <= rets[i-1] {
			return nil, fmt.Errorf("objdump: addresses out of order at %#x", rets[i])
		}
	}
	return rets, nil
}

func isRet(words []string) bool {
	for _, w := range words {
		switch w {
		case "rep", "repz", "bnd", "notrack", "data16":
			continue
		case "ret", "retq":
			return true
		}
		return false
	}
	return false
}

// retsIn returns the addresses of sorted in [lo, hi).
func retsIn(sorted []uint64, lo, hi uint64) []uint64 {
	i, j := search(sorted, lo), search(sorted, hi)
	return sorted[i:j]
}

func search(a []uint64, v uint64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := (lo + hi) / 2
		if a[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func sameSet(a, b []uint64) bool {
	seen := map[uint64]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, c := range seen {
		if c != 0 {
			return false
		}
	}
	return true
}

func offsets(addrs []uint64, base uint64) string {
	var s []string
	for _, a := range addrs {
		s = append(s, fmt.Sprintf("+%#x", a-base))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// compare checks two retop lists of the same program built two ways (say
// default and stripped): same names, RET offsets, traceable and entries.
func compare(pathA, pathB string) error {
	a, err := readList(pathA)
	if err != nil {
		return err
	}
	b, err := readList(pathB)
	if err != nil {
		return err
	}
	byName := map[string][]*retopFunc{}
	for i := range b {
		byName[b[i].Name] = append(byName[b[i].Name], &b[i])
	}
	var m mismatches
	for i := range a {
		x := &a[i]
		if len(byName[x.Name]) == 0 {
			m.add("%s: only in %s", x.Name, pathA)
			continue
		}
		// A name can repeat (ABI wrappers): pair same entries first.
		ys, j := byName[x.Name], 0
		for k := range ys {
			if *ys[k].Entry == *x.Entry {
				j = k
				break
			}
		}
		y := ys[j]
		byName[x.Name] = append(ys[:j:j], ys[j+1:]...)
		if *x.Entry != *y.Entry {
			m.add("%s: entry %#x vs %#x", x.Name, *x.Entry, *y.Entry)
		}
		if x.Traceable != y.Traceable {
			m.add("%s: traceable %q vs %q", x.Name, x.Traceable, y.Traceable)
		}
		var ox, oy []uint64
		for _, s := range x.RetSites {
			ox = append(ox, s.Offset)
		}
		for _, s := range y.RetSites {
			oy = append(oy, s.Offset)
		}
		if !sameSet(ox, oy) {
			m.add("%s: RET sites %s vs %s", x.Name, offsets(ox, 0), offsets(oy, 0))
		}
	}
	for name, ys := range byName {
		for range ys {
			m.add("%s: only in %s", name, pathB)
		}
	}
	m.report(fmt.Sprintf("compared %d and %d functions", len(a), len(b)))
	return nil
}

// packages prints each package that owns a function, as Go names it, one a
// line in order ("" for assembly with no package): what the dashboard's
// folding must show.
func packages(path string) error {
	img, err := load(path)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var names []string
	for i := range img.table.Funcs {
		p := img.table.Funcs[i].PackageName()
		if !seen[p] {
			seen[p] = true
			names = append(names, p)
		}
	}
	sort.Strings(names)
	w := bufio.NewWriter(os.Stdout)
	for _, n := range names {
		fmt.Fprintln(w, n)
	}
	return w.Flush()
}
