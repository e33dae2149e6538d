// The test program of trace-avx512.sh: hash/crc32.ieeeCLMUL, whose AVX-512
// code capstone 4 cannot decode, called -calls times on SIGUSR1, each call
// timed with the program's own clock, and the time its thread waited for a
// CPU meanwhile read from the kernel's schedstat: on a loaded machine the
// scheduler may take the CPU as a probe's trap returns, after retop's
// clock stopped and before the program's did.
package main

import (
	"encoding/json"
	"flag"
	"hash/crc32"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"syscall"
	"time"

	"fixture"
)

type funcResult struct {
	Calls int   `json:"calls"`
	Mean  int64 `json:"mean_ns"`
	P50   int64 `json:"p50_ns"`
	Wait  int64 `json:"mean_wait_ns"`
	P50NW int64 `json:"p50_nowait_ns"` // the p50 of each call less its wait
}

func main() {
	ready := flag.String("ready", "", "touch `FILE` once waiting for SIGUSR1")
	out := flag.String("out", "", "write the result JSON to `FILE`")
	calls := flag.Int("calls", 200, "calls to make")
	size := flag.Int("size", 16<<20, "bytes per checksum")
	flag.Parse()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	buf := make([]byte, *size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	if err := os.WriteFile(*ready, nil, 0o644); err != nil {
		panic(err)
	}
	<-sig
	runtime.LockOSThread()
	sched, err := os.Open("/proc/thread-self/schedstat")
	if err != nil {
		panic(err)
	}
	durs := make([]int64, *calls)
	less := make([]int64, *calls) // each less its wait
	var sum, total, wait int64
	for i := range durs {
		w := int64(fixture.RunDelay(sched))
		t := time.Now()
		sum += int64(crc32.ChecksumIEEE(buf))
		durs[i] = time.Since(t).Nanoseconds()
		w = int64(fixture.RunDelay(sched)) - w
		less[i] = durs[i] - w
		wait += w
		total += durs[i]
	}
	sort.Slice(durs, func(a, b int) bool { return durs[a] < durs[b] })
	sort.Slice(less, func(a, b int) bool { return less[a] < less[b] })
	// Nearest rank, as retop and every other fixture: the ceil(n/2)-th
	// smallest.  Under load the durations split in two groups, and the
	// next one up can be another group's.
	rank := (*calls*50+99)/100 - 1
	p50 := durs[rank]
	res := map[string]any{
		"checksum_sum": sum,
		"per_func": map[string]funcResult{
			"hash/crc32.ieeeCLMUL": {Calls: *calls, Mean: total / int64(*calls), P50: p50,
				Wait: wait / int64(*calls), P50NW: less[rank]},
		},
	}
	data, err := json.Marshal(res)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(*out+".tmp", data, 0o644); err != nil {
		panic(err)
	}
	if err := os.Rename(*out+".tmp", *out); err != nil {
		panic(err)
	}
	select {}
}
