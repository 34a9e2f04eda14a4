package entrystore

import (
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// scanPathRow scans a path query's row that did not come in binary (a
// connection on the simple protocol gets text) and returns its values
// the way pathDecoder.row reads binary ones.
func scanPathRow(rows pgx.Rows) ([][]byte, error) {
	var execution, id, parent pgtype.UUID
	var seq int64
	var depth, step int32
	var typ, role, turn, key pgtype.Text
	var content, metadata []byte
	var createdAt time.Time
	var size pgtype.Int4
	if err := rows.Scan(&execution, &id, &parent, &seq, &depth, &step, &typ, &role, &content, &turn, &key,
		&metadata, &createdAt, &size); err != nil {
		return nil, err
	}
	vals := make([][]byte, len(pathColumns))
	vals[colExecution], vals[colID], vals[colParent] = uuidValue(execution), uuidValue(id), uuidValue(parent)
	vals[colSeq] = binary.BigEndian.AppendUint64(nil, uint64(seq))
	vals[colDepth] = binary.BigEndian.AppendUint32(nil, uint32(depth))
	vals[colStep] = binary.BigEndian.AppendUint32(nil, uint32(step))
	vals[colType], vals[colRole], vals[colTurn], vals[colKey] = textValue(typ), textValue(role), textValue(turn), textValue(key)
	vals[colContent], vals[colMetadata] = content, metadata
	vals[colCreatedAt] = binary.BigEndian.AppendUint64(nil, uint64(createdAt.UnixMicro()-pgEpoch.UnixMicro()))
	if size.Valid {
		vals[colSize] = binary.BigEndian.AppendUint32(nil, uint32(size.Int32))
	}
	return vals, nil
}

// uuidValue is u's binary value, nil for NULL.
func uuidValue(u pgtype.UUID) []byte {
	if !u.Valid {
		return nil
	}
	return u.Bytes[:]
}

// textValue is t's bytes, nil for NULL and non-nil for "".
func textValue(t pgtype.Text) []byte {
	if !t.Valid {
		return nil
	}
	return append([]byte{}, t.String...)
}
