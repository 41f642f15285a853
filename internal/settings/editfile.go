package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EditFile stores value at path (nil removes it) in the JSON file at file
// (comments allowed), changing only the bytes that must change, as Set
// does for settings files; a file that cannot be edited in place is
// rewritten as plain indented JSON. value is written in its own key order
// (a struct keeps its field order). Other JSON files of the agent dir
// (mcp.json) are edited with it.
func EditFile(file string, path []string, value any) error {
	var norm any
	if value != nil {
		b, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&norm); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	data, cur, err := readFileData(file)
	if err != nil {
		return err
	}
	want := deepCopy(cur).(map[string]any)
	setPath(want, path, norm, value == nil)
	out, _, ok := editText(data, path, value, value == nil, want)
	if !ok {
		if out, err = encodeFile(want); err != nil {
			return fmt.Errorf("encode %s: %w", file, err)
		}
	}
	if data != nil && bytes.Equal(out, data) {
		return nil
	}
	return writeAtomic(file, out)
}
