package domain

import (
	"errors"
	"fmt"
)

// ErrConflict is every store's "that was done already, differently": a
// taken ID or sequence, a stale version, a move the status rules forbid.
// One value, so errors.Is matches it whichever store answered.
var ErrConflict = errors.New("conflict")

// ErrSignalConsumed is a store's answer for a signal consumed before,
// elsewhere in the tree: a redelivery, to be ignored. It is an ErrConflict.
var ErrSignalConsumed = fmt.Errorf("%w: the signal was already consumed", ErrConflict)
