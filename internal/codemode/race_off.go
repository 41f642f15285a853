//go:build !race

package codemode

const raceScale = 1
