//go:build !unix

package storage

import "errors"

// freeBytes is unknown on this platform: the guard is off.
func freeBytes(string) (uint64, error) {
	return 0, errors.New("storage: free space unknown on this platform")
}
