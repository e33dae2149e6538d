// demo: a pretend payment service for the README quick start. Workers handle
// requests forever (-loop is implied, and work starts at once: no SIGUSR1),
// mostly sleeping, so CPU use stays low. Functions worth watching:
// HandleRequest, ProcessPayment (~50 ms), ValidateCard (error and success
// RETs), QueryDB (1-30 ms, log-normal), RenderTemplate (~100 us),
// RiskyTransfer (panics 1 time in 20, recovered: orphans) and SlowReport
// (200 ms, but 1 time in 8 it hangs for 5-15 s: a stuck call in flight).
package main

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"time"

	"fixture"
)

var errInvalidCard = errors.New("invalid card")

//go:noinline
func HandleRequest(id int, rng *rand.Rand) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("transfer failed")
		}
	}()
	card := "4111111111111111"
	if rng.Intn(5) == 0 {
		card = "4111-bad"
	}
	if err = ValidateCard(card); err != nil {
		return err
	}
	if err = ProcessPayment(float64(id%500)+0.99, "EUR", rng); err != nil {
		return err
	}
	if rng.Intn(4) == 0 {
		RiskyTransfer(id, rng)
	}
	RenderTemplate(id)
	return nil
}

//go:noinline
func ValidateCard(card string) error {
	time.Sleep(2 * time.Millisecond)
	if len(card) != 16 || strings.ContainsRune(card, '-') {
		return errInvalidCard
	}
	sum := 0
	for i := range card {
		sum += int(card[i] - '0')
	}
	if sum < 0 {
		panic("unreachable")
	}
	return nil
}

//go:noinline
func ProcessPayment(amount float64, currency string, rng *rand.Rand) error {
	time.Sleep(40 * time.Millisecond)
	QueryDB("SELECT balance FROM accounts", rng)
	if amount < 0 || currency == "" {
		return errors.New("bad amount")
	}
	return nil
}

// QueryDB sleeps exp(N(ln 5ms, 0.8)), clamped to 1-30 ms.
//
//go:noinline
func QueryDB(query string, rng *rand.Rand) int {
	ms := math.Exp(math.Log(5) + 0.8*rng.NormFloat64())
	ms = math.Max(1, math.Min(30, ms))
	time.Sleep(time.Duration(ms * float64(time.Millisecond)))
	return len(query)
}

//go:noinline
func RenderTemplate(id int) string {
	time.Sleep(100 * time.Microsecond)
	return "<p>ok</p>"
}

//go:noinline
func RiskyTransfer(id int, rng *rand.Rand) {
	time.Sleep(5 * time.Millisecond)
	if rng.Intn(20) == 0 {
		panic("transfer: counterparty unavailable")
	}
}

//go:noinline
func SlowReport(rng *rand.Rand) {
	if rng.Intn(8) == 0 {
		time.Sleep(time.Duration(5000+rng.Intn(10000)) * time.Millisecond)
		return
	}
	time.Sleep(200 * time.Millisecond)
}

func main() {
	fixture.ParseFlags(0, 4)
	fixture.Opts.Loop = true
	go func() {
		rng := rand.New(rand.NewSource(1))
		for {
			SlowReport(rng)
			time.Sleep(time.Second)
		}
	}()
	for w := 0; w < fixture.Opts.Workers; w++ {
		go func(w int) {
			rng := rand.New(rand.NewSource(int64(w) + 2))
			for id := w; ; id += fixture.Opts.Workers {
				_ = HandleRequest(id, rng)
				time.Sleep(time.Duration(10+rng.Intn(40)) * time.Millisecond)
			}
		}(w)
	}
	fixture.TouchReady()
	<-fixture.Signals // any of SIGUSR1/SIGTERM/SIGINT ends the demo
}
