//go:build race

package ddblocal_test

// exportVolume is the items TestExportConsumesNoReadCapacity exports: the
// race detector slows the writes that build the table about thirtyfold,
// so under it the test exports 5,000 items (100,000 otherwise).
const exportVolume = 5_000
