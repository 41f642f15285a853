package tools

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestEditExact(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	p := writeFile(t, dir, "f.go", "package x\n\nfunc A() int {\n\treturn 1\n}\n")
	r := run(t, env, "edit", map[string]any{"path": "f.go", "edits": []map[string]string{{"oldText": "return 1", "newText": "return 2"}}})
	if got := mustText(t, r); got != "Successfully replaced 1 block(s) in f.go." {
		t.Fatalf("got %q", got)
	}
	if got := readFile(t, p); got != "package x\n\nfunc A() int {\n\treturn 2\n}\n" {
		t.Fatalf("file %q", got)
	}
	d := decodeDetails(t, r)
	if d["firstChangedLine"] != float64(4) {
		t.Fatalf("firstChangedLine %v", d["firstChangedLine"])
	}
	wantDiff := " 1 package x\n 2 \n 3 func A() int {\n-4 \treturn 1\n+4 \treturn 2\n 5 }"
	if d["diff"] != wantDiff {
		t.Fatalf("diff\n%q\nwant\n%q", d["diff"], wantDiff)
	}
	wantPatch := "--- f.go\n+++ f.go\n@@ -1,5 +1,5 @@\n package x\n \n func A() int {\n-\treturn 1\n+\treturn 2\n }\n"
	if d["patch"] != wantPatch {
		t.Fatalf("patch\n%q\nwant\n%q", d["patch"], wantPatch)
	}
}

func TestEditErrors(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	writeFile(t, dir, "f.txt", "alpha\nbeta\nalpha\ngamma\n")
	one := func(o, n string) map[string]any {
		return map[string]any{"path": "f.txt", "edits": []map[string]string{{"oldText": o, "newText": n}}}
	}
	wantError(t, run(t, env, "edit", one("delta", "x")),
		"Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.")
	wantError(t, run(t, env, "edit", one("alpha", "x")),
		"Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.")
	wantError(t, run(t, env, "edit", one("beta", "beta")),
		"No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")
	wantError(t, run(t, env, "edit", one("", "x")), "oldText must not be empty in f.txt.")
	wantError(t, run(t, env, "edit", map[string]any{"path": "nope.txt", "oldText": "a", "newText": "b"}), "File not found: nope.txt")

	multi := func(pairs ...string) map[string]any {
		var edits []map[string]string
		for i := 0; i < len(pairs); i += 2 {
			edits = append(edits, map[string]string{"oldText": pairs[i], "newText": pairs[i+1]})
		}
		return map[string]any{"path": "f.txt", "edits": edits}
	}
	wantError(t, run(t, env, "edit", multi("beta", "B", "beta\nalpha", "X")),
		"edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions.")
	wantError(t, run(t, env, "edit", multi("beta", "B", "zzz", "X")),
		"Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines.")
	wantError(t, run(t, env, "edit", multi("beta", "B", "alpha", "X")),
		"Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique.")
	wantError(t, run(t, env, "edit", multi("beta", "B", "", "X")), "edits[1].oldText must not be empty in f.txt.")
	wantError(t, run(t, env, "edit", multi("beta", "beta", "gamma", "gamma")),
		"No changes made to f.txt. The replacements produced identical content.")
	if got := readFile(t, filepath.Join(dir, "f.txt")); got != "alpha\nbeta\nalpha\ngamma\n" {
		t.Fatalf("failed edits changed the file: %q", got)
	}
}

func TestEditMultipleAgainstOriginal(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	p := writeFile(t, dir, "f.txt", "one\ntwo\nthree\nfour\n")
	// the second edit matches the original text, not the result of the first
	r := run(t, env, "edit", map[string]any{"path": "f.txt", "edits": []map[string]string{
		{"oldText": "four", "newText": "4"},
		{"oldText": "one", "newText": "four"},
	}})
	if got := mustText(t, r); got != "Successfully replaced 2 block(s) in f.txt." {
		t.Fatalf("got %q", got)
	}
	if got := readFile(t, p); got != "four\ntwo\nthree\n4\n" {
		t.Fatalf("file %q", got)
	}
	if d := decodeDetails(t, r); d["firstChangedLine"] != float64(1) {
		t.Fatalf("firstChangedLine %v", d["firstChangedLine"])
	}
}

func TestEditLegacyArgs(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	p := writeFile(t, dir, "f.txt", "hello world\n")
	mustText(t, run(t, env, "edit", map[string]any{"path": "f.txt", "oldText": "world", "newText": "there"}))
	if got := readFile(t, p); got != "hello there\n" {
		t.Fatalf("file %q", got)
	}
	// legacy fields are folded into edits alongside the array
	r := run(t, env, "edit", map[string]any{"path": "f.txt", "edits": []map[string]string{{"oldText": "hello", "newText": "bye"}}, "oldText": "there", "newText": "now"})
	if got := mustText(t, r); got != "Successfully replaced 2 block(s) in f.txt." {
		t.Fatalf("got %q", got)
	}
	if got := readFile(t, p); got != "bye now\n" {
		t.Fatalf("file %q", got)
	}
	// edits sent as a JSON string, and as a single object
	mustText(t, run(t, env, "edit", map[string]any{"path": "f.txt", "edits": `[{"oldText":"bye","newText":"hi"}]`}))
	mustText(t, run(t, env, "edit", map[string]any{"path": "f.txt", "edits": map[string]string{"oldText": "now", "newText": "then"}}))
	if got := readFile(t, p); got != "hi then\n" {
		t.Fatalf("file %q", got)
	}
}

