package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/tools"
)

// serverTool is one tool of a server, under pi's name.
type serverTool struct {
	srv    *Server
	tool   *sdk.Tool
	name   string
	schema json.RawMessage
}

// newServerTool offers t under name with its input schema as the server
// wrote it (nil: the SDK's decoded value encoded again).
func newServerTool(srv *Server, t *sdk.Tool, name string, schema json.RawMessage) *serverTool {
	if schema == nil {
		schema = (*schemaTap)(nil).schema(t)
	}
	return &serverTool{srv: srv, tool: t, name: name, schema: schema}
}

func (t *serverTool) Name() string                { return t.name }
func (t *serverTool) Description() string         { return t.tool.Description }
func (t *serverTool) Parameters() json.RawMessage { return t.schema }

func (t *serverTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	sess, err := t.srv.session(ctx)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("Tool %s failed: %v", t.name, err)), nil
	}
	args := call.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: t.tool.Name, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return tools.ErrorResult("Tool execution aborted"), nil
		}
		return tools.ErrorResult(fmt.Sprintf("Tool %s failed: %v", t.name, connectError(err))), nil
	}
	out := tools.Result{
		Content: convertContent(res.Content),
		Details: jsonx.MustMarshal(struct {
			Server string `json:"server"`
			Tool   string `json:"tool"`
		}{t.srv.cfg.Name, t.tool.Name}),
		IsError: res.IsError,
	}
	if res.StructuredContent != nil {
		if b, err := jsonx.Marshal(res.StructuredContent); err == nil {
			out.StructuredContent = b
		}
	}
	out.Content = truncateMiddle(out.Content, resultLimit)
	return out, nil
}

// convertContent keeps a result's blocks as message content: text and
// images as they are; audio, resource links and embedded resources that
// are not text or images as a line naming them.
func convertContent(cs []sdk.Content) []ai.Content {
	out := make([]ai.Content, 0, len(cs))
	for _, c := range cs {
		switch c := c.(type) {
		case *sdk.TextContent:
			out = append(out, ai.Text(c.Text))
		case *sdk.ImageContent:
			out = append(out, ai.Image(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType))
		case *sdk.AudioContent:
			out = append(out, ai.Text(fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data))))
		case *sdk.ResourceLink:
			out = append(out, ai.Text(fmt.Sprintf("[resource link: %s (%s)]", c.Name, c.URI)))
		case *sdk.EmbeddedResource:
			out = append(out, resourceContent(c.Resource)...)
		default:
			if b, err := json.Marshal(c); err == nil {
				out = append(out, ai.Text(string(b)))
			}
		}
	}
	return out
}

func resourceContent(r *sdk.ResourceContents) []ai.Content {
	switch {
	case r == nil:
		return nil
	case r.Text != "" || r.Blob == nil:
		return []ai.Content{ai.Text(r.Text)}
	case strings.HasPrefix(r.MIMEType, "image/"):
		return []ai.Content{ai.Image(base64.StdEncoding.EncodeToString(r.Blob), r.MIMEType)}
	}
	return []ai.Content{ai.Text(fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))}
}

// truncateMiddle cuts the text of a result longer than limit bytes in the
// middle, with a note saying how much was left out; images are kept.
func truncateMiddle(cs []ai.Content, limit int) []ai.Content {
	total := 0
	for _, c := range cs {
		if c.Type == ai.ContentText {
			total += len(c.Text)
		}
	}
	if total <= limit {
		return cs
	}
	var sb strings.Builder
	var rest []ai.Content
	for _, c := range cs {
		if c.Type == ai.ContentText {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(c.Text)
		} else {
			rest = append(rest, c)
		}
	}
	text := sb.String()
	head := validPrefix(text, limit/2)
	tail := validSuffix(text, limit/2)
	cut := len(text) - len(head) - len(tail)
	return append([]ai.Content{ai.Text(head + fmt.Sprintf("\n\n[... %d bytes truncated from the middle of this MCP result ...]\n\n", cut) + tail)}, rest...)
}

