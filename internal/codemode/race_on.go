//go:build race

package codemode

// raceScale widens the memory limits of a child built with the race
// detector (tests), whose shadow memory takes several times the program's.
const raceScale = 8
