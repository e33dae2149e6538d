// The test program of trace-avx512.sh: hash/crc32.ieeeCLMUL, whose AVX-512
// code capstone 4 cannot decode, called -calls times on SIGUSR1, each call
// timed with the program's own clock.
package main

import (
	"encoding/json"
	"flag"
	"hash/crc32"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"
)

type funcResult struct {
	Calls int   `json:"calls"`
	Mean  int64 `json:"mean_ns"`
	P50   int64 `json:"p50_ns"`
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
	durs := make([]int64, *calls)
	var sum, total int64
	for i := range durs {
		t := time.Now()
		sum += int64(crc32.ChecksumIEEE(buf))
		durs[i] = time.Since(t).Nanoseconds()
		total += durs[i]
	}
	sort.Slice(durs, func(a, b int) bool { return durs[a] < durs[b] })
	// Nearest rank, as retop and every other fixture: the ceil(n/2)-th
	// smallest.  Under load the durations split in two groups, and the
	// next one up can be another group's.
	p50 := durs[(*calls*50+99)/100-1]
	res := map[string]any{
		"checksum_sum": sum,
		"per_func": map[string]funcResult{
			"hash/crc32.ieeeCLMUL": {Calls: *calls, Mean: total / int64(*calls), P50: p50},
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
