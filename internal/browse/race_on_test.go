//go:build race

package browse

const raceEnabled = true
