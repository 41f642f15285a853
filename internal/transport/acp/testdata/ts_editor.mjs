// An editor built on the official TypeScript ACP SDK drives pisces --mode acp.
//
//   node ts_editor.mjs SDK_ENTRY PISCES AGENT_DIR PROJECT SCRIPT1 SCRIPT2 SCRIPT3 MCP_SERVER
//
// MCP_SERVER is an MCP server speaking stdio when PISCES_TEST_MCP_SERVER=1
// is set (the Go test binary); the third process gives it as the editor's
// server and runs bash in the editor's terminals.
// SDK_ENTRY is the SDK's stable entry file (dist/v1/stable/acp.js). The SDK
// validates every incoming session/update and session/request_permission
// and silently drops the invalid ones, so every session/update seen on the
// wire is compared with those the SDK delivered: one missing is a failure.
// The last stdout line is a JSON report; the exit code is 0 when it holds
// no failure.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Writable } from "node:stream";

const [sdkEntry, pisces, agentDir, project, script1, script2, script3, mcpServer] = process.argv.slice(2);
const { client, ndJsonStream } = await import(pathToFileURL(sdkEntry).href);

const failures = [];
const fail = (msg) => failures.push(msg);
const deadline = (ms, what) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms).unref());

// start runs one pisces process and connects an SDK client to it.
function start(script, permission) {
  const child = spawn(pisces, ["--mode", "acp", "--agent-dir", agentDir, "--provider", "scripted", "--script", script], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const wire = []; // session/update params as they were on the wire
  const delivered = []; // session/update params the SDK handed over
  let buffered = "";
  let controller;
  const input = new ReadableStream({ start(c) { controller = c; } });
  child.stdout.on("data", (chunk) => {
    buffered += chunk.toString("utf8");
    let i;
    while ((i = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      try {
        const m = JSON.parse(line);
        if (m.method === "session/update") wire.push(m.params);
      } catch {
        fail(`stdout line is not JSON: ${line}`);
      }
    }
    controller.enqueue(new Uint8Array(chunk));
  });
  child.stdout.on("end", () => controller.close());
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const asked = [];
  // The editor's terminals: real processes, their output kept.
  const terms = new Map();
  const termCalls = [];
  const term = (id) => {
    const t = terms.get(id);
    if (!t) throw new Error(`unknown terminal ${id}`);
    return t;
  };
  const app = client()
    .onNotification("session/update", ({ params }) => {
      delivered.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: permission } };
    })
    .onRequest("terminal/create", ({ params }) => {
      const id = `term-${terms.size + 1}`;
      const env = { ...process.env };
      for (const v of params.env ?? []) env[v.name] = v.value;
      const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, env });
      const t = { out: "", exit: null, proc };
      proc.stdout.on("data", (d) => { t.out += d; });
      proc.stderr.on("data", (d) => { t.out += d; });
      t.done = new Promise((resolve) => proc.on("close", (code, signal) => {
        t.exit = { exitCode: code, signal: signal };
        resolve();
      }));
      terms.set(id, t);
      termCalls.push(`create ${id}`);
      return { terminalId: id };
    })
    .onRequest("terminal/wait_for_exit", async ({ params }) => {
      const t = term(params.terminalId);
      await t.done;
      return t.exit;
    })
    .onRequest("terminal/output", ({ params }) => {
      const t = term(params.terminalId);
      termCalls.push(`output ${params.terminalId}`);
      return { output: t.out, truncated: false, exitStatus: t.exit };
    })
    .onRequest("terminal/kill", ({ params }) => {
      term(params.terminalId).proc.kill("SIGKILL");
      termCalls.push(`kill ${params.terminalId}`);
      return {};
    })
    .onRequest("terminal/release", ({ params }) => {
      const t = term(params.terminalId);
      if (!t.exit) t.proc.kill("SIGKILL");
      termCalls.push(`release ${params.terminalId}`);
      return {};
    });
  const conn = app.connect(ndJsonStream(Writable.toWeb(child.stdin), input));
  return { child, conn, cx: conn.agent, wire, delivered, asked, exited, termCalls };
}

// canonical is v as JSON with the keys of every object sorted (the SDK's
// validation rebuilds objects in the schema's key order).
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

// compare checks that every update on the wire was delivered, in order.
function compare(p, label) {
  const w = p.wire.map(canonical);
  const d = p.delivered.map(canonical);
  for (let i = 0; i < w.length; i++) {
    if (d[i] !== w[i]) {
      fail(`${label}: update ${i} on the wire was not delivered by the SDK (dropped as invalid?): ${w[i]}; delivered: ${d[i]}`);
      return;
    }
  }
}

async function waitFor(p, what, cond) {
  const stop = Date.now() + 60000;
  while (!cond()) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5)); // polls the SDK's deliveries
  }
}

