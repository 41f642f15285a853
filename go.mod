module github.com/pisces-agent/pisces

go 1.26.8

require (
	golang.org/x/text v0.43.0
	golang.org/x/tools v0.52.0
)
