package retopsdk

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// maxMatches caps the /debug/functions?match= answer.
const maxMatches = 1000

// exportFlushEvery is how many export lines are written between flushes.
const exportFlushEvery = 256

// paramJSON is one argument or result.
type paramJSON struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Location *Location `json:"location,omitempty"`
}

// funcDetail is the /debug/functions/{name} answer.
type funcDetail struct {
	funcMeta
	HasDWARF  bool        `json:"has_dwarf"`
	Arguments []paramJSON `json:"arguments"`
	Returns   []paramJSON `json:"returns"`
}

// validation is the /debug/runtime/validate answer (RFD 075).
type validation struct {
	funcMeta
	IsInlined   bool        `json:"is_inlined"`
	HasDWARF    bool        `json:"has_dwarf"`
	Arguments   []paramJSON `json:"arguments"`
	Returns     []paramJSON `json:"returns"`
	Warnings    []string    `json:"warnings,omitempty"`
	ValidatedAt string      `json:"validated_at"`
}

// matchResult is the /debug/functions?match= answer.
type matchResult struct {
	Functions []funcMeta `json:"functions"`
	Truncated bool       `json:"truncated"`
}

// handleFunction serves /debug/functions/{name} and /debug/functions/export.
// The name is the rest of the path, unescaped: Go names contain '/', '*',
// '(' and ')'.
func (s *Server) handleFunction(w http.ResponseWriter, r *http.Request) {
	raw := strings.TrimPrefix(r.URL.EscapedPath(), "/debug/functions/")
	name, err := url.PathUnescape(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad function name escape", raw)
		return
	}
	if name == "export" {
		s.handleExport(w, r)
		return
	}
	b := image(w)
	if b == nil {
		return
	}
	fn, ok := b.lookup(name)
	if !ok || name == "" {
		writeError(w, http.StatusNotFound, "function not found", name)
		return
	}
	d := funcDetail{funcMeta: b.meta(fn), Arguments: []paramJSON{}, Returns: []paramJSON{}}
	if dw := b.dwarf(); dw != nil {
		d.HasDWARF = true
		if df, ok := dw.byPC[fn.Entry]; ok {
			if ps, err := dw.funcParams(df); err == nil {
				d.Arguments, d.Returns = describe(ps, false)
			}
		}
	}
	writeJSON(w, http.StatusOK, d)
}

// handleExport streams every function as JSON lines, flushing as it goes
// so that memory stays flat whatever the binary's size.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	b := image(w)
	if b == nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	flusher, _ := w.(http.Flusher)
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := json.NewEncoder(bw) // one object per line
	fs := b.sortedFuncs()
	for i := range fs {
		if err := enc.Encode(b.meta(&fs[i])); err != nil {
			return // client went away
		}
		if (i+1)%exportFlushEvery == 0 {
			if bw.Flush() != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			if r.Context().Err() != nil {
				return
			}
		}
	}
	_ = bw.Flush()
}

// handleMatch serves /debug/functions?match=GLOB (empty: every function).
func (s *Server) handleMatch(w http.ResponseWriter, r *http.Request) {
	pattern := r.URL.Query().Get("match")
	if pattern == "" {
		pattern = "*"
	}
	if _, err := path.Match(pattern, ""); err != nil {
		writeError(w, http.StatusBadRequest, "invalid match pattern: "+err.Error(), pattern)
		return
	}
	b := image(w)
	if b == nil {
		return
	}
	res := matchResult{Functions: []funcMeta{}}
	fs := b.sortedFuncs()
	for i := range fs {
		if ok, _ := path.Match(pattern, fs[i].Name); !ok && pattern != "*" {
			continue
		}
		if len(res.Functions) == maxMatches {
			res.Truncated = true
			break
		}
		res.Functions = append(res.Functions, b.meta(&fs[i]))
	}
	writeJSON(w, http.StatusOK, res)
}

// handleValidate serves /debug/runtime/validate?func=NAME: the entry as
// the running process sees it, and the ABI location of every argument.
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("func")
	if name == "" {
		writeError(w, http.StatusBadRequest, "missing func parameter", "")
		return
	}
	b := image(w)
	if b == nil {
		return
	}
	v := validation{funcMeta: funcMeta{Name: name}, Arguments: []paramJSON{}, Returns: []paramJSON{}}
	dw := b.dwarf()
	v.HasDWARF = dw != nil
	var ps []param
	var perr error
	if fn, ok := b.lookup(name); ok {
		m := b.meta(fn)
		addr := m.Address
		v.funcMeta = m
		v.Address = 0 // set below only when the load bias is known
		if b.biasOK {
			v.Address = addr
			v.IsInlined = !isRealEntry(v.Address, name)
		} else {
			v.IsInlined = true
			v.Warnings = append(v.Warnings, "load bias unknown: runtime address not resolved")
		}
		if dw != nil {
			if df, ok := dw.byPC[fn.Entry]; ok {
				ps, perr = dw.funcParams(df)
			} else {
				v.Warnings = append(v.Warnings, "no DWARF subprogram at the entry: arguments unknown")
			}
		}
	} else if off, ok := b.lookupDwarfOnly(name); ok {
		// Only inlined copies exist: there is no entry to attach to.
		v.IsInlined = true
		ps, perr = dw.params(off)
		v.Warnings = append(v.Warnings, "function exists only inlined into its callers: no entry address")
	} else {
		writeError(w, http.StatusNotFound, "function not found", name)
		return
	}
	if rp, ok := describedParams(name); ok && ps == nil {
		// No DWARF for it: the parameters registered with Describe.
		ps, perr = rp, nil
		v.Warnings = append(v.Warnings, "arguments from reflection (retopsdk.Describe)")
	} else if dw == nil {
		v.Warnings = append(v.Warnings, "binary has no DWARF: arguments unknown")
	}
	if perr != nil {
		v.Warnings = append(v.Warnings, "DWARF parameters: "+perr.Error())
	}
	v.Arguments, v.Returns = describe(ps, true)
	v.ValidatedAt = time.Now().UTC().Format(time.RFC3339)
	writeJSON(w, http.StatusOK, v)
}

// describe splits parameters into arguments and results, with their ABI
// locations when withLoc.
func describe(ps []param, withLoc bool) (args, rets []paramJSON) {
	var at, rt []*TypeDesc
	args, rets = []paramJSON{}, []paramJSON{}
	for _, p := range ps {
		j := paramJSON{Name: p.Name, Type: p.Type.Name, Size: p.Type.Size}
		if p.IsResult {
			rets = append(rets, j)
			rt = append(rt, p.Type)
		} else {
			args = append(args, j)
			at = append(at, p.Type)
		}
	}
	if withLoc {
		al, rl := AssignAMD64(at, rt)
		for i := range args {
			args[i].Location = &al[i]
		}
		for i := range rets {
			rets[i].Location = &rl[i]
		}
	}
	return args, rets
}
