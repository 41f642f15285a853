package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// sdkChunk decodes data with the openai-go SDK, as the reader did before
// it had decoders of its own.
func sdkChunk(data []byte) (chunkData, error) {
	var ch openai.ChatCompletionChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return chunkData{}, err
	}
	return chunkFromSDK(&ch), nil
}

// chunkFromSDK extracts the used members of a chunk decoded by the SDK.
func chunkFromSDK(ch *openai.ChatCompletionChunk) chunkData {
	var d chunkData
	d.id = ch.ID
	if ch.JSON.Usage.Valid() {
		d.hasUsage = true
		d.usage = usageFromSDK(ch.Usage)
	} else if xg, ok := ch.JSON.ExtraFields["x_groq"]; ok {
		var v struct {
			Usage *openai.CompletionUsage `json:"usage"`
		}
		if json.Unmarshal([]byte(xg.Raw()), &v) == nil && v.Usage != nil {
			d.hasUsage = true
			d.usage = usageFromSDK(*v.Usage)
		}
	}
	if len(ch.Choices) == 0 {
		return d
	}
	choice := ch.Choices[0]
	delta := choice.Delta
	d.hasChoice = true
	d.content = delta.Content
	d.refusal = delta.Refusal
	for _, f := range reasoningFields {
		if v, ok := delta.JSON.ExtraFields[f]; ok {
			var s string
			if json.Unmarshal([]byte(v.Raw()), &s) == nil && s != "" {
				d.reasoningField, d.reasoningText = f, s
				break
			}
		}
	}
	for _, tc := range delta.ToolCalls {
		d.toolCalls = append(d.toolCalls, toolCallData{index: tc.Index, id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
	}
	d.finish = choice.FinishReason
	return d
}

func usageFromSDK(u openai.CompletionUsage) usageData {
	d := usageData{
		prompt:     u.PromptTokens,
		completion: u.CompletionTokens,
		cached:     u.PromptTokensDetails.CachedTokens,
		cacheWrite: u.PromptTokensDetails.CacheWriteTokens,
	}
	if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
		d.cacheHit = f.Raw()
	}
	return d
}

// checkJSONDecoder compares decodeChunkJSON with the SDK on data: the same
// members, or the same error text.
func checkJSONDecoder(t *testing.T, data []byte) {
	t.Helper()
	want, werr := sdkChunk(data)
	got := chunkData{id: "x", content: "y", toolCalls: []toolCallData{{id: "z"}}}
	err := decodeChunkJSON(data, &got)
	if fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Fatalf("chunk %s: error %v, SDK %v", data, err, werr)
	}
	if err == nil && !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Fatalf("chunk %s:\nSDK  %+v\nJSON %+v", data, normalize(want), normalize(got))
	}
}

func normalize(d chunkData) chunkData {
	if len(d.toolCalls) == 0 {
		d.toolCalls = nil
	}
	return d
}

// checkChunk compares the fast decoder with the SDK on data; it reports
// whether the fast decoder took the chunk.
func checkChunk(t *testing.T, data []byte) bool {
	t.Helper()
	checkJSONDecoder(t, data)
	want, werr := sdkChunk(data)
	for _, needID := range []bool{true, false} {
		var got chunkData
		if !decodeChunk(data, needID, &got) {
			return false
		}
		if werr != nil {
			t.Fatalf("fast decoder accepted what the SDK rejects (%v): %s", werr, data)
		}
		if err := streamErrorEvent(data); err != nil {
			t.Fatalf("fast decoder accepted an error event (%v): %s", err, data)
		}
		w := want
		if !needID {
			w.id = ""
		}
		if !reflect.DeepEqual(normalize(got), normalize(w)) {
			t.Fatalf("chunk %s (needID %v):\nSDK  %+v\nfast %+v", data, needID, normalize(w), normalize(got))
		}
		// And through decodeChunkData, reusing a dirty value.
		got = chunkData{id: "x", content: "y", toolCalls: []toolCallData{{id: "z"}}}
		if err := decodeChunkData(data, true, &got); err != nil || !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("decodeChunkData %s: %v %+v", data, err, got)
		}
	}
	return true
}

