//go:build !race

package ddblocal_test

// exportVolume is the items TestExportConsumesNoReadCapacity exports
// (5,000 under the race detector).
const exportVolume = 100_000
