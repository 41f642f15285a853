package cli

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/session"
)

// cwdFilter is the cwd sessions must have to count as this folder's: a
// custom session directory can hold the sessions of many folders (pi
// filters those by their header cwd); the per-folder directory needs none.
func (env *environment) cwdFilter() string {
	if d, _ := env.customSessionDir(); d == "" {
		return ""
	}
	return env.cwd
}

// localSessions lists this folder's sessions, newest first.
func (env *environment) localSessions() ([]session.Info, error) {
	dir, err := env.sessionDir()
	if err != nil {
		return nil, err
	}
	return session.List(dir, env.cwdFilter())
}

// allSessions lists the sessions of every folder (those under the agent
// dir, plus a custom session directory's), newest first, as list_sessions
// with scope "all" does.
func (env *environment) allSessions() ([]session.Info, error) {
	infos, err := session.ListAll(filepath.Join(env.agentDir, "sessions"))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, i := range infos {
		seen[i.Path] = true
	}
	custom, err := env.customSessionDir()
	if err != nil {
		return nil, err
	}
	if custom == "" {
		return infos, nil
	}
	more, err := session.List(custom, "")
	if err != nil {
		return nil, err
	}
	added := false
	for _, i := range more {
		if !seen[i.Path] {
			infos = append(infos, i)
			added = true
		}
	}
	if added {
		sortNewestFirst(infos)
	}
	return infos, nil
}

func sortNewestFirst(infos []session.Info) {
	sort.SliceStable(infos, func(a, b int) bool { return infos[a].Modified.After(infos[b].Modified) })
}

// localSessionByID is the path of this folder's session with exactly that
// id ("" if none).
func (env *environment) localSessionByID(id string) (string, error) {
	infos, err := env.localSessions()
	if err != nil {
		return "", err
	}
	for _, i := range infos {
		if i.ID == id {
			return i.Path, nil
		}
	}
	return "", nil
}

// writeSessions prints sessions as readable text: the same facts as
// list_sessions (modified time, id, message count, name, first message,
// path, and the folder with all).
func writeSessions(w io.Writer, infos []session.Info, all bool) {
	for n, i := range infos {
		if n > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s  %s", i.Modified.Local().Format("2006-01-02 15:04"), i.ID, plural(i.MessageCount, "message"))
		if i.Name != "" {
			fmt.Fprintf(w, "  %q", i.Name)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  %s\n", oneLine(i.FirstMessage, 100))
		if all && i.Cwd != "" {
			fmt.Fprintf(w, "  in %s\n", i.Cwd)
		}
		fmt.Fprintf(w, "  %s\n", i.Path)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// oneLine joins s onto one line and shortens it to max runes with "...".
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-3]) + "..."
	}
	return s
}

// runSessions is `pisces sessions [--all]`.
func runSessions(env *environment, all bool) int {
	w := env.stdio.Stdout
	var infos []session.Info
	var err error
	if all {
		infos, err = env.allSessions()
	} else {
		infos, err = env.localSessions()
	}
	if err != nil {
		fmt.Fprintf(env.stdio.Stderr, "pisces sessions: %v\n", err)
		return 1
	}
	if len(infos) == 0 {
		if all {
			fmt.Fprintln(w, "No sessions.")
		} else {
			fmt.Fprintf(w, "No sessions in %s (pisces sessions --all lists every folder's).\n", env.cwd)
		}
		return 0
	}
	writeSessions(w, infos, all)
	return 0
}

// resumeShown is how many recent sessions --resume offers.
const resumeShown = 20

// pickSession is --resume in text and json modes: it lists this folder's
// recent sessions on stderr and reads a number from the terminal, then (when
// no message was given) the message to send. ok is false when Pisces should
// exit with code.
func pickSession(env *environment) (path string, code int, ok bool) {
	stdio := env.stdio
	if !stdio.StdinIsTTY || stdio.Stdin == nil {
		fmt.Fprintln(stdio.Stderr, "pisces: --resume asks which session to continue and needs a terminal on stdin; use --session PATH|ID instead (pisces sessions lists them), or -c for the most recent one")
		return "", 2, false
	}
	infos, err := env.localSessions()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: --resume: %v\n", err)
		return "", 1, false
	}
	if len(infos) == 0 {
		fmt.Fprintf(stdio.Stderr, "pisces: --resume: no sessions in %s\n", env.cwd)
		return "", 1, false
	}
	shown := infos
	if len(shown) > resumeShown {
		shown = shown[:resumeShown]
	}
	w := stdio.Stderr
	fmt.Fprintf(w, "Sessions in %s:\n", env.cwd)
	for n, i := range shown {
		label := oneLine(i.FirstMessage, 60)
		if i.Name != "" {
			label = fmt.Sprintf("%q  %s", i.Name, label)
		}
		fmt.Fprintf(w, "%3d) %s  %-12s %s\n", n+1, i.Modified.Local().Format("2006-01-02 15:04"), plural(i.MessageCount, "message"), label)
	}
	if more := len(infos) - len(shown); more > 0 {
		fmt.Fprintf(w, "     (%d older: pisces sessions lists them, --session ID opens one)\n", more)
	}
	in := bufio.NewReader(stdio.Stdin)
	for {
		fmt.Fprintf(w, "Resume which session? [1-%d, Enter to cancel]: ", len(shown))
		line, err := in.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			if err == nil || err == io.EOF {
				fmt.Fprintln(w, "No session selected.")
				return "", 0, false
			}
			fmt.Fprintf(w, "pisces: --resume: %v\n", err)
			return "", 1, false
		}
		n, convErr := strconv.Atoi(line)
		if convErr == nil && n >= 1 && n <= len(shown) {
			path = shown[n-1].Path
			break
		}
		fmt.Fprintf(w, "%q is not a number from 1 to %d.\n", line, len(shown))
		if err != nil {
			return "", 2, false
		}
	}
	if len(env.args.Messages) == 0 {
		fmt.Fprint(w, "Message: ")
		line, _ := in.ReadString('\n')
		if line = strings.TrimSpace(line); line == "" {
			fmt.Fprintf(w, "Nothing sent. To continue this session later: pisces --session %s \"message\"\n", path)
			return "", 0, false
		}
		env.args.Messages = []string{line}
	}
	return path, 0, true
}
