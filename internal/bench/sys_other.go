//go:build !linux && !darwin

package bench

import "time"

// selfCPU is not measured on this platform; CPU figures read 0.
func selfCPU() time.Duration { return 0 }

// ownCPU is not measured on this platform; CPU figures read 0.
func ownCPU() time.Duration { return 0 }

// RaiseFileLimit leaves the open-file limit alone on this platform and
// reports it as unknown (0).
func RaiseFileLimit() (uint64, error) { return 0, nil }