func validPrefix(s string, n int) string {
	for n > 0 && n < len(s) && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func validSuffix(s string, n int) string {
	i := len(s) - n
	for i < len(s) && !utf8Start(s[i]) {
		i++
	}
	return s[i:]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// searchTool is tool_search: it finds deferred (and codemode-exposed)
// tools by name and description and loads the matches.
type searchTool struct{ s *Session }

const searchDescription = "Search the tools of the connected MCP servers that are not declared yet, by name and description, and load the matches: they can be called from your next call on."

func (*searchTool) Name() string        { return ToolSearchName }
func (*searchTool) Description() string { return searchDescription }
func (*searchTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Words to look for in tool names and descriptions"}},"required":["query"]}`)
}

func (t *searchTool) Execute(_ context.Context, call tools.Call) (tools.Result, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return tools.ErrorResult("tool_search needs a query (words to look for)"), nil
	}
	terms := strings.Fields(strings.ToLower(a.Query))
	type hit struct {
		e     Entry
		score int
	}
	var hits []hit
	for _, e := range t.s.Entries() {
		if e.Server == "" || e.Exposure == ExposureDirect {
			continue
		}
		name := strings.ToLower(e.Tool.Name())
		desc := strings.ToLower(e.Tool.Description())
		score := 0
		for _, term := range terms {
			if strings.Contains(name, term) {
				score += 2
			}
			if strings.Contains(desc, term) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{e, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > searchLimit {
		hits = hits[:searchLimit]
	}
	if len(hits) == 0 {
		return tools.Result{
			Content: []ai.Content{ai.Text(fmt.Sprintf("No tools match %q.", a.Query))},
			Details: json.RawMessage(`{"loaded":[]}`),
		}, nil
	}
	names := make([]string, 0, len(hits))
	var b strings.Builder
	fmt.Fprintf(&b, "Loaded %d tools. They are available from your next call:", len(hits))
	if len(hits) == 1 {
		b.Reset()
		b.WriteString("Loaded 1 tool. It is available from your next call:")
	}
	for _, h := range hits {
		names = append(names, h.e.Tool.Name())
		desc, _, _ := strings.Cut(h.e.Tool.Description(), "\n")
		fmt.Fprintf(&b, "\n- %s: %s", h.e.Tool.Name(), desc)
	}
	t.s.load(names)
	return tools.Result{
		Content: []ai.Content{ai.Text(b.String())},
		Details: jsonx.MustMarshal(struct {
			Loaded []string `json:"loaded"`
		}{names}),
	}, nil
}

// resourceTools are list_mcp_resources, list_mcp_resource_templates and
// read_mcp_resource.
func resourceTools(s *Session) []tools.Tool {
	return []tools.Tool{
		&resourceTool{s: s, name: ListResourcesName,
			desc:   "List the resources the connected MCP servers offer (optionally of one server).",
			schema: `{"type":"object","properties":{"server":{"type":"string","description":"Only this server's resources"}}}`},
		&resourceTool{s: s, name: ListResourceTemplatesName,
			desc:   "List the resource templates the connected MCP servers offer (optionally of one server).",
			schema: `{"type":"object","properties":{"server":{"type":"string","description":"Only this server's templates"}}}`},
		&resourceTool{s: s, name: ReadResourceName,
			desc:   "Read a resource of an MCP server by its URI.",
			schema: `{"type":"object","properties":{"server":{"type":"string","description":"The server offering the resource"},"uri":{"type":"string","description":"The resource's URI"}},"required":["server","uri"]}`},
	}
}

type resourceTool struct {
	s                  *Session
	name, desc, schema string
}

func (t *resourceTool) Name() string                { return t.name }
func (t *resourceTool) Description() string         { return t.desc }
func (t *resourceTool) Parameters() json.RawMessage { return json.RawMessage(t.schema) }

func (t *resourceTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &a); err != nil {
			return tools.ErrorResult(t.name + ": the arguments must be an object"), nil
		}
	}
	var servers []*Server
	for _, srv := range t.s.Servers() {
		st := srv.snapshot()
		if st.state == StateConnected && st.resources && (a.Server == "" || srv.cfg.Name == a.Server) {
			servers = append(servers, srv)
		}
	}
	if a.Server != "" && len(servers) == 0 {
		return tools.ErrorResult(fmt.Sprintf("No connected MCP server %q offers resources", a.Server)), nil
	}
	if t.name == ReadResourceName {
		if a.URI == "" || a.Server == "" {
			return tools.ErrorResult("read_mcp_resource needs server and uri"), nil
		}
		sess, err := servers[0].session(ctx)
		if err != nil {
			return tools.ErrorResult(err.Error()), nil
		}
		res, err := sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: a.URI})
		if err != nil {
			return tools.ErrorResult(fmt.Sprintf("Reading %s from %s failed: %v", a.URI, a.Server, err)), nil
		}
		var out []ai.Content
		for _, c := range res.Contents {
			out = append(out, resourceContent(c)...)
		}
		return tools.Result{Content: truncateMiddle(out, resultLimit)}, nil
	}
	type item struct {
		Server      string `json:"server"`
		URI         string `json:"uri,omitempty"`
		URITemplate string `json:"uriTemplate,omitempty"`
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		MIMEType    string `json:"mimeType,omitempty"`
	}
	items := []item{}
	for _, srv := range servers {
		sess, err := srv.session(ctx)
		if err != nil {
			return tools.ErrorResult(err.Error()), nil
		}
		if t.name == ListResourcesName {
			for r, err := range sess.Resources(ctx, nil) {
				if err != nil {
					return tools.ErrorResult(fmt.Sprintf("Listing %s's resources failed: %v", srv.cfg.Name, err)), nil
				}
				items = append(items, item{Server: srv.cfg.Name, URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
			}
		} else {
			for r, err := range sess.ResourceTemplates(ctx, nil) {
				if err != nil {
					return tools.ErrorResult(fmt.Sprintf("Listing %s's resource templates failed: %v", srv.cfg.Name, err)), nil
				}
				items = append(items, item{Server: srv.cfg.Name, URITemplate: r.URITemplate, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
			}
		}
	}
	b, _ := jsonx.Marshal(items)
	return tools.Result{Content: truncateMiddle([]ai.Content{ai.Text(string(b))}, resultLimit)}, nil
}
