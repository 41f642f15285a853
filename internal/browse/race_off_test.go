//go:build !race

package browse

const raceEnabled = false
