// The fixture protocol, shared by every fixture in tests/go. Each fixture is
// its own module with no dependencies, so this file is copied, not imported:
// keep the copies identical (build-fixtures.sh checks that).
package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/signal"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type options struct {
	calls, workers int
	out, ready     string
	exit, loop     bool
}

var (
	opts    options
	signals = make(chan os.Signal, 4)
)

func parseFlags(defCalls, defWorkers int) {
	flag.IntVar(&opts.calls, "calls", defCalls, "total calls to make")
	flag.IntVar(&opts.workers, "workers", defWorkers, "goroutines making the calls")
	flag.StringVar(&opts.out, "out", "", "write the result JSON to `FILE`")
	flag.StringVar(&opts.ready, "ready", "", "touch `FILE` once waiting for SIGUSR1")
	flag.BoolVar(&opts.exit, "exit", false, "exit after writing the result")
	flag.BoolVar(&opts.loop, "loop", false, "ignore -calls and work forever")
	flag.Parse()
	if opts.workers < 1 {
		opts.workers = 1
	}
	// Catch the signals before announcing readiness: an uncaught SIGUSR1
	// would kill the process.
	signal.Notify(signals, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT)
}

func touchReady() {
	if opts.ready != "" {
		if err := os.WriteFile(opts.ready, nil, 0o644); err != nil {
			fatal(err)
		}
	}
}

// waitStart announces readiness and blocks until SIGUSR1 (exits on SIGTERM).
func waitStart() {
	touchReady()
	for s := range signals {
		if s == syscall.SIGUSR1 {
			return
		}
		os.Exit(0)
	}
}

// finish writes the result atomically, then idles unless -exit was given.
func finish(result interface{}) {
	if opts.out != "" {
		data, err := json.Marshal(result)
		if err != nil {
			fatal(err)
		}
		tmp := opts.out + ".tmp"
		if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
			fatal(err)
		}
		if err := os.Rename(tmp, opts.out); err != nil {
			fatal(err)
		}
	}
	if opts.exit {
		os.Exit(0)
	}
	for s := range signals {
		if s != syscall.SIGUSR1 {
			os.Exit(0)
		}
	}
}

func fatal(err error) {
	os.Stderr.WriteString("fixture: " + err.Error() + "\n")
	os.Exit(1)
}

// runWorkers calls work(i) for i = 0..calls-1 spread over the workers
// (forever with -loop). Each index is used once, so outcomes chosen by i
// are deterministic however the calls are scheduled.
func runWorkers(work func(i int)) {
	var next int64 = -1
	var wg sync.WaitGroup
	for w := 0; w < opts.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(atomic.AddInt64(&next, 1))
				if !opts.loop && i >= opts.calls {
					return
				}
				work(i)
			}
		}()
	}
	wg.Wait()
}

// recorder keeps every duration measured around a traced call, by function.
// In -loop mode nothing is kept, so memory stays flat.
type recorder struct {
	mu sync.Mutex
	d  map[string][]time.Duration
}

var rec = recorder{d: map[string][]time.Duration{}}

func (r *recorder) add(name string, d time.Duration) {
	if opts.loop {
		return
	}
	r.mu.Lock()
	r.d[name] = append(r.d[name], d)
	r.mu.Unlock()
}

// timed runs f and records its duration under name.
func timed(name string, f func()) {
	start := time.Now()
	f()
	rec.add(name, time.Since(start))
}

type summary struct {
	Calls  int   `json:"calls"`
	MeanNs int64 `json:"mean_ns"`
	P50Ns  int64 `json:"p50_ns"`
	P99Ns  int64 `json:"p99_ns"`
	MaxNs  int64 `json:"max_ns"`
}

// summarize uses nearest-rank percentiles.
func (r *recorder) summarize(name string) summary {
	r.mu.Lock()
	ds := append([]time.Duration(nil), r.d[name]...)
	r.mu.Unlock()
	s := summary{Calls: len(ds)}
	if len(ds) == 0 {
		return s
	}
	sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	rank := func(p int) int64 { return int64(ds[(len(ds)*p+99)/100-1]) }
	s.MeanNs = int64(sum) / int64(len(ds))
	s.P50Ns, s.P99Ns, s.MaxNs = rank(50), rank(99), int64(ds[len(ds)-1])
	return s
}

func (r *recorder) perFunc(names ...string) map[string]summary {
	m := map[string]summary{}
	for _, n := range names {
		m[n] = r.summarize(n)
	}
	return m
}

// result is the JSON object every fixture writes: the summary of top, the
// unit a test counts as "a call", then per_func for every traced function.
func result(top string, names ...string) map[string]interface{} {
	s := rec.summarize(top)
	return map[string]interface{}{
		"calls": s.Calls, "mean_ns": s.MeanNs, "p50_ns": s.P50Ns,
		"p99_ns": s.P99Ns, "max_ns": s.MaxNs, "per_func": rec.perFunc(names...),
	}
}
