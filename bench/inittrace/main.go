// Command inittrace measures package initialisation of one or more
// binaries: it runs each with GODEBUG=inittrace=1 many times (the binaries
// in turn, so that a change of load on the machine touches all alike) and
// sums the clock time the runtime reports for every package's init.
//
//	go run ./bench/inittrace [-runs 50] [-cold] [-top 20] [-args --version] BINARY...
//
// For each binary it prints the binary's size, the number of packages with
// init work, the bytes and allocations of init (these do not depend on
// load), the per-run sum of init clock time (min, median, max), the sum of
// the per-package minimums, and the packages with the largest minimum.
// Time figures vary with the load of the machine; the minimum over many
// runs is the figure to compare. -cold drops each binary from the page
// cache before every run (Linux), so that init also pays for reading the
// binary's pages from disk, as the first start of an installed binary does.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/bench/internal/coldcache"
)

type run struct {
	clock  float64            // ms, all packages
	bytes  int64              // allocated by init
	allocs int64              //
	pkgs   map[string]float64 // ms per package
}

type result struct {
	path string
	size int64
	runs []run
}

func main() {
	runs := flag.Int("runs", 50, "runs per binary")
	cold := flag.Bool("cold", false, "drop each binary from the page cache before every run")
	top := flag.Int("top", 20, "packages to list per binary")
	args := flag.String("args", "--version", "arguments of every run (space-separated)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: inittrace [flags] BINARY...")
		os.Exit(2)
	}
	results := make([]*result, flag.NArg())
	for i, p := range flag.Args() {
		st, err := os.Stat(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		results[i] = &result{path: p, size: st.Size()}
	}
	for n := 0; n < *runs; n++ {
		for _, r := range results {
			if *cold {
				if err := coldcache.Drop(r.path); err != nil {
					fmt.Fprintln(os.Stderr, "cannot drop the page cache:", err)
					os.Exit(1)
				}
			}
			one, err := measure(r.path, strings.Fields(*args))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			r.runs = append(r.runs, one)
		}
	}
	for _, r := range results {
		report(r, *top, *cold)
	}
}

// measure runs bin once and parses the runtime's init trace:
// "init PKG @T ms, C ms clock, B bytes, N allocs".
func measure(bin string, args []string) (run, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // the exit status does not matter
	r := run{pkgs: map[string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(stderr.Bytes()))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err1 := strconv.ParseFloat(f[4], 64)
		b, err2 := strconv.ParseInt(f[7], 10, 64)
		a, err3 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return r, fmt.Errorf("%s: cannot parse %q", bin, sc.Text())
		}
		r.clock += ms
		r.bytes += b
		r.allocs += a
		r.pkgs[f[1]] += ms
	}
	if len(r.pkgs) == 0 {
		return r, fmt.Errorf("%s: no init trace on stderr: %.300s", bin, stderr.String())
	}
	return r, nil
}

func report(r *result, top int, cold bool) {
	sums := make([]float64, len(r.runs))
	mins := map[string]float64{}
	for i, one := range r.runs {
		sums[i] = one.clock
		for p, ms := range one.pkgs {
			if m, ok := mins[p]; !ok || ms < m {
				mins[p] = ms
			}
		}
	}
	sort.Float64s(sums)
	var minSum float64
	names := make([]string, 0, len(mins))
	for p, ms := range mins {
		minSum += ms
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool {
		if mins[names[i]] != mins[names[j]] {
			return mins[names[i]] > mins[names[j]]
		}
		return names[i] < names[j]
	})
	first := r.runs[0]
	mode := "page cache warm"
	if cold {
		mode = "binary dropped from the page cache before each run"
	}
	fmt.Printf("%s: %.1f MB, %d packages with init, %d bytes / %d allocs in init\n",
		r.path, float64(r.size)/1e6, len(first.pkgs), first.bytes, first.allocs)
	fmt.Printf("  init clock, all packages, %d runs (%s): min %.2f ms, median %.2f ms, max %.2f ms; sum of per-package minimums %.2f ms\n",
		len(sums), mode, sums[0], sums[len(sums)/2], sums[len(sums)-1], minSum)
	for i, p := range names {
		if i == top {
			break
		}
		fmt.Printf("  %8.3f ms  %s\n", mins[p], p)
	}
}
