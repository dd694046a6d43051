package guest

import (
	"encoding/binary"
	"strconv"
)

// runDescribe is the describe export: the declaration as output, or a tool
// error. It returns 0 on success and 1 on failure.
func runDescribe() (rc int32) {
	defer recoverExport(&rc)
	out, err := Describe()
	if err != nil {
		return fail(asError(err))
	}
	return succeed(out)
}

// runCompute is the compute export: the input is read from the host, the
// result document or a tool error goes back. It returns 0 on success and 1
// on failure.
func runCompute() (rc int32) {
	defer recoverExport(&rc)
	out, e := invoke(readInput(), true)
	if e != nil {
		return fail(e)
	}
	return succeed(out)
}

// recoverExport turns a panic in the SDK itself into execution_failed.
func recoverExport(rc *int32) {
	if r := recover(); r != nil {
		*rc = fail(sdkFailure("internal error: " + sprint(r)))
	}
}

// succeed sets out as the call's output.
func succeed(out []byte) int32 {
	off, ok := store(out)
	if !ok {
		return fail(sdkFailure("no memory left for the output of " + strconv.Itoa(len(out)) + " bytes"))
	}
	extismOutputSet(off, uint64(len(out)))
	return 0
}

// fail sets e as the call's error. When even the error block cannot be
// allocated the host sees a failure without a document: execution_failed.
func fail(e *Error) int32 {
	if off, ok := store(e.document()); ok {
		extismErrorSet(off)
	}
	return 1
}

// readInput copies the call's input out of the host 8 bytes at a time;
// a tail of less than 8 bytes is one more 8-byte load ending at the last
// byte (overlapping bytes already read), or byte by byte for an input
// shorter than 8 bytes.
func readInput() []byte {
	n := extismInputLength()
	buf := make([]byte, n)
	i := uint64(0)
	for ; n-i >= 32; i += 32 { // four loads an iteration: fewer iterations
		binary.LittleEndian.PutUint64(buf[i:], extismInputLoadU64(i))
		binary.LittleEndian.PutUint64(buf[i+8:], extismInputLoadU64(i+8))
		binary.LittleEndian.PutUint64(buf[i+16:], extismInputLoadU64(i+16))
		binary.LittleEndian.PutUint64(buf[i+24:], extismInputLoadU64(i+24))
	}
	for ; n-i >= 8; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], extismInputLoadU64(i))
	}
	if i < n && n >= 8 {
		binary.LittleEndian.PutUint64(buf[n-8:], extismInputLoadU64(n-8))
		return buf
	}
	for ; i < n; i++ {
		buf[i] = byte(extismInputLoadU8(i))
	}
	return buf
}

// store copies b into a new host memory block 8 bytes at a time (the tail
// as readInput reads it) and returns its offset. It reports false when
// the host refuses the allocation (or b is empty: a block of 0 bytes has
// no offset).
func store(b []byte) (uint64, bool) {
	n := uint64(len(b))
	if n == 0 {
		return 0, false
	}
	off := extismAlloc(n)
	if off == 0 {
		return 0, false
	}
	i := uint64(0)
	for ; n-i >= 32; i += 32 {
		extismStoreU64(off+i, binary.LittleEndian.Uint64(b[i:]))
		extismStoreU64(off+i+8, binary.LittleEndian.Uint64(b[i+8:]))
		extismStoreU64(off+i+16, binary.LittleEndian.Uint64(b[i+16:]))
		extismStoreU64(off+i+24, binary.LittleEndian.Uint64(b[i+24:]))
	}
	for ; n-i >= 8; i += 8 {
		extismStoreU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	if i < n && n >= 8 {
		extismStoreU64(off+n-8, binary.LittleEndian.Uint64(b[n-8:]))
		return off, true
	}
	for ; i < n; i++ {
		extismStoreU8(off+i, uint32(b[i]))
	}
	return off, true
}

// logInfo sends msg to the host's log at info level.
func logInfo(msg string) {
	off, ok := store([]byte(msg))
	if !ok {
		return
	}
	extismLogInfo(off)
	extismFree(off)
}

// asError converts any error into the tool error sent for it.
func asError(err error) *Error {
	if e, ok := err.(*Error); ok && e != nil {
		return e
	}
	return &Error{Code: CodeExecutionFailed, Message: err.Error()}
}
