// hostile: a test SDK server that misbehaves on request.
//
// It speaks the retop SDK API (GET /debug/functions/export,
// /debug/functions/{name}, /debug/runtime/validate?func=NAME) and picks its
// behaviour from the first path element, /MODE/debug/..., or from -mode when
// the path has none.  It listens on -addr (default 127.0.0.1 with a port the
// OS picks) and prints the port on a line of its own once it accepts.
//
// Modes:
//
//	good        serve -export (JSON lines) and validate from it
//	malformed   line 12 of the export is broken JSON; validate truncated
//	truncated   the export ends in the middle of a record
//	garbage     binary junk instead of JSON
//	wrongtypes  name as number, offset as string, negative, float, 2^70, missing
//	huge        a 100 MB body, streamed
//	hang        headers and a few bytes, then nothing until the client leaves
//	silent      accepts and never answers
//	midinsn     offsets one byte into each function
//	outside     offsets beyond the text segment
//	ctrlnames   names with \u0001, \n, ESC sequences, C1 CSI, bidi override
//	status500   500 twice, then the good answer (repeats every 3 requests)
//	always500   500, always
//	auth        401 unless "Authorization: Bearer <-token>"
//	redirect    302 to /good/...
//	othername   validate answers for another function
//	slow        the export at once; each validate after -delay (default 5 s)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

type record struct {
	Name      string `json:"name"`
	Address   uint64 `json:"address"`
	Entry     uint64 `json:"entry"`
	Offset    uint64 `json:"offset"`
	SizeBytes uint64 `json:"size_bytes"`
	HasSize   bool   `json:"has_size"`
	File      string `json:"file"`
	Line      int    `json:"line"`
}

type server struct {
	mode    string
	token   string
	raw     []byte
	records []record
	byName  map[string]record
	mu      sync.Mutex
	counts  map[string]int
}

var modes = map[string]bool{
	"good": true, "malformed": true, "truncated": true, "garbage": true,
	"wrongtypes": true, "huge": true, "hang": true, "silent": true,
	"midinsn": true, "outside": true, "ctrlnames": true, "status500": true,
	"always500": true, "auth": true, "redirect": true, "othername": true,
	"slow": true,
}

// Offsets this far past the real ones are beyond any fixture's text.
const outsideShift = 1 << 32

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	export := flag.String("export", "", "JSON lines file served as the export")
	mode := flag.String("mode", "good", "mode for paths without a mode prefix")
	token := flag.String("token", "", "bearer token the auth mode requires")
	flag.DurationVar(&slowDelay, "delay", 5*time.Second, "how long the slow mode's validate takes")
	flag.Parse()
	if !modes[*mode] {
		log.Fatalf("unknown mode %q", *mode)
	}
	s := &server{mode: *mode, token: *token, byName: map[string]record{}, counts: map[string]int{}}
	if err := s.load(*export); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	log.Fatal(http.Serve(ln, s))
}

func (s *server) load(path string) error {
	if path == "" {
		s.raw = []byte(`{"name":"main.main","address":4198400,"entry":4198400,"offset":4096,"size_bytes":64,"has_size":true,"file":"/src/main.go","line":10}` + "\n")
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s.raw = b
	}
	sc := bufio.NewScanner(bytes.NewReader(s.raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("export file: %v", err)
		}
		s.records = append(s.records, r)
		s.byName[r.Name] = r
	}
	return sc.Err()
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mode, path := s.mode, r.URL.Path
	if parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2); len(parts) == 2 && modes[parts[0]] {
		mode, path = parts[0], "/"+parts[1]
	}
	if !s.gate(mode, w, r) {
		return
	}
	switch {
	case path == "/debug/functions/export":
		s.export(mode, w, r)
	case path == "/debug/runtime/validate":
		s.validate(mode, w, r, r.URL.Query().Get("func"))
	case strings.HasPrefix(path, "/debug/functions/"):
		s.function(mode, w, strings.TrimPrefix(path, "/debug/functions/"))
	default:
		writeJSON(w, 404, map[string]string{"error": "no such endpoint"})
	}
}

// gate handles the modes that do not depend on the endpoint; false when the
// request has been answered (or deliberately not).
func (s *server) gate(mode string, w http.ResponseWriter, r *http.Request) bool {
	switch mode {
	case "auth":
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			writeJSON(w, 401, map[string]string{"error": "unauthorized"})
			return false
		}
	case "status500":
		s.mu.Lock()
		n := s.counts[mode]
		s.counts[mode]++
		s.mu.Unlock()
		if n%3 != 2 {
			writeJSON(w, 500, map[string]string{"error": "try again"})
			return false
		}
	case "always500":
		writeJSON(w, 500, map[string]string{"error": "broken"})
		return false
	case "redirect":
		http.Redirect(w, r, "/good"+r.URL.RequestURI(), http.StatusFound)
		return false
	case "silent":
		wait(r.Context())
		return false
	case "hang":
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		w.Write([]byte(`{"name":"main.main",`))
		w.(http.Flusher).Flush()
		wait(r.Context())
		return false
	case "huge":
		stream(w, r.Context(), 100<<20)
		return false
	case "garbage":
		w.WriteHeader(200)
		w.Write([]byte("\x00\xff\xfe<html>\x1b[2J not json }}}{{{\n\x01\x02"))
		return false
	}
	return true
}

var slowDelay time.Duration