// Every chunk of the captured streams, and the benchmark mock's, go through
// the fast decoder and decode as with the SDK.
func TestChunkDecoderOnFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/completions_*.sse")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			data = strings.TrimSpace(data)
			if !ok || data == "[DONE]" || !strings.HasPrefix(data, `{"id"`) {
				continue
			}
			// Error events are left to the SDK path.
			if !checkChunk(t, []byte(data)) && !strings.Contains(data, `"error":{`) {
				t.Errorf("%s: fast decoder declined %s", f, data)
			}
			n++
		}
	}
	for _, data := range []string{
		`{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1795360000,"model":"mock-model","choices":[{"index":0,"delta":{"content":"w12 "},"finish_reason":null}]}`,
		`{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5000,"total_tokens":5012}}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"think\n\"q\" \u00e9"},"finish_reason":null}]}`,
	} {
		if !checkChunk(t, []byte(data)) {
			t.Errorf("fast decoder declined %s", data)
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d chunks", n)
	}
}

// Chunks with odd shapes: the fast decoder either declines them or agrees
// with the SDK.
func TestChunkDecoderOddShapes(t *testing.T) {
	for _, data := range []string{
		`{}`, `null`, `[]`, `"x"`, `5`, `{"id":5}`, `{"id":null}`, `{"id":"a","id":"b"}`, `{"id":"a\ud83d\ude00"}`,
		`{"id":"\ud800"}`, "{\"id\":\"\xff\"}", `{"usage":null}`, `{"usage":{}}`, `{"usage":5}`, `{"usage":{"prompt_tokens":1.5}}`,
		`{"usage":{"prompt_tokens":"7"}}`, `{"usage":{"prompt_tokens":12,"prompt_tokens_details":{"cached_tokens":3,"cache_write_tokens":2}}}`,
		`{"usage":{"prompt_tokens":12,"prompt_cache_hit_tokens":4}}`, `{"usage":{"prompt_tokens":12,"prompt_cache_hit_tokens":"4"}}`,
		`{"usage":{"prompt_tokens":123456789012345678}}`, `{"usage":{"prompt_tokens":-3}}`, `{"usage":{"prompt_tokens_details":null}}`,
		`{"usage":{"prompt_tokens":1},"usage":null}`, `{"x_groq":{"usage":{"prompt_tokens":3}}}`,
		`{"choices":null}`, `{"choices":{}}`, `{"choices":[null]}`, `{"choices":[5]}`, `{"choices":[{},5]}`, `{"choices":[{},{}]}`,
		`{"choices":[{"delta":null}]}`, `{"choices":[{"delta":5}]}`, `{"choices":[{"delta":{"content":5}}]}`,
		`{"choices":[{"delta":{"content":null,"refusal":"no"}}]}`, `{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
		`{"choices":[{"delta":{"reasoning":"r","reasoning_content":""}}]}`, `{"choices":[{"delta":{"reasoning":5,"reasoning_text":"t"}}]}`,
		`{"choices":[{"delta":{"reasoning":"\ud800x"}}]}`, "{\"choices\":[{\"delta\":{\"reasoning\":\"\xff\"}}]}",
		`{"choices":[{"delta":{"reasoning_content":null,"reasoning":"b"}}]}`,
		`{"choices":[{"delta":{"tool_calls":[null]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":1,"function":null}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":1}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":"1"}]}}]}`, `{"choices":[{"delta":{"tool_calls":{}}}]}`,
		`{"choices":[{"finish_reason":"stop"}]}`, `{"choices":[{"finish_reason":1}]}`, `{"choices":[{"delta":{}}],"choices":[]}`,
		` { "id" : "a" , "choices" : [ { "delta" : { "content" : "x" } } ] } `, `{"a":[1,2,{"b":[true,false,null]}],"c":-0.5e+3}`,
		`{"id":"a",}`, `{"id":"a"`, `{"id":"a"}}`, `{"id":"a"} x`, `{"id":01}`, `{"a":[1,]}`, `{"a":tru}`, "{\"a\":\"\x01\"}",
		`{"error":null}`, `{"ERROR":{"message":"m"}}`, `{"Error":"x"}`, `{"errör":1}`, `{"choices":[{"delta":{"content":"\"error\""}}]}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a\"b":1}`, `{"a\u0062":1}`, `{"content":"top"}`, `{"choices":[{"delta":{"content":"\u2028\/\b"}}]}`,
	} {
		checkChunk(t, []byte(data))
	}
}

// Random chunks built from the members the decoder reads, with values of
// every type, random whitespace and duplicate keys.
func TestChunkDecoderRandom(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	strs := []string{`""`, `"a"`, `"w1 "`, `"\n\"\\"`, `"\u00e9\u2028"`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `"日本"`, `"\/"`}
	var value func(depth int, keys []string) string
	scalar := func() string {
		switch r.Intn(6) {
		case 0:
			return strs[r.Intn(len(strs))]
		case 1:
			return []string{"0", "1", "-7", "12", "1.5", "1e3", "123456789012345678", "-0"}[r.Intn(8)]
		case 2:
			return "null"
		case 3:
			return []string{"true", "false"}[r.Intn(2)]
		default:
			return strs[r.Intn(3)]
		}
	}
	ws := func() string { return []string{"", "", "", " ", "\n\t"}[r.Intn(5)] }
	object := func(depth int, keys []string) string {
		var b strings.Builder
		b.WriteString("{")
		n := r.Intn(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			k := keys[r.Intn(len(keys))]
			b.WriteString(ws() + `"` + k + `"` + ws() + ":" + ws() + value(depth+1, keys) + ws())
		}
		b.WriteString("}")
		return b.String()
	}
	value = func(depth int, keys []string) string {
		if depth > 4 {
			return scalar()
		}
		switch r.Intn(5) {
		case 0:
			return object(depth, keys)
		case 1:
			n := r.Intn(3)
			var parts []string
			for i := 0; i < n; i++ {
				parts = append(parts, value(depth+1, keys))
			}
			return "[" + strings.Join(parts, ","+ws()) + "]"
		default:
			return scalar()
		}
	}
	keys := []string{"id", "usage", "choices", "delta", "content", "refusal", "reasoning", "reasoning_content", "reasoning_text",
		"tool_calls", "index", "function", "name", "arguments", "finish_reason", "prompt_tokens", "completion_tokens",
		"prompt_tokens_details", "cached_tokens", "cache_write_tokens", "prompt_cache_hit_tokens", "other", "error", "ErroR", "x_groq"}
	took := 0
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for i := 0; i < n; i++ {
		data := object(0, keys)
		if r.Intn(20) == 0 {
			data = value(0, keys)
		}
		if checkChunk(t, []byte(data)) {
			took++
		}
	}
	if took < n/10 {
		t.Fatalf("the fast decoder took only %d of %d random chunks", took, n)
	}
}

func FuzzChunkDecoder(f *testing.F) {
	f.Add([]byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"w1 ","tool_calls":[{"index":0,"id":"x","function":{"name":"n","arguments":"{}"}}]},"finish_reason":null}],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}}`))
	f.Add([]byte(`{"choices":[{"delta":{"reasoning":"r"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		checkChunk(t, data)
	})
}

func BenchmarkChunkDecode(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1795360000,"model":"mock-model","choices":[{"index":0,"delta":{"content":"w12 "},"finish_reason":null}]}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var d chunkData
		for b.Loop() {
			if !decodeChunk(data, false, &d) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sdkChunk(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The SSE reader yields the same event data and errors as the SDK's decoder.
func TestSSEReaderMatchesSDK(t *testing.T) {
	long := strings.Repeat("x", bufio.MaxScanTokenSize<<9+10)
	bodies := []string{
		"", "\n\n", "data: a\n\n", "data:a\r\ndata: b\r\n\r\n", ": comment\ndata: x\nevent: e\nid: 1\n\n",
		"data: one\n\ndata: two", "data: one\n\ndata: two\n", "data\n\n", "data:  two spaces\n\n\n\ndata: z\n\n",
		"event: only\n\ndata: after\n\n", "\rdata: cr\r\r\n\n", "data: " + long + "\n\ndata: next\n\n",
	}
	rng := rand.New(rand.NewSource(8))
	pieces := []string{"data: ", "data:", "data", ": c", "event: x", "\n", "\r\n", "\n\n", "a", "{}", "[DONE]", " ", ":"}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		bodies = append(bodies, b.String())
	}
	for _, body := range bodies {
		res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		dec := ssestream.NewDecoder(res)
		var want []string
		for dec.Next() {
			want = append(want, string(dec.Event().Data))
		}
		r := newSSEReader(strings.NewReader(body))
		var got []string
		for r.next() {
			got = append(got, string(r.data))
		}
		if !reflect.DeepEqual(got, want) || fmt.Sprint(r.err) != fmt.Sprint(dec.Err()) {
			t.Fatalf("body %.200q:\nSDK    %q %v\nreader %q %v", body, want, dec.Err(), got, r.err)
		}
	}
}
