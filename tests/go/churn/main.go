// churn: a program that keeps the Go runtime busy while retop probes the
// runtime's own functions: allocation and garbage collection, goroutines
// and channels, timers, maps, sorting, JSON, panics that are recovered, and
// stack growth.  Every 50 ms it writes its heartbeat (a counter and its own
// clock) to the -beat file, so a test can tell it is alive and working.
// SIGTERM makes it exit 0.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

var work int64

type record struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

func deep(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%64])
}

func risky(i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	if i%7 == 0 {
		panic("seven")
	}
	return nil
}

func worker(id int, in chan int, out chan int) {
	for i := 0; ; i++ {
		recs := make([]record, 64)
		for k := range recs {
			recs[k] = record{ID: k, Name: strings.Repeat("x", k%17),
				Tags: []string{"a", "b"}, Attrs: map[string]string{"k": fmt.Sprint(k)}}
		}
		b, _ := json.Marshal(recs)
		var back []record
		_ = json.Unmarshal(b, &back)
		sort.Slice(back, func(a, b int) bool { return back[a].Name < back[b].Name })
		_ = risky(i)
		_ = deep(200 + i%300)
		select {
		case in <- i:
		case v := <-out:
			_ = v
		case <-time.After(time.Millisecond):
		}
		atomic.AddInt64(&work, 1)
		if i%50 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

func main() {
	ready := flag.String("ready", "", "file to create once running")
	beat := flag.String("beat", "", "heartbeat file")
	flag.Parse()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	a, b := make(chan int), make(chan int)
	for i := 0; i < 4; i++ {
		go worker(i, a, b)
	}
	go func() {
		for v := range a {
			b <- v
		}
	}()
	go func() {
		for {
			time.Sleep(100 * time.Millisecond)
			runtime.GC()
		}
	}()
	if *ready != "" {
		if err := os.WriteFile(*ready, nil, 0o644); err != nil {
			os.Exit(1)
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	for n := 0; ; n++ {
		select {
		case <-sig:
			os.Exit(0)
		case <-tick.C:
		}
		if *beat != "" {
			line := fmt.Sprintf("%d %d %d\n", n, time.Now().UnixNano(), atomic.LoadInt64(&work))
			tmp := *beat + ".tmp"
			if os.WriteFile(tmp, []byte(line), 0o644) == nil {
				_ = os.Rename(tmp, *beat)
			}
		}
	}
}
