// lifecycle: a service through production's ordinary events. Each SIGUSR1
// runs one round of -calls calls of main.Work on -workers goroutines and
// rewrites -out with the totals so far. SIGUSR2 starts a goroutine blocked
// in main.Hold (a call that never returns in this program), writes -out,
// then exec()s -exec (an argument vector, split on spaces; a '+' inside an
// argument stands for a space, for a nested -exec): the same binary again,
// or another program.
package main

import (
	"flag"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"fixture"
)

var sink int64

// Work is the traced function: a little arithmetic, one RET.
//
//go:noinline
func Work(i int) int64 {
	x := int64(i)
	for j := 0; j < 200; j++ {
		x = x*31 + int64(j)
	}
	return x
}

// Hold tells it has begun, then waits for ever.
//
//go:noinline
func Hold(started, never chan struct{}) {
	started <- struct{}{}
	<-never
}

type result struct {
	Calls  int `json:"calls"`
	Rounds int `json:"rounds"`
	Held   int `json:"held"`
	Pid    int `json:"pid"`
}

func round(calls, workers int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local int64
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= calls {
					break
				}
				local += Work(i)
			}
			mu.Lock()
			sink += local
			mu.Unlock()
		}()
	}
	wg.Wait()
}

func write(r result) {
	if fixture.Opts.Out == "" {
		return
	}
	writeJSON(fixture.Opts.Out, r)
}

func main() {
	execArgs := flag.String("exec", "", "on SIGUSR2, exec() this `ARGV` (split on spaces)")
	fixture.ParseFlags(1000, 4)
	signal.Notify(fixture.Signals, syscall.SIGUSR2)
	r := result{Pid: os.Getpid()}
	fixture.TouchReady()
	for s := range fixture.Signals {
		switch s {
		case syscall.SIGUSR1:
			round(fixture.Opts.Calls, fixture.Opts.Workers)
			r.Calls += fixture.Opts.Calls
			r.Rounds++
			write(r)
		case syscall.SIGUSR2:
			argv := strings.Fields(*execArgs)
			for i := range argv {
				argv[i] = strings.ReplaceAll(argv[i], "+", " ")
			}
			if len(argv) == 0 {
				continue
			}
			started := make(chan struct{})
			go Hold(started, make(chan struct{}))
			<-started
			r.Held++
			write(r)
			err := syscall.Exec(argv[0], argv, os.Environ())
			fixture.Fatal(err)
		default:
			os.Exit(0)
		}
	}
}
