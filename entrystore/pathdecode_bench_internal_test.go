package entrystore

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkPathDecode decodes the rows of a 10,000-entry path without a
// database: what a read costs on the client once the rows are in.
func BenchmarkPathDecode(b *testing.B) {
	const n = 10_000
	rows := make([][][]byte, n)
	for i := range rows {
		vals := pathVals(1, int32(i), 0, 0)
		binary.BigEndian.PutUint32(vals[colID][12:], uint32(i+1))
		vals[colContent] = fmt.Appendf([]byte{1}, `{"text": "message %d of a long conversation"}`, i)
		vals[colKey] = fmt.Appendf(nil, "k%d", i)
		vals[colRole] = []byte("user")
		rows[i] = vals
	}
	rows[n-1][colExecution] = make([]byte, 16)
	var leaf [16]byte
	copy(leaf[:], rows[n-1][colID])
	for b.Loop() {
		d := newPathDecoder()
		for _, r := range rows {
			d.row(r)
		}
		path, err := d.finish("org", leaf)
		if err != nil || len(path) != n {
			b.Fatal(err)
		}
		d.release()
	}
}
