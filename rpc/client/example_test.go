package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/pisces-agent/pisces/rpc"
	"github.com/pisces-agent/pisces/rpc/client"
)

// exampleScript writes a scripted-provider script and returns its path and
// an agent directory (in a real program: use a real provider and your own
// directories).
func exampleScript(script string) (path, agentDir string) {
	dir, err := os.MkdirTemp("", "pisces-example")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		log.Fatal(err)
	}
	return path, filepath.Join(dir, "agent")
}

// Start a pisces process, send a prompt and wait until the agent has
// settled.
func Example() {
	script, agentDir := exampleScript(`{"turns":[{"content":[{"type":"text","text":"Hello! How can I help?"}]}]}`)
	defer os.RemoveAll(filepath.Dir(script))

	ctx := context.Background()
	c, err := client.Start(ctx, piscesBin, // the path of the pisces binary
		"--provider", "scripted", "--script", script, "--no-session", "--agent-dir", agentDir)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	events, err := c.PromptAndWait(ctx, "hi")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client.AssistantText(events))
	fmt.Println(events[len(events)-1].Type)
	// Output:
	// Hello! How can I help?
	// agent_settled
}

// Read events as they arrive while a run streams: decode each into its
// struct of package rpc.
func ExampleClient_Events() {
	script, agentDir := exampleScript(`{"turns":[
		{"content":[{"type":"toolCall","name":"bash","arguments":{"command":"echo hi"}}]},
		{"content":[{"type":"text","text":"The command printed: hi"}]}]}`)
	defer os.RemoveAll(filepath.Dir(script))

	ctx := context.Background()
	c, err := client.StartWith(ctx, []client.Option{client.WithTimeout(time.Minute)}, piscesBin,
		"--provider", "scripted", "--script", script, "--no-session", "--agent-dir", agentDir)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Prompt(ctx, "run echo hi"); err != nil {
		log.Fatal(err)
	}
	for ev := range c.Events() {
		v, err := ev.Decode()
		if err != nil {
			log.Fatal(err)
		}
		switch e := v.(type) {
		case *rpc.ToolExecutionStartEvent:
			fmt.Printf("tool %s %s\n", e.ToolName, e.Args)
		case *rpc.ToolExecutionEndEvent:
			fmt.Printf("result %q\n", e.Result.Content[0].Text)
		case *rpc.MessageEndEvent:
			if am, ok := e.Message.(*rpc.AssistantMessage); ok && am.StopReason == "stop" {
				fmt.Println("assistant:", am.Content[0].Text)
			}
		case *rpc.AgentSettledEvent:
			return
		}
	}
	// Output:
	// tool bash {"command":"echo hi"}
	// result "hi\n"
	// assistant: The command printed: hi
}

// A command the server refuses comes back as a *client.CommandError.
func ExampleCommandError() {
	script, agentDir := exampleScript(`{"turns":[]}`)
	defer os.RemoveAll(filepath.Dir(script))

	ctx := context.Background()
	c, err := client.Start(ctx, piscesBin,
		"--provider", "scripted", "--script", script, "--no-session", "--agent-dir", agentDir)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	err = c.SetSteeringMode(ctx, "sometimes")
	var ce *client.CommandError
	if errors.As(err, &ce) {
		fmt.Println(ce.Command)
		fmt.Println(ce.Message)
	}
	// Output:
	// set_steering_mode
	// Invalid field "mode": expected one of "all", "one-at-a-time", got "sometimes"
}

// Per-request timeouts: a context deadline bounds one request,
// WithTimeout all requests without one.
func ExampleWithTimeout() {
	script, agentDir := exampleScript(`{"turns":[{"content":[{"type":"text","text":"thinking very hard"}],"hang":true}]}`)
	defer os.RemoveAll(filepath.Dir(script))

	ctx := context.Background()
	c, err := client.StartWith(ctx, []client.Option{client.WithTimeout(30 * time.Second)}, piscesBin,
		"--provider", "scripted", "--script", script, "--no-session", "--agent-dir", agentDir)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = c.PromptAndWait(short, "go")
	fmt.Println(errors.Is(err, context.DeadlineExceeded))

	if err := c.Abort(ctx); err != nil { // answered once the run has stopped
		log.Fatal(err)
	}
	st, err := c.GetState(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.IsStreaming)
	// Output:
	// true
	// false
}
