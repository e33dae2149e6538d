// sdkapp: the payments fixture with the retop SDK embedded, so that the
// tracer can compare what the SDK says about ProcessPayment, ValidateCard
// and CalculateTotal with its own index of the binary. The SDK listens on
// -sdk (default 127.0.0.1:9002) from start-up, before SIGUSR1.
package main

import (
	"errors"
	"flag"
	"strings"
	"sync/atomic"
	"time"

	"fixture"
	"retopsdk"
)

var (
	errInvalidCard = errors.New("invalid card")
	cardOK         = "4111111111111111"
	cardBad        = "4111-bad"
	valid, invalid int64
	sink           float64

	sdkAddr  = flag.String("sdk", retopsdk.DefaultAddr, "SDK listen `ADDR`ess")
	sdkToken = flag.String("token", "", "bearer `TOKEN` the SDK requires")
)

// ProcessPayment sleeps 20 ms of its own: about 50 ms in all on the valid
// path (20 + 20 + 10), 40 ms on the invalid one.
//
//go:noinline
func ProcessPayment(amount float64, currency string) error {
	time.Sleep(20 * time.Millisecond)
	card := cardOK
	if int(amount)%4 == 3 {
		card = cardBad
	}
	var err error
	fixture.Timed("main.ValidateCard", func() { err = ValidateCard(card) })
	if err != nil {
		atomic.AddInt64(&invalid, 1)
		return err
	}
	atomic.AddInt64(&valid, 1)
	var total float64
	fixture.Timed("main.CalculateTotal", func() { total = CalculateTotal(amount, 0.2) })
	sink = total
	return nil
}

// ValidateCard must keep two RET instructions (error and success), so the
// two paths do different work after the sleep and return different values.
//
//go:noinline
func ValidateCard(card string) error {
	time.Sleep(20 * time.Millisecond)
	if len(card) != 16 || strings.ContainsRune(card, '-') {
		return errInvalidCard
	}
	sum := 0
	for i := len(card) - 1; i >= 0; i-- {
		sum += int(card[i] - '0')
	}
	if sum < 0 {
		panic("unreachable")
	}
	return nil
}

//go:noinline
func CalculateTotal(subtotal, taxRate float64) float64 {
	time.Sleep(10 * time.Millisecond)
	return subtotal * (1 + taxRate)
}

// Lookup takes an int and a string: in a stripped build only the SDK knows
// their names and types (registered with retopsdk.Describe). It sleeps ms
// milliseconds of its own.
//
//go:noinline
func Lookup(id int, key string, ms int) int {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return id + len(key)
}

// Check fails on every third id: in a stripped build only the SDK knows
// that its last result is an error (registered with retopsdk.Describe).
//
//go:noinline
func Check(id int) (int, error) {
	if id%3 == 0 {
		return 0, errInvalidCard
	}
	return id, nil
}

// The planted outlier of Lookup: the slowest call, with these arguments.
const plantedID, plantedKey = 4242, "planted-key"

func main() {
	fixture.ParseFlags(20, 4)
	if err := retopsdk.Describe(Lookup, "id", "key", "ms"); err != nil {
		fixture.Fatal(err)
	}
	if err := retopsdk.Describe(Check, "id", "n", "err"); err != nil {
		fixture.Fatal(err)
	}
	srv, err := retopsdk.Start(retopsdk.Options{Addr: *sdkAddr, Token: *sdkToken})
	if err != nil {
		fixture.Fatal(err)
	}
	fixture.WaitStart()
	fixture.RunWorkers(func(i int) {
		fixture.Timed("main.ProcessPayment", func() { _ = ProcessPayment(float64(i), "EUR") })
	})
	for i := 0; i < 10; i++ {
		sink += float64(Lookup(i, "key", 1))
	}
	sink += float64(Lookup(plantedID, plantedKey, 60))
	checkErrors := 0
	for i := 0; i < 12; i++ {
		if n, err := Check(i); err != nil {
			checkErrors++
		} else {
			sink += float64(n)
		}
	}
	r := fixture.Result("main.ProcessPayment", "main.ProcessPayment", "main.ValidateCard", "main.CalculateTotal")
	r["paths"] = map[string]int64{"valid": valid, "invalid": invalid}
	r["lookup"] = map[string]interface{}{"calls": 11, "id": plantedID, "key": plantedKey, "ms": 60}
	r["check"] = map[string]int{"calls": 12, "errors": checkErrors}
	r["sdk"] = srv.Addr()
	fixture.Finish(r)
}
