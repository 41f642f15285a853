package cli

import "fmt"

func printSchema(stdio IO) int {
	fmt.Fprintln(stdio.Stderr, "pisces: --print-schema is being built")
	return 1
}
