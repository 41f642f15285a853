package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// args is a decoded arguments object with typed accessors that produce the
// error text the model sees when an argument has the wrong type.
type args struct {
	tool   string
	fields map[string]json.RawMessage
}

// argError is a bad argument; its message is shown to the model.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func parseArgs(tool string, raw json.RawMessage) (*args, error) {
	a := &args{tool: tool, fields: map[string]json.RawMessage{}}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return a, nil
	}
	if trimmed[0] != '{' {
		return nil, &argError{fmt.Sprintf("Invalid arguments for %s: expected a JSON object", tool)}
	}
	if err := json.Unmarshal(trimmed, &a.fields); err != nil {
		return nil, &argError{fmt.Sprintf("Invalid arguments for %s: %v", tool, err)}
	}
	return a, nil
}

func (a *args) fail(name, want string) error {
	return &argError{fmt.Sprintf("Invalid arguments for %s: %q must be %s", a.tool, name, want)}
}

func (a *args) present(name string) (json.RawMessage, bool) {
	v, ok := a.fields[name]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false
	}
	return v, true
}

// str reads a string; required strings that are missing are an error.
func (a *args) str(name string, required bool) (string, bool, error) {
	v, ok := a.present(name)
	if !ok {
		if required {
			return "", false, a.fail(name, "a string")
		}
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, a.fail(name, "a string")
	}
	return s, true, nil
}

// num reads an optional finite number. Numeric strings are accepted, as
// models sometimes quote numbers.
func (a *args) num(name string) (float64, bool, error) {
	v, ok := a.present(name)
	if !ok {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return 0, false, a.fail(name, "a number")
		}
		f, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, false, a.fail(name, "a number")
		}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, a.fail(name, "a number")
	}
	return f, true, nil
}

// integer reads an optional number and truncates it toward zero.
func (a *args) integer(name string) (int, bool, error) {
	f, ok, err := a.num(name)
	if err != nil || !ok {
		return 0, ok, err
	}
	if f > math.MaxInt32 {
		f = math.MaxInt32
	}
	if f < math.MinInt32 {
		f = math.MinInt32
	}
	return int(f), true, nil
}

// boolean reads an optional boolean ("true"/"false" strings accepted).
func (a *args) boolean(name string) (bool, error) {
	v, ok := a.present(name)
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		var s string
		if json.Unmarshal(v, &s) == nil {
			switch strings.TrimSpace(strings.ToLower(s)) {
			case "true":
				return true, nil
			case "false", "":
				return false, nil
			}
		}
		return false, a.fail(name, "a boolean")
	}
	return b, nil
}

// errResult turns an error into a Result the model reads.
func errResult(err error) Result { return ErrorResult(err.Error()) }
