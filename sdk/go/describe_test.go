package retopsdk

import (
	"strings"
	"testing"
)

//go:noinline
func describedTarget(id int, key string, scale float64, p *int) (int, error) {
	return id + len(key) + int(scale) + *p, nil
}

// Describe registers the reflected parameters under the function's runtime
// name; their ABI locations are the ones the compiler uses.
func TestDescribe(t *testing.T) {
	if err := Describe(describedTarget, "id", "key", "scale", "p", "n"); err != nil {
		t.Fatal(err)
	}
	ps, ok := describedParams("github.com/retop/sdk/go.describedTarget")
	if !ok {
		// The module path decides the name; find it by suffix.
		described.Range(func(k, v interface{}) bool {
			if strings.HasSuffix(k.(string), ".describedTarget") {
				ps, ok = v.([]param), true
			}
			return true
		})
	}
	if !ok {
		t.Fatal("describedTarget not registered")
	}
	args, rets := describe(ps, true)
	var got []string
	for _, a := range append(args, rets...) {
		got = append(got, a.Name+":"+a.Type+"@"+a.Location.String())
	}
	want := "id:int@RAX key:string@RBX+RCX scale:float64@X0 p:*int@RDI n:int@RAX :error@RBX+RCX"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	if err := Describe(42); err == nil {
		t.Error("Describe(42) accepted a non-function")
	}
}
