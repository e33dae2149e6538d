package retopsdk

import (
	"bufio"
	"debug/elf"
	"debug/gosym"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// e2ePair splits across an integer and a float register.
type e2ePair struct {
	N int
	F float64
}

type e2eRecv struct{ n int }

// e2eMixed is the function the end-to-end tests ask about. Arguments:
// a RAX; s RBX+RCX; p RDI+X0; xs RSI+R8+R9; f X1; e R10+R11; big [2]int on
// the stack at SP+8; one [1]int8 would be an int register but none is
// left, so SP+24. Results: n RAX, err RBX+RCX.
//
//go:noinline
func e2eMixed(a int, s string, p e2ePair, xs []byte, f float32, e error, big [2]int, one [1]int8) (n int, err error) {
	if e != nil {
		return 0, e
	}
	return a + len(s) + p.N + int(p.F) + len(xs) + int(f) + big[0] + big[1] + int(one[0]), nil
}

//go:noinline
func (r *e2eRecv) add(k int) int { r.n += k; return r.n }

// e2eInlined is only ever inlined: the linker drops its out-of-line copy,
// so it has no entry, and DWARF keeps it as an abstract subprogram.
func e2eInlined(a, b int) int { return a*b + 1 }

// e2eLeaf has no stack check (a leaf with no frame), so its very first
// instruction is e2eInner's inlined body. (Go 1.19 still attributes that
// PC to e2eLeaf; isRealEntry copes either way.)
//
//go:noinline
func e2eLeaf(p *int) int { return e2eInner(p) + 1 }

func e2eInner(p *int) int { return *p * 3 }

var e2eSink int

func init() {
	e2eSink = e2eInlined(len(os.Args), 3)
	e2eSink += (&e2eRecv{}).add(1)
	n, _ := e2eMixed(1, "x", e2ePair{}, nil, 0, nil, [2]int{}, [1]int8{})
	e2eSink += n + e2eLeaf(&n)
}

// start runs an SDK server for one test.
func start(t *testing.T, opts Options) string {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return "http://" + s.Addr()
}

// get fetches url and decodes its JSON body into v (when not nil),
// returning the status code.
func get(t *testing.T, u, token string, v interface{}) int {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", u, ct)
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	return resp.StatusCode
}

func TestFunctionEndpoint(t *testing.T) {
	base := start(t, Options{})
	const name = "retopsdk.e2eMixed"
	var d funcDetail
	if code := get(t, base+"/debug/functions/"+url.PathEscape(name), "", &d); code != 200 {
		t.Fatalf("status %d", code)
	}
	if d.Name != name {
		t.Errorf("name %q", d.Name)
	}
	pc := uint64(reflect.ValueOf(e2eMixed).Pointer())
	if d.Address != pc {
		t.Errorf("address %#x, runtime PC %#x", d.Address, pc)
	}
	// go test links a non-PIE executable: link-time = runtime address.
	if d.Entry != pc {
		t.Errorf("entry %#x, want %#x", d.Entry, pc)
	}

	f, err := elf.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seg *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= d.Entry && d.Entry < p.Vaddr+p.Memsz {
			seg = p
		}
	}
	if seg == nil {
		t.Fatalf("no executable PT_LOAD holds %#x", d.Entry)
	}
	if want := d.Entry - seg.Vaddr + seg.Off; d.Offset != want {
		t.Errorf("offset %#x, want %#x", d.Offset, want)
	}
	// The bytes at the file offset are the function's code in memory.
	code := make([]byte, 16)
	if _, err := seg.ReadAt(code, int64(d.Offset-seg.Off)); err != nil {
		t.Fatal(err)
	}
	mem := (*[16]byte)(unsafePointer(uintptr(pc)))
	if string(code) != string(mem[:]) {
		t.Errorf("file bytes at offset % x differ from memory % x", code, mem[:])
	}

	if !strings.HasSuffix(d.File, "/sdk_test.go") || d.Line == 0 {
		t.Errorf("position %s:%d", d.File, d.Line)
	}
	if d.HasDWARF != hasDWARF {
		t.Errorf("has_dwarf %v in a binary where it is %v", d.HasDWARF, hasDWARF)
	}
	if !hasDWARF {
		// Stripped: the size is the pclntab extent without the int3
		// padding, and nothing is known about the arguments.
		fn := runtime.FuncForPC(uintptr(pc))
		if !d.HasSize || d.SizeBytes == 0 || d.SizeSource != "pclntab" ||
			runtime.FuncForPC(uintptr(pc+d.SizeBytes-1)).Entry() != fn.Entry() {
			t.Errorf("stripped size %d (has_size %v, %s)", d.SizeBytes, d.HasSize, d.SizeSource)
		}
		if last := (*[1]byte)(unsafePointer(uintptr(pc + d.SizeBytes - 1))); last[0] == 0xcc {
			t.Error("stripped size includes int3 padding")
		}
		if len(d.Arguments) != 0 || len(d.Returns) != 0 {
			t.Errorf("arguments without DWARF: %+v", d.Arguments)
		}
		return
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var symSize uint64
	for _, s := range syms {
		if s.Name == name {
			symSize = s.Size
		}
	}
	if !d.HasSize || d.SizeBytes == 0 || d.SizeBytes != symSize || d.SizeSource != "symtab" {
		t.Errorf("size %d (has_size %v, %s), symbol size %d", d.SizeBytes, d.HasSize, d.SizeSource, symSize)
	}
	var args, rets []string
	for _, a := range d.Arguments {
		args = append(args, a.Name+" "+a.Type)
	}
	for _, r := range d.Returns {
		rets = append(rets, r.Name+" "+r.Type)
	}
	wantArgs := "a int,s string,p retopsdk.e2ePair,xs []uint8,f float32,e error,big [2]int,one [1]int8"
	if got := strings.Join(args, ","); got != wantArgs {
		t.Errorf("arguments\n got %s\nwant %s", got, wantArgs)
	}
	if got := strings.Join(rets, ","); got != "n int,err error" {
		t.Errorf("results %s", got)
	}
	if d.Arguments[2].Size != 16 || d.Arguments[7].Size != 1 {
		t.Errorf("sizes: %+v", d.Arguments)
	}
}

func TestValidate(t *testing.T) {
	base := start(t, Options{})
	var v validation
	if code := get(t, base+"/debug/runtime/validate?func=retopsdk.e2eMixed", "", &v); code != 200 {
		t.Fatalf("status %d", code)
	}
	if v.IsInlined {
		t.Error("is_inlined true for a real function")
	}
	if pc := uint64(reflect.ValueOf(e2eMixed).Pointer()); v.Address != pc || v.Entry != pc {
		t.Errorf("address %#x entry %#x, runtime PC %#x", v.Address, v.Entry, pc)
	}
	if v.ValidatedAt == "" {
		t.Error("no validated_at")
	}
	if hasDWARF {
		checkMixedLocations(t, v)
	} else if v.HasDWARF || len(v.Arguments) != 0 || len(v.Warnings) == 0 {
		t.Errorf("stripped: %+v", v)
	}

	// A method: the receiver is the first argument.
	var m validation
	name := "retopsdk.(*e2eRecv).add"
	if code := get(t, base+"/debug/runtime/validate?func="+url.QueryEscape(name), "", &m); code != 200 || m.IsInlined {
		t.Fatalf("%s: status %d, %+v", name, code, m)
	}
	if hasDWARF && (len(m.Arguments) != 2 || m.Arguments[0].Name != "r" ||
		m.Arguments[0].Location.String() != "RAX" || m.Arguments[1].Location.String() != "RBX") {
		t.Errorf("%s arguments %+v", name, m.Arguments)
	}

	// A frameless leaf whose body starts with inlined code is still a
	// real function.
	var leaf validation
	if code := get(t, base+"/debug/runtime/validate?func=retopsdk.e2eLeaf", "", &leaf); code != 200 || leaf.IsInlined {
		t.Errorf("e2eLeaf: status %d, is_inlined %v", code, leaf.IsInlined)
	}

	// A function that only exists inlined has no entry; only DWARF knows
	// its name.
	var in validation
	code := get(t, base+"/debug/runtime/validate?func=retopsdk.e2eInlined", "", &in)
	switch {
	case hasDWARF && (code != 200 || !in.IsInlined || in.Address != 0 || len(in.Arguments) != 2):
		t.Errorf("inlined: %d %+v", code, in)
	case !hasDWARF && code != 404:
		t.Errorf("inlined, stripped: %d %+v", code, in)
	}

	var e apiError
	if code := get(t, base+"/debug/runtime/validate?func=main.NoSuchThing", "", &e); code != 404 ||
		e.Error != "function not found" || e.Name != "main.NoSuchThing" {
		t.Errorf("unknown: %d %+v", code, e)
	}
}

// checkMixedLocations checks the ABI locations of e2eMixed's arguments and
// results, as written in its doc comment.
func checkMixedLocations(t *testing.T, v validation) {
	t.Helper()
	var got []string
	for _, a := range v.Arguments {
		got = append(got, a.Name+"="+a.Location.String())
	}
	want := "a=RAX s=RBX+RCX p=RDI+X0 xs=RSI+R8+R9 f=X1 e=R10+R11 big=SP+8 one=SP+24"
	if strings.Join(got, " ") != want {
		t.Errorf("argument locations\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if l := v.Arguments[0].Location; l.Type != "register" || *l.Register != 0 || l.RegisterName != "RAX" {
		t.Errorf("a: %+v", l)
	}
	if l := v.Arguments[6].Location; l.Type != "stack" || *l.Offset != 8 || l.Base != "SP" {
		t.Errorf("big: %+v", l)
	}
	got = got[:0]
	for _, r := range v.Returns {
		got = append(got, r.Name+"="+r.Location.String())
	}
	if strings.Join(got, " ") != "n=RAX err=RBX+RCX" {
		t.Errorf("result locations %s", got)
	}
}

func TestMethodNameInPath(t *testing.T) {
	base := start(t, Options{})
	name := "retopsdk.(*e2eRecv).add"
	for _, p := range []string{url.PathEscape(name), name} {
		var d funcDetail
		if code := get(t, base+"/debug/functions/"+p, "", &d); code != 200 || d.Name != name {
			t.Errorf("%s: %d %q", p, code, d.Name)
		}
	}
}

func TestNotFound(t *testing.T) {
	base := start(t, Options{})
	var e apiError
	if code := get(t, base+"/debug/functions/main.NoSuchThing", "", &e); code != 404 {
		t.Errorf("status %d", code)
	}
	if e.Error != "function not found" || e.Name != "main.NoSuchThing" {
		t.Errorf("body %+v", e)
	}
}

func TestToken(t *testing.T) {
	base := start(t, Options{Token: "s3cret"})
	u := base + "/debug/functions/retopsdk.e2eMixed"
	var e apiError
	if code := get(t, u, "", &e); code != 401 || e.Error == "" {
		t.Errorf("no token: %d %+v", code, e)
	}
	if code := get(t, u, "wrong", nil); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	if code := get(t, u, "s3cret", nil); code != 200 {
		t.Errorf("right token: %d", code)
	}
}

func TestStartRefusesRemote(t *testing.T) {
	_, err := Start(Options{Addr: "0.0.0.0:0"})
	want := "retopsdk: refusing to listen on 0.0.0.0:0: set AllowRemote to expose function metadata beyond this host"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v", err)
	}
	for _, a := range []string{":0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		if _, err := Start(Options{Addr: a}); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("%s: %v", a, err)
		}
	}
	for _, a := range []string{"127.0.0.1:0", "localhost:0"} {
		s, err := Start(Options{Addr: a})
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		s.Close()
	}
	s, err := Start(Options{Addr: "0.0.0.0:0", AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// gosymCount counts the functions of the test binary with debug/gosym,
// independently of the SDK's loader.
func gosymCount(t *testing.T) int {
	f, err := elf.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := f.Section(".gopclntab").Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	var text uint64
	for _, s := range syms {
		if s.Name == "runtime.text" {
			text = s.Value
		}
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil {
		t.Fatal(err)
	}
	return len(tab.Funcs)
}

func TestExport(t *testing.T) {
	base := start(t, Options{})
	resp, err := http.Get(base + "/debug/functions/export")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.ContentLength != -1 {
		t.Errorf("export not streamed: Content-Length %d", resp.ContentLength)
	}
	sc := bufio.NewScanner(resp.Body)
	n, found := 0, false
	for sc.Scan() {
		var m map[string]interface{}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if _, ok := m["arguments"]; ok {
			t.Fatal("export lines carry arguments")
		}
		if m["name"] == "retopsdk.e2eMixed" {
			found = true
		}
		n++
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if want := gosymCount(t); n != want {
		t.Errorf("%d lines, gosym has %d functions", n, want)
	}
	if !found {
		t.Error("retopsdk.e2eMixed not exported")
	}
}

func TestMatch(t *testing.T) {
	base := start(t, Options{})
	var m matchResult
	if code := get(t, base+"/debug/functions?match="+url.QueryEscape("retopsdk.e2e*"), "", &m); code != 200 {
		t.Fatalf("status %d", code)
	}
	names := map[string]bool{}
	for _, f := range m.Functions {
		names[f.Name] = true
	}
	if !names["retopsdk.e2eMixed"] || m.Truncated {
		t.Errorf("match: %v truncated %v", names, m.Truncated)
	}
	var all matchResult
	get(t, base+"/debug/functions?match=*", "", &all)
	if !all.Truncated || len(all.Functions) != maxMatches {
		t.Errorf("match=*: %d functions, truncated %v", len(all.Functions), all.Truncated)
	}
	var e apiError
	if code := get(t, base+"/debug/functions?match="+url.QueryEscape("main.[x"), "", &e); code != 400 || e.Error == "" {
		t.Errorf("bad pattern: %d %+v", code, e)
	}
}