const report = {};
// A step that never ends fails the run with its name, well before the Go
// test's own deadline.
let step = "start";
const watchdog = setTimeout(() => {
  fail(`timed out in step: ${step}`);
  report.failures = failures;
  console.log(JSON.stringify(report));
  process.exit(1);
}, 150000);
try {
  // First process: initialize, new, a prompt with a tool call that asks
  // permission, a model change, a cancelled prompt, the next prompt.
  step = "first process: initialize, session/new";
  const p1 = start(script1, "allow-once");
  const init = await p1.cx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  if (init.protocolVersion !== 1 || !init.agentCapabilities?.loadSession) fail(`initialize: ${JSON.stringify(init)}`);
  const created = await p1.cx.request("session/new", { cwd: project, mcpServers: [] });
  const sessionId = created.sessionId;
  report.sessionId = sessionId;
  step = "first prompt (write, permission)";
  const first = await p1.cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write the file" }] });
  if (first.stopReason !== "end_turn") fail(`first prompt: ${JSON.stringify(first)}`);
  if (p1.asked.length !== 1 || p1.asked[0].toolCall.toolCallId !== "w1") fail(`permission requests: ${JSON.stringify(p1.asked)}`);
  if (!existsSync(join(project, "note.txt"))) fail("the allowed write did not happen");
  const statuses = p1.delivered
    .filter((u) => u.update.toolCallId === "w1" && u.update.status)
    .map((u) => u.update.status);
  if (statuses[statuses.length - 1] !== "completed") fail(`w1 statuses ${statuses}`);

  step = "set_config_option";
  const changed = await p1.cx.request("session/set_config_option", { sessionId, configId: "thought_level", value: "low" });
  const level = changed.configOptions.find((o) => o.id === "thought_level");
  if (level?.currentValue !== "low") fail(`set_config_option: ${JSON.stringify(changed)}`);
  await p1.cx.request("session/set_config_option", { sessionId, configId: "model", value: "scripted/scripted" });

  step = "the prompt to cancel";
  const before = p1.delivered.length;
  const hanging = p1.cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "think long" }] });
  await waitFor(p1, "the streamed text", () =>
    p1.delivered.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk"));
  await p1.cx.notify("session/cancel", { sessionId });
  const cancelled = await Promise.race([hanging, deadline(60000, "the cancelled prompt")]);
  if (cancelled.stopReason !== "cancelled") fail(`cancelled prompt: ${JSON.stringify(cancelled)}`);
  step = "the prompt after the cancel";
  const next = await p1.cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "and then?" }] });
  if (next.stopReason !== "end_turn") fail(`prompt after the cancel: ${JSON.stringify(next)}`);
  compare(p1, "first process");
  report.firstUpdates = p1.wire.length;
  step = "the first process exiting";
  p1.child.stdin.end();
  const code1 = await Promise.race([p1.exited, deadline(60000, "the first process to exit")]);
  if (code1 !== 0) fail(`first process exit code ${code1}`);

  // Second process: load the session (its replay), then a prompt.
  step = "second process: initialize, session/load";
  const p2 = start(script2, "allow-once");
  await p2.cx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await p2.cx.request("session/load", { sessionId, cwd: project, mcpServers: [] });
  const replayed = p2.delivered.map((u) => u.update.sessionUpdate);
  if (!replayed.includes("user_message_chunk") || !replayed.includes("tool_call")) fail(`replay: ${replayed}`);
  step = "the prompt after load";
  const last = await p2.cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "still there?" }] });
  if (last.stopReason !== "end_turn") fail(`prompt after load: ${JSON.stringify(last)}`);
  compare(p2, "second process");
  report.secondUpdates = p2.wire.length;
  step = "the second process exiting";
  p2.child.stdin.end();
  await Promise.race([p2.exited, deadline(60000, "the second process to exit")]);

  // Third process: the editor's MCP server and its terminals.
  step = "third process: initialize, session/new with an MCP server";
  const p3 = start(script3, "allow-once");
  const init3 = await p3.cx.request("initialize", { protocolVersion: 1, clientCapabilities: { terminal: true } });
  if (init3.agentCapabilities?.mcpCapabilities?.http !== true) fail(`mcpCapabilities: ${JSON.stringify(init3.agentCapabilities)}`);
  const s3 = await p3.cx.request("session/new", {
    cwd: project,
    mcpServers: [{ name: "ed", command: mcpServer, args: [], env: [{ name: "PISCES_TEST_MCP_SERVER", value: "1" }] }],
  });
  step = "the prompt using the MCP server and a terminal";
  const third = await p3.cx.request("session/prompt", { sessionId: s3.sessionId, prompt: [{ type: "text", text: "use them" }] });
  if (third.stopReason !== "end_turn") fail(`third prompt: ${JSON.stringify(third)}`);
  const updatesOf = (id) => p3.delivered.filter((u) => u.update.toolCallId === id).map((u) => u.update);
  const mcpText = updatesOf("m1").flatMap((u) => u.content ?? []).map((c) => c.content?.text ?? "").join("");
  if (!mcpText.includes("Echo: from the editor")) fail(`the MCP tool's content: ${JSON.stringify(updatesOf("m1"))}`);
  const termUpdates = updatesOf("t1");
  const last3 = termUpdates[termUpdates.length - 1];
  if (last3?.status !== "completed" || last3.content?.[0]?.type !== "terminal" || last3.content[0].terminalId !== "term-1") {
    fail(`the terminal call's updates: ${JSON.stringify(termUpdates)}`);
  }
  if (p3.termCalls.join(",") !== "create term-1,output term-1,release term-1") fail(`terminal calls: ${p3.termCalls}`);
  compare(p3, "third process");
  report.thirdUpdates = p3.wire.length;
  step = "the third process exiting";
  p3.child.stdin.end();
  await Promise.race([p3.exited, deadline(60000, "the third process to exit")]);
} catch (e) {
  fail(String(e?.stack ?? e));
}
clearTimeout(watchdog);
report.failures = failures;
console.log(JSON.stringify(report));
process.exit(failures.length ? 1 : 0);
