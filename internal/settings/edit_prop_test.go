package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// A property test: random hand-written JSONC files, random Set and remove
// sequences. After every step the file must read as the old map-based Set
// would have left the settings, the edit must happen in place, and every
// comment of the file must still be there unless the member it belongs to
// was removed or its value replaced.

var propKeys = []string{"a", "b", "c", "task", "budget"}

type kv struct {
	key string
	val any
}

// jsoncGen writes a random settings file and remembers, for every comment
// (marked #n#), the path of the member or object it belongs to.
type jsoncGen struct {
	r        *rand.Rand
	next     int
	owner    map[string][]string
	unit, nl string
	trailing bool // every member ends with a comma
}

func (g *jsoncGen) mark(path []string) string {
	g.next++
	id := fmt.Sprintf("#%d#", g.next)
	g.owner[id] = append([]string(nil), path...)
	return id
}

func (g *jsoncGen) scalar() any {
	switch g.r.Intn(6) {
	case 0:
		return json.Number(fmt.Sprint(g.r.Intn(100)))
	case 1:
		return g.r.Intn(2) == 0
	case 2:
		return []string{"x // y", "/* z */", "<&>", "é", "plain"}[g.r.Intn(5)]
	case 3:
		return []any{json.Number("1"), "two"}
	case 4:
		return nil
	}
	return "v" + fmt.Sprint(g.r.Intn(10))
}

func (g *jsoncGen) tree(depth int) []kv {
	n := g.r.Intn(4)
	if depth == 0 {
		n++
	}
	keys := g.r.Perm(len(propKeys))
	var out []kv
	for _, k := range keys[:n] {
		if depth < 2 && g.r.Intn(2) == 0 {
			out = append(out, kv{propKeys[k], g.tree(depth + 1)})
		} else {
			out = append(out, kv{propKeys[k], g.scalar()})
		}
	}
	return out
}

