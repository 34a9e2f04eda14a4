package entrystore

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// pathVals is a binary path row of the entry id at depth, with its
// execution and parent sent when not zero.
func pathVals(id byte, depth int32, execution, parent byte) [][]byte {
	u := func(b byte) []byte {
		if b == 0 {
			return nil
		}
		v := make([]byte, 16)
		v[15] = b
		return v
	}
	vals := make([][]byte, len(pathColumns))
	vals[colExecution], vals[colID], vals[colParent] = u(execution), u(id), u(parent)
	vals[colSeq] = binary.BigEndian.AppendUint64(nil, uint64(id))
	vals[colDepth] = binary.BigEndian.AppendUint32(nil, uint32(depth))
	vals[colStep] = binary.BigEndian.AppendUint32(nil, 0)
	vals[colType], vals[colContent], vals[colKey] = []byte("message"), []byte("{}"), []byte{'k', id}
	vals[colCreatedAt] = binary.BigEndian.AppendUint64(nil, 0)
	return vals
}

// The decoder builds a path only from rows that are one, whatever their
// order, and refuses the rest: a gap, two entries at a depth, a deepest
// entry that is not the leaf, a parent sent that is not the entry before,
// a first entry below the root without its parent.
func TestPathDecoderChecksTheRowsAreAPath(t *testing.T) {
	leaf := [16]byte{15: 3}
	decode := func(rows ...[][]byte) ([]Entry, error) {
		d := newPathDecoder()
		defer d.release()
		for _, r := range rows {
			d.row(r)
		}
		return d.finish("org", leaf)
	}
	const ex, other = 9, 8
	path, err := decode(pathVals(3, 2, ex, 0), pathVals(1, 0, other, 0), pathVals(2, 1, 0, 1))
	require.NoError(t, err)
	require.Len(t, path, 3)
	for i, e := range path {
		require.Equal(t, i, e.Depth)
		require.Equal(t, []byte("{}"), []byte(e.Content))
		require.Equal(t, "k"+string(rune(i+1)), e.IdempotencyKey)
	}
	require.Equal(t, "", path[0].ParentID)
	require.Equal(t, path[0].ID, path[1].ParentID)
	require.Equal(t, path[1].ID, path[2].ParentID)
	require.Equal(t, "00000000-0000-0000-0000-000000000008", path[0].ExecutionID, "sent: its own")
	require.Equal(t, "00000000-0000-0000-0000-000000000009", path[1].ExecutionID, "not sent: the leaf's")

	// A row may tell the path's length early; a wrong one changes nothing.
	for _, size := range []uint32{1, 2, 3, 4, 1 << 30} {
		root := pathVals(1, 0, other, 0)
		root[colSize] = binary.BigEndian.AppendUint32(nil, size)
		sized, err := decode(pathVals(3, 2, ex, 0), root, pathVals(2, 1, 0, 1))
		require.NoError(t, err)
		require.Equal(t, path, sized, "size %d", size)
	}

	from, err := decode(pathVals(2, 1, 0, 1), pathVals(3, 2, ex, 0))
	require.NoError(t, err)
	require.Equal(t, "00000000-0000-0000-0000-000000000001", from[0].ParentID, "a path read from depth 1")

	_, err = decode()
	require.ErrorIs(t, err, ErrNotFound)
	for name, rows := range map[string][][][]byte{
		"gap":              {pathVals(1, 0, 0, 0), pathVals(3, 2, ex, 0)},
		"two at a depth":   {pathVals(1, 0, 0, 0), pathVals(2, 1, 0, 0), pathVals(4, 1, 0, 0), pathVals(3, 2, ex, 0)},
		"not the leaf":     {pathVals(1, 0, 0, 0), pathVals(2, 1, ex, 0)},
		"leaf's execution": {pathVals(1, 0, 0, 0), pathVals(3, 1, 0, 0)},
		"another's child":  {pathVals(1, 0, 0, 0), pathVals(2, 1, 0, 0), pathVals(3, 2, ex, 1)},
		"first's parent":   {pathVals(2, 1, 0, 0), pathVals(3, 2, ex, 0)},
		"a root's parent":  {pathVals(1, 0, 0, 7), pathVals(3, 1, ex, 0)},
	} {
		_, err := decode(rows...)
		require.ErrorIs(t, err, ErrInvalid, name)
	}
}
