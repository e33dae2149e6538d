// failing: functions whose last result is error, each failing on a known
// share of its calls, and counting its own failures as Go sees them:
// err != nil, so a typed nil pointer returned as an error is a failure.
//
//	Fail(i) error             fails fast: i%3 == 0 (*main.NotFoundError),
//	                          else i%5 == 0 (*errors.errorString); 2 ms
//	                          otherwise; called from main.viaA (even i)
//	                          and main.viaB (odd i)
//	Count(i) (int, error)     fails slow: i%4 == 1 (*fmt.wrapError), 3 ms;
//	                          1 ms otherwise
//	Name(i) (string, error)   i%5 == 2 (main.CodeError, a value)
//	TypedNil(i) error         i%2 == 0: a nil *main.NotFoundError
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"fixture"
)

type NotFoundError struct{ Key int }

func (e *NotFoundError) Error() string { return fmt.Sprintf("key %d not found", e.Key) }

type CodeError struct{ Code int }

func (e CodeError) Error() string { return fmt.Sprintf("code %d", e.Code) }

var errClosed = errors.New("closed")

//go:noinline
func Fail(i int) error {
	if i%3 == 0 {
		return &NotFoundError{Key: i}
	}
	if i%5 == 0 {
		return errClosed
	}
	time.Sleep(2 * time.Millisecond)
	return nil
}

//go:noinline
func Count(i int) (int, error) {
	if i%4 == 1 {
		time.Sleep(3 * time.Millisecond)
		return 0, fmt.Errorf("count %d: %w", i, errClosed)
	}
	time.Sleep(time.Millisecond)
	return i * 2, nil
}

//go:noinline
func Name(i int) (string, error) {
	if i%5 == 2 {
		return "", CodeError{Code: i}
	}
	return "name", nil
}

//go:noinline
func TypedNil(i int) error {
	var p *NotFoundError
	if i%2 == 0 {
		return p // not nil: the interface holds a type
	}
	return nil
}

//go:noinline
func viaA(i int) error { return Fail(i) }

//go:noinline
func viaB(i int) error { return Fail(i) }

// tally counts a function's calls and failures, by caller and by type (as
// %T names it), and records the failing and the succeeding calls'
// durations apart (as the fixture measures them).
type tally struct {
	mu            sync.Mutex
	calls, errors int64
	byCaller      map[string]int64
	byType        map[string]int64
}

var tallies = map[string]*tally{}

func init() {
	for _, n := range []string{"main.Fail", "main.Count", "main.Name", "main.TypedNil"} {
		tallies[n] = &tally{byCaller: map[string]int64{}, byType: map[string]int64{}}
	}
}

func note(name, caller string, start time.Time, err error) {
	d := time.Since(start)
	t := tallies[name]
	fixture.Record(name, d)
	atomic.AddInt64(&t.calls, 1)
	if err == nil {
		fixture.Record(name+"/succeeding", d)
		return
	}
	fixture.Record(name+"/failing", d)
	atomic.AddInt64(&t.errors, 1)
	t.mu.Lock()
	t.byType[fmt.Sprintf("%T", err)]++
	if caller != "" {
		t.byCaller[caller]++
	}
	t.mu.Unlock()
}

var sink int

func work(i int) {
	start := time.Now()
	var err error
	if i%2 == 0 {
		err = viaA(i)
		note("main.Fail", "main.viaA", start, err)
	} else {
		err = viaB(i)
		note("main.Fail", "main.viaB", start, err)
	}
	start = time.Now()
	n, err := Count(i)
	note("main.Count", "", start, err)
	start = time.Now()
	s, err := Name(i)
	note("main.Name", "", start, err)
	start = time.Now()
	err = TypedNil(i)
	note("main.TypedNil", "", start, err)
	sink += n + len(s)
}

func main() {
	fixture.ParseFlags(200, 4)
	fixture.WaitStart()
	fixture.RunWorkers(work)
	names := []string{"main.Fail", "main.Count", "main.Name", "main.TypedNil"}
	all := append([]string(nil), names...)
	for _, n := range names {
		all = append(all, n+"/failing", n+"/succeeding")
	}
	r := fixture.Result("main.Fail", all...)
	errs := map[string]int64{}
	callers := map[string]map[string]int64{}
	types := map[string]map[string]int64{}
	for _, n := range names {
		errs[n] = tallies[n].errors
		callers[n] = tallies[n].byCaller
		types[n] = tallies[n].byType
	}
	r["errors"] = errs
	r["caller_errors"] = callers
	r["error_types"] = types
	fixture.Finish(r)
}
