package retopsdk

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
)

// A stripped binary has no DWARF, so the SDK cannot read a function's
// parameters from its own executable. Describe registers them from the
// function value itself (RFD 075: runtime reflection): the types from
// reflect, the names from the caller. /debug/runtime/validate then reports
// the function's arguments and results, with their ABI locations, even
// without DWARF; DWARF, when present, still wins.

var described sync.Map // function name -> []param

// Describe registers fn, a top-level function (not a method value or a
// closure), with the names of its parameters in order (arguments, then
// results; missing names are left empty and shown as arg0..., r0...).
// It returns an error when fn is not a function or has no name.
func Describe(fn interface{}, names ...string) error {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return fmt.Errorf("retopsdk.Describe: %T is not a function", fn)
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return fmt.Errorf("retopsdk.Describe: no runtime function for %T", fn)
	}
	t := v.Type()
	ps := make([]param, 0, t.NumIn()+t.NumOut())
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return ""
	}
	for i := 0; i < t.NumIn(); i++ {
		ps = append(ps, param{Name: name(i), Type: typeDesc(t.In(i))})
	}
	for i := 0; i < t.NumOut(); i++ {
		ps = append(ps, param{Name: name(t.NumIn() + i), Type: typeDesc(t.Out(i)), IsResult: true})
	}
	described.Store(f.Name(), ps)
	return nil
}

// describedParams returns what Describe registered for name.
func describedParams(name string) ([]param, bool) {
	v, ok := described.Load(name)
	if !ok {
		return nil, false
	}
	return v.([]param), true
}

// typeDesc is the ABI view of a reflected type, named as Go spells it
// ("int", "string", "*main.Card": DWARF's names for the same types).
func typeDesc(t reflect.Type) *TypeDesc {
	d := &TypeDesc{Name: t.String(), Size: int64(t.Size())}
	switch t.Kind() {
	case reflect.Bool:
		d.Kind = KindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.Kind = KindInt
	case reflect.Float32, reflect.Float64:
		d.Kind = KindFloat
	case reflect.Complex64, reflect.Complex128:
		d.Kind = KindComplex
	case reflect.Ptr, reflect.UnsafePointer, reflect.Chan, reflect.Map, reflect.Func:
		d.Kind = KindPointer
	case reflect.String:
		d.Kind = KindString
	case reflect.Slice:
		d.Kind = KindSlice
	case reflect.Interface:
		d.Kind = KindInterface
	case reflect.Struct:
		d.Kind = KindStruct
		for i := 0; i < t.NumField(); i++ {
			d.Fields = append(d.Fields, typeDesc(t.Field(i).Type))
		}
	case reflect.Array:
		d.Kind = KindArray
		d.Elem = typeDesc(t.Elem())
		d.Len = int64(t.Len())
	}
	return d
}
