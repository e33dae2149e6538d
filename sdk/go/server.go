// Package retopsdk lets a Go program describe its own functions to the
// retop tracer over HTTP: entry addresses, file offsets for uprobes,
// sizes, source positions, and where each argument and result lives under
// the Go internal ABI.
//
// One call starts it:
//
//	srv, err := retopsdk.Start(retopsdk.Options{Addr: "127.0.0.1:9002"})
//	if err != nil { ... }
//	defer srv.Close()
//
// The metadata is read from the process's own executable (/proc/self/exe:
// the pclntab, always present, and DWARF when the binary has it) on the
// first request, never at Start and never on the application's paths.
//
// Endpoints, all GET, all JSON:
//
//	/debug/functions/{name}           one function, with arguments and results
//	/debug/functions/export           every function, one JSON object per line
//	/debug/functions?match=GLOB       matching functions (path.Match), at most 1000
//	/debug/runtime/validate?func=NAME the live entry and ABI argument locations
package retopsdk

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Options configure Start.
type Options struct {
	// Addr is the listen address, host:port. Default "127.0.0.1:9002";
	// port 0 picks a free port (see Server.Addr).
	Addr string
	// AllowRemote must be true to listen on anything but loopback: the
	// endpoints reveal the program's layout.
	AllowRemote bool
	// Token, when not empty, must be sent by every request as
	// "Authorization: Bearer TOKEN".
	Token string
}

// DefaultAddr is where retop looks for the SDK first.
const DefaultAddr = "127.0.0.1:9002"

// Server is a running SDK endpoint.
type Server struct {
	ln    net.Listener
	http  *http.Server
	token string
	done  chan struct{}
}

// Start listens on opts.Addr and serves the SDK endpoints in the
// background until Close.
func Start(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	if !opts.AllowRemote {
		if err := checkLoopback(addr); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("retopsdk: %w", err)
	}
	s := &Server{ln: ln, token: opts.Token, done: make(chan struct{})}
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// checkLoopback refuses an address that is not loopback-only.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("retopsdk: bad address %q: %w", addr, err)
	}
	ok := false
	if ip := net.ParseIP(host); ip != nil {
		ok = ip.IsLoopback()
	} else if strings.EqualFold(host, "localhost") {
		ok = true
	}
	if !ok {
		return fmt.Errorf("retopsdk: refusing to listen on %s: set AllowRemote to expose function metadata beyond this host", addr)
	}
	return nil
}

// Addr returns the address the server is bound to.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, waiting up to a second for requests in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	<-s.done
	return err
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/functions", s.handleMatch)
	mux.HandleFunc("/debug/functions/", s.handleFunction)
	mux.HandleFunc("/debug/runtime/validate", s.handleValidate)
	return s.guard(mux)
}

// guard enforces the method and the token before any handler runs.
func (s *Server) guard(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.token != "" {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="retopsdk"`)
				writeError(w, http.StatusUnauthorized, "missing or wrong bearer token", "")
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "method not allowed", "")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiError is every error body.
type apiError struct {
	Error string `json:"error"`
	Name  string `json:"name,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg, name string) {
	writeJSON(w, code, apiError{Error: msg, Name: name})
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// image returns the loaded function table, or writes a 500.
func image(w http.ResponseWriter) *exeImage {
	b, err := self()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error(), "")
		return nil
	}
	return b
}