func TestEditCRLFAndBOM(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	p := writeFile(t, dir, "w.txt", "\uFEFFfirst\r\nsecond\r\nthird\r\n")
	mustText(t, run(t, env, "edit", map[string]any{"path": "w.txt", "edits": []map[string]string{{"oldText": "first\nsecond", "newText": "1st\n2nd\nextra"}}}))
	if got := readFile(t, p); got != "\uFEFF1st\r\n2nd\r\nextra\r\nthird\r\n" {
		t.Fatalf("file %q", got)
	}
	// oldText with CRLF also matches
	mustText(t, run(t, env, "edit", map[string]any{"path": "w.txt", "oldText": "extra\r\nthird", "newText": "3rd"}))
	if got := readFile(t, p); got != "\uFEFF1st\r\n2nd\r\n3rd\r\n" {
		t.Fatalf("file %q", got)
	}
}

func TestEditFuzzy(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	orig := "say(\u201chello\u201d)   \nit\u2019s \u2014 fine\u00a0now\nkeep   \n"
	p := writeFile(t, dir, "q.txt", orig)
	r := run(t, env, "edit", map[string]any{"path": "q.txt", "edits": []map[string]string{{"oldText": "say(\"hello\")\nit's - fine now", "newText": "say(\"bye\")\nit's - fine now"}}})
	mustText(t, r)
	// after a fuzzy match the whole file is written in normalised form
	if got := readFile(t, p); got != "say(\"bye\")\nit's - fine now\nkeep\n" {
		t.Fatalf("file %q", got)
	}
	// occurrences are counted in normalised space
	writeFile(t, dir, "d.txt", "a \u2013 b\na - b\n")
	wantError(t, run(t, env, "edit", map[string]any{"path": "d.txt", "oldText": "a \u2014 b", "newText": "x"}),
		"Found 2 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it unique.")
	// NFKC: a full-width letter matches its ASCII form
	writeFile(t, dir, "n.txt", "\uff21BC\n")
	mustText(t, run(t, env, "edit", map[string]any{"path": "n.txt", "oldText": "ABC", "newText": "xyz"}))
	if got := readFile(t, filepath.Join(dir, "n.txt")); got != "xyz\n" {
		t.Fatalf("file %q", got)
	}
}

func TestDisplayDiffContextAndPatchHunks(t *testing.T) {
	var oldLines []string
	for i := 1; i <= 30; i++ {
		oldLines = append(oldLines, "l"+string(rune('a'+i%26)))
	}
	old := strings.Join(oldLines, "\n") + "\n"
	newLines := append([]string(nil), oldLines...)
	newLines[1] = "CHANGED2"
	newLines[25] = "CHANGED26"
	nw := strings.Join(newLines, "\n") + "\n"
	diff, first := displayDiff(old, nw, 4)
	if first != 2 {
		t.Fatalf("first %d", first)
	}
	if !strings.HasPrefix(diff, "  1 lb\n- 2 lc\n+ 2 CHANGED2\n  3 ld\n") || strings.Contains(diff, "...") {
		t.Fatalf("diff:\n%s", diff)
	}
	// unchanged runs away from a change are cut to 4 lines with "..."
	single := append([]string(nil), oldLines...)
	single[14] = "MID"
	diff, first = displayDiff(old, strings.Join(single, "\n")+"\n", 4)
	wantDiff := "    ...\n 11 ll\n 12 lm\n 13 ln\n 14 lo\n-15 lp\n+15 MID\n 16 lq\n 17 lr\n 18 ls\n 19 lt\n    ..."
	if diff != wantDiff || first != 15 {
		t.Fatalf("diff %d:\n%s\nwant:\n%s", first, diff, wantDiff)
	}
	patch := unifiedPatch("p", old, nw, 4)
	if strings.Count(patch, "@@ -") != 2 || !strings.Contains(patch, "@@ -1,6 +1,6 @@") || !strings.Contains(patch, "@@ -22,9 +22,9 @@") {
		t.Fatalf("patch:\n%s", patch)
	}
	// missing newline at end of file is marked
	patch = unifiedPatch("p", "a\nb", "a\nc", 4)
	if patch != "--- p\n+++ p\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" {
		t.Fatalf("patch %q", patch)
	}
	// insertion into an empty file
	if patch = unifiedPatch("p", "", "x\n", 4); patch != "--- p\n+++ p\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Fatalf("patch %q", patch)
	}
}