func (g *jsoncGen) value(v any, path []string, level int) string {
	switch v := v.(type) {
	case []kv:
		return g.object(v, path, level)
	case []any:
		if g.r.Intn(3) == 0 {
			return "[1, /* " + g.mark(path) + " */ \"two\"]"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (g *jsoncGen) object(members []kv, path []string, level int) string {
	ind := strings.Repeat(g.unit, level)
	in := ind + g.unit
	if len(members) == 0 {
		if g.r.Intn(2) == 0 {
			return "{}"
		}
		return "{" + g.nl + in + "// " + g.mark(path) + g.nl + ind + "}"
	}
	if level > 0 && g.r.Intn(4) == 0 {
		// One line, as people write small objects; no comments inside.
		var parts []string
		for _, m := range members {
			k, _ := json.Marshal(m.key)
			parts = append(parts, string(k)+": "+g.flat(m.val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var sb strings.Builder
	sb.WriteString("{" + g.nl)
	for i, m := range members {
		mpath := append(append([]string(nil), path...), strings.Split(m.key, ".")...)
		if level == 0 {
			mpath = strings.Split(m.key, ".")
		}
		if g.r.Intn(4) == 0 {
			sb.WriteString(in + "// " + g.mark(path) + g.nl)
		}
		if g.r.Intn(6) == 0 {
			sb.WriteString(g.nl) // a blank line
		}
		sb.WriteString(in)
		if g.r.Intn(6) == 0 {
			sb.WriteString("/* " + g.mark(path) + " */ ")
		}
		k, _ := json.Marshal(m.key)
		sb.WriteString(string(k) + ": " + g.value(m.val, mpath, level+1))
		if i < len(members)-1 || g.trailing {
			sb.WriteString(",")
		}
		switch g.r.Intn(4) {
		case 0:
			sb.WriteString(" // " + g.mark(mpath))
		case 1:
			sb.WriteString(" /* " + g.mark(mpath) + " */")
		}
		sb.WriteString(g.nl)
	}
	if g.r.Intn(4) == 0 {
		sb.WriteString(in + "/* " + g.mark(path) + " */" + g.nl)
	}
	sb.WriteString(ind + "}")
	return sb.String()
}

func (g *jsoncGen) flat(v any) string {
	if m, ok := v.([]kv); ok {
		var parts []string
		for _, e := range m {
			k, _ := json.Marshal(e.key)
			parts = append(parts, string(k)+": "+g.flat(e.val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// file writes a random settings file. Some members of top-level objects are
// written as dotted top-level keys instead ("task.budget": {...}), never two
// members for one path.
func (g *jsoncGen) file() string {
	var top []kv
	for _, m := range g.tree(0) {
		obj, ok := m.val.([]kv)
		if !ok || g.r.Intn(2) == 0 {
			top = append(top, m)
			continue
		}
		var rest []kv
		for _, e := range obj {
			if g.r.Intn(2) == 0 {
				rest = append(rest, e)
				continue
			}
			if sub, ok := e.val.([]kv); ok && len(sub) > 0 && g.r.Intn(2) == 0 {
				for _, s := range sub {
					top = append(top, kv{m.key + "." + e.key + "." + s.key, s.val})
				}
				continue
			}
			top = append(top, kv{m.key + "." + e.key, e.val})
		}
		if len(rest) > 0 || g.r.Intn(2) == 0 {
			top = append(top, kv{m.key, rest})
		}
	}
	g.r.Shuffle(len(top), func(i, j int) { top[i], top[j] = top[j], top[i] })
	head := ""
	if g.r.Intn(3) == 0 {
		head = "// " + g.mark(nil) + g.nl
	}
	return head + g.object(top, nil, 0) + g.nl
}

// touched returns the path whose old value a Set of path on m replaces or
// removes (nil when it only adds).
func touched(m map[string]any, path []string, remove bool) []string {
	if remove {
		if _, ok := lookup(m, strings.Join(path, ".")); ok {
			return path
		}
		return nil
	}
	for j := 1; j <= len(path); j++ {
		v, ok := lookup(m, strings.Join(path[:j], "."))
		if !ok {
			return nil
		}
		if _, isObj := v.(map[string]any); !isObj || j == len(path) {
			return path[:j]
		}
	}
	return nil
}

func TestSetPropertyRandomFiles(t *testing.T) {
	t.Parallel()
	for src := int64(1); src <= 5; src++ {
		t.Run(fmt.Sprint("source", src), func(t *testing.T) { propRun(t, rand.New(rand.NewSource(src))) })
	}
}

func propRun(t *testing.T, r *rand.Rand) {
	values := []any{1, 2.5, "s", "a // b", "/* c */", true, false, nil, nil, []any{1, "x"},
		map[string]any{"k": 1}, map[string]any{"a": map[string]any{"b": "<&>"}}, map[string]any{}}
	for iter := range 300 {
		g := &jsoncGen{r: r, owner: map[string][]string{},
			unit: []string{"  ", "    ", "\t"}[r.Intn(3)], nl: []string{"\n", "\r\n"}[r.Intn(2)], trailing: r.Intn(3) == 0}
		text := []byte(g.file())
		orig := string(text)
		obj, err := parseObject(text)
		if err != nil {
			t.Fatalf("file %d does not parse: %v\n%s", iter, err, text)
		}
		model := expandDotted(obj)
		alive := map[string]bool{}
		for id := range g.owner {
			alive[id] = true
		}
		var steps []string
		for range 1 + r.Intn(6) {
			n := 1 + r.Intn(3)
			var path []string
			for range n {
				path = append(path, propKeys[r.Intn(len(propKeys))])
			}
			val := values[r.Intn(len(values))]
			steps = append(steps, fmt.Sprintf("Set(%q, %v)", strings.Join(path, "."), val))
			remove := val == nil
			norm := normalize(t, val)

			if y := touched(model, path, remove); y != nil {
				for id, p := range g.owner {
					if hasPrefix(p, y) {
						delete(alive, id)
					}
				}
			}
			want := deepCopy(model).(map[string]any)
			setPath(want, path, norm, remove)
			out, got, ok := editText(text, path, norm, remove, want)
			if !ok {
				t.Fatalf("file %d: %s fell back to a full rewrite\noriginal:\n%s\nbefore the last step:\n%s", iter, strings.Join(steps, ", "), orig, text)
			}
			// (a) The settings are what the map-based Set gives.
			obj, err := parseObject(out)
			if err != nil {
				t.Fatalf("file %d: %s: result does not parse: %v\n%s", iter, strings.Join(steps, ", "), err, out)
			}
			if again := expandDotted(obj); !reflect.DeepEqual(again, got) || !sameSettings(got, want, path, remove) {
				t.Fatalf("file %d: %s: settings %v, want %v", iter, strings.Join(steps, ", "), got, want)
			}
			// (b) Comments survive unless their member went.
			for id := range alive {
				if !bytes.Contains(out, []byte(id)) {
					t.Fatalf("file %d: %s: comment %s (of %q) lost\noriginal:\n%s\nbefore:\n%s\nafter:\n%s",
						iter, strings.Join(steps, ", "), id, g.owner[id], orig, text, out)
				}
			}
			// Line endings are kept.
			if g.nl == "\r\n" && bytes.Contains(bytes.ReplaceAll(out, []byte("\r\n"), nil), []byte("\n")) {
				t.Fatalf("file %d: %s: a bare LF in a CRLF file\n%q", iter, strings.Join(steps, ", "), out)
			}
			text, model = out, got
		}
	}
}
