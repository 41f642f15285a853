//go:build !linux

package coldcache

import (
	"errors"
	"fmt"
)

// Drop is not possible per file on this system.
func Drop(string) error {
	return fmt.Errorf("dropping a file from the page cache: %w on this system", errors.ErrUnsupported)
}
