package retopsdk

import "unsafe"

// unsafePointer turns a code address into a pointer to read the bytes there.
func unsafePointer(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