func wait(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(120 * time.Second):
	}
}

// stream writes n bytes of valid JSON lines without ever holding them.
func stream(w http.ResponseWriter, ctx context.Context, n int) {
	line := []byte(`{"name":"main.huge","address":4198400,"entry":4198400,"offset":4096,"size_bytes":64,"has_size":true,"file":"/src/huge.go","line":1}` + "\n")
	chunk := bytes.Repeat(line, 65536/len(line))
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	for sent := 0; sent < n && ctx.Err() == nil; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *server) shifted(mode string, r record) record {
	switch mode {
	case "midinsn":
		r.Offset++
	case "outside":
		r.Offset += outsideShift
	}
	return r
}

func (s *server) export(mode string, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	switch mode {
	case "malformed":
		w.WriteHeader(200)
		for i := 1; i <= 11; i++ {
			fmt.Fprintf(w, `{"name":"main.f%d","address":%d,"entry":%d,"offset":%d,"size_bytes":16,"has_size":true,"file":"/src/a.go","line":%d}`+"\n", i, 4198400+16*i, 4198400+16*i, 4096+16*i, i)
		}
		fmt.Fprint(w, `{"name":"main.broken","address":4198400,"entry":}`+"\n")
		fmt.Fprint(w, `{"name":"main.after","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"","line":1}`+"\n")
	case "truncated":
		w.WriteHeader(200)
		w.Write(s.raw)
		fmt.Fprint(w, `{"name":"main.cut","address":4198400,"ent`)
	case "wrongtypes":
		w.WriteHeader(200)
		fmt.Fprint(w, wrongTypes)
	case "ctrlnames":
		w.WriteHeader(200)
		fmt.Fprint(w, ctrlNames)
	case "midinsn", "outside":
		w.WriteHeader(200)
		enc := json.NewEncoder(w)
		for _, rec := range s.records {
			enc.Encode(s.shifted(mode, rec))
		}
	default:
		w.WriteHeader(200)
		w.Write(s.raw)
	}
}

// One fault per line; the last line is the only good record.
const wrongTypes = `{"name":42,"address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.offsetstr","address":1,"entry":1,"offset":"4096","size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.negative","address":1,"entry":-1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.float","address":1,"entry":1,"offset":4096.5,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.big","address":1180591620717411303424,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.missing","address":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.hassize","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":"yes","file":"a.go","line":1}
{"name":null,"address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
[1,2,3]
{"name":"main.good","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
`

// Names a terminal would act on; the last line is the only good record.
const ctrlNames = `{"name":"main.\u0001soh","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.new\nline","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.\u001b[2J\u001b]0;pwned\u0007","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.c1\u009b31m","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.bidi\u202eevil","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.raw` + "\x1b" + `","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
{"name":"main.ok","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go\u0000.txt","line":1}
{"name":"main.good","address":1,"entry":1,"offset":1,"size_bytes":1,"has_size":true,"file":"a.go","line":1}
`

type location struct {
	Type         string `json:"type"`
	Register     *int   `json:"register,omitempty"`
	RegisterName string `json:"register_name,omitempty"`
	Offset       *int   `json:"offset,omitempty"`
	Base         string `json:"base,omitempty"`
}

type arg struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Size     int       `json:"size"`
	Location *location `json:"location,omitempty"`
}

func sampleArgs() ([]arg, []arg) {
	zero, eight := 0, 8
	return []arg{
			{"ctx", "context.Context", 16, &location{Type: "register", Register: &zero, RegisterName: "RAX"}},
			{"overflow", "int32", 4, &location{Type: "stack", Offset: &eight, Base: "SP"}},
		}, []arg{
			{"", "error", 16, &location{Type: "register", Register: &zero, RegisterName: "RAX"}},
		}
}

func (s *server) validate(mode string, w http.ResponseWriter, r *http.Request, name string) {
	if mode == "slow" {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(slowDelay):
		}
	}
	rec, ok := s.byName[name]
	if !ok {
		writeJSON(w, 404, map[string]string{"error": "function not found", "name": name})
		return
	}
	rec = s.shifted(mode, rec)
	args, rets := sampleArgs()
	v := map[string]interface{}{
		"name": rec.Name, "address": rec.Address, "entry": rec.Entry, "offset": rec.Offset,
		"file": rec.File, "line": rec.Line, "is_inlined": false, "arguments": args,
		"returns": rets, "validated_at": time.Now().UTC().Format(time.RFC3339),
	}
	switch mode {
	case "malformed", "truncated":
		w.WriteHeader(200)
		fmt.Fprintf(w, `{"name":%q,"entry":%d,"offset":`, rec.Name, rec.Entry)
		return
	case "wrongtypes":
		v["offset"] = fmt.Sprint(rec.Offset)
	case "ctrlnames":
		v["file"] = "/src/\x1b[31mred.go"
	case "othername":
		v["name"] = "main.somethingElse"
	}
	writeJSON(w, 200, v)
}

func (s *server) function(mode string, w http.ResponseWriter, name string) {
	rec, ok := s.byName[name]
	if !ok {
		writeJSON(w, 404, map[string]string{"error": "function not found", "name": name})
		return
	}
	rec = s.shifted(mode, rec)
	args, rets := sampleArgs()
	writeJSON(w, 200, struct {
		record
		Arguments []arg `json:"arguments"`
		Returns   []arg `json:"returns"`
	}{rec, args, rets})
}
