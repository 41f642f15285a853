// Drives pisces with oh-my-pi's own RpcClient (rpc/client TestOMPClient).
// Environment: PISCES (the binary), WORK (a scratch folder holding
// agent/ and the gate file path GATE), SCRIPT (the scripted provider's turns).
// Prints "ok" as its last line when every step passed; any failure throws.
import { RpcClient } from "@oh-my-pi/pi-coding-agent/modes/rpc/rpc-client";

const env = process.env;
const work = env.WORK!;
const steps: string[] = [];

function check(cond: unknown, what: string, got?: unknown): void {
	if (!cond) throw new Error(`${what}${got === undefined ? "" : `: got ${JSON.stringify(got)}`}`);
}

function step(name: string): void {
	steps.push(name);
	console.log(`step: ${name}`);
}

// The client's documented transport hook: pisces is a plain process.
function spawn(agentArgs: string[]) {
	const args = [
		...agentArgs,
		"--script",
		env.SCRIPT!,
		"--agent-dir",
		`${work}/agent`,
		"--tools",
		"bash",
		"--rpc-delta-interval",
		"0",
	];
	const proc = Bun.spawn([env.PISCES!, ...args], {
		cwd: work,
		stdin: "pipe",
		stdout: "pipe",
		stderr: "pipe",
	});
	let stderr = "";
	(async () => {
		for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
	})();
	return {
		stdin: {
			write(data: string | Uint8Array) {
				proc.stdin.write(data);
				proc.stdin.flush();
			},
		},
		stdout: proc.stdout,
		peekStderr: () => stderr.slice(-4000),
		kill: (signal?: NodeJS.Signals | number) => {
			proc.stdin.end();
			proc.kill(signal ?? "SIGTERM");
		},
		exited: proc.exited,
	};
}

const hostCalls: unknown[] = [];
const client = new RpcClient({
	spawn,
	provider: "scripted",
	sessionDir: `${work}/sessions`,
	customTools: [
		{
			name: "echo_host",
			label: "Echo",
			description: "Echoes its text back from the host",
			parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
			execute(params: Record<string, unknown>) {
				hostCalls.push(params);
				return `pong:${params.text}`;
			},
		},
	],
});

const sessionEvents: Array<Record<string, unknown>> = [];
client.onSessionEvent(ev => sessionEvents.push(ev as unknown as Record<string, unknown>));
const commandUpdates: unknown[] = [];
client.onAvailableCommandsUpdate(cmds => commandUpdates.push(cmds));
const results: Array<{ id?: string; status: string; error?: { message: string } }> = [];
client.onPromptResult(r => results.push(r));

function waitForEvent(type: string): Promise<Record<string, unknown>> {
	return new Promise(resolve => {
		const off = client.onEvent(ev => {
			if (ev.type === type) {
				off();
				resolve(ev as unknown as Record<string, unknown>);
			}
		});
	});
}

function toolEnd(events: Array<{ type: string }>): Record<string, unknown> | undefined {
	return events.find(e => e.type === "tool_execution_end") as Record<string, unknown> | undefined;
}

function text(events: Array<{ type: string }>): string {
	const ends = events.filter(e => e.type === "message_end") as unknown as Array<{
		message: { role: string; content: Array<{ type: string; text?: string }> };
	}>;
	const last = ends.filter(e => e.message.role === "assistant").pop();
	return last ? last.message.content.filter(c => c.type === "text").map(c => c.text).join("") : "";
}

try {
	step("start (ready, protocol v2, host tools)");
	await client.start();

	step("promptAndWait");
	let events = await client.promptAndWait("hello");
	check(text(events) === "hi there", "assistant text", text(events));
	check(
		events.some(e => e.type === "message_update" && (e as { message?: unknown }).message),
		"message_update carries the cumulative message",
	);
	check(results.at(-1)?.status === "completed", "prompt_result completed", results.at(-1));

	step("waitForSettled");
	await client.waitForSettled(30000);
	check((await client.getState()).isSettled === true, "get_state.isSettled");

	step("getState (oh-my-pi's members)");
	const st = await client.getState();
	check(st.fastModeEnabled === false && st.fastModeActive === false, "fast mode off", st);
	check(st.tokensPerSecond === null || st.tokensPerSecond > 0, "tokensPerSecond", st.tokensPerSecond);
	check(st.hasPendingAsyncWork === false, "no pending async work", st.hasPendingAsyncWork);
	check(Array.isArray(st.systemPrompt) && st.systemPrompt.length > 0 && st.systemPrompt.every(s => typeof s === "string"), "systemPrompt sections", st.systemPrompt);
	check(st.dumpTools?.some(t => t.name === "bash" && typeof t.parameters === "object"), "dumpTools lists bash", st.dumpTools?.map(t => t.name));

	step("setFastMode (the scripted model has no priority processing)");
	let fastError = "";
	try {
		await client.setFastMode(true);
	} catch (e) {
		fastError = String(e);
	}
	check(fastError.includes("Fast mode is unavailable for the current model."), "setFastMode(true) refused", fastError);
	const off = await client.setFastMode(false);
	check(off.enabled === false && off.active === false, "setFastMode(false)", off);

	step("subagents (none under way)");
	check((await client.setSubagentSubscription("progress")) === "progress", "setSubagentSubscription(progress)");
	check((await client.getSubagents()).length === 0, "getSubagents() empty");

	step("bash tool turn");
	events = await client.promptAndWait("run bash");
	const bash = toolEnd(events) as { toolName: string; result: { content: Array<{ text: string }> } } | undefined;
	check(bash?.toolName === "bash" && bash.result.content[0].text.includes("from-bash"), "bash result", bash);
	check(text(events) === "bash done", "text after bash", text(events));

	step("host tool round trip");
	events = await client.promptAndWait("use the host tool");
	const host = toolEnd(events) as { toolName: string; result: { content: Array<{ text: string }> } } | undefined;
	check(hostCalls.length === 1, "host tool called once", hostCalls);
	check(host?.toolName === "echo_host" && host.result.content[0].text === "pong:ping", "host tool result", host);

	step("steer and follow-up");
	const started = waitForEvent("tool_execution_start");
	const long = client.promptAndWait("wait for the gate");
	await started;
	await client.steer("steering message");
	await client.followUp("follow-up message");
	await Bun.write(env.GATE!, "go");
	events = await long;
	const users = (await client.getMessages())
		.filter((m: { role: string }) => m.role === "user")
		.map((m: { content: unknown }) => JSON.stringify(m.content));
	check(users.some(u => u.includes("steering message")), "steering message delivered", users);
	check(users.some(u => u.includes("follow-up message")), "follow-up delivered", users);
	await client.waitForSettled(30000);

	step("abort");
	const sleeping = waitForEvent("tool_execution_start");
	const before = results.length;
	const aborted = client.promptAndWait("sleep");
	await sleeping;
	await client.abort();
	await aborted;
	check(results[before]?.status === "aborted", "aborted prompt_result", results.slice(before));

	step("abortAndPrompt");
	const sleeping2 = waitForEvent("tool_execution_start");
	const n = results.length;
	const old = client.promptAndWait("sleep again");
	await sleeping2;
	await client.abortAndPrompt("instead");
	await old;
	await client.waitForSettled(30000);
	check(results.length === n + 2, "two prompt results", results.slice(n));
	check(results[n].status === "aborted" && results[n + 1].status === "completed", "aborted, then completed", results.slice(n));

	step("getMessages (paged under v2)");
	const messages = await client.getMessages();
	const state = await client.getState();
	check(messages.length === state.messageCount && messages.length > 10, "message count", [messages.length, state.messageCount]);

	step("model and thinking level");
	const models = await client.getAvailableModels();
	check(models.some(m => m.provider === "scripted"), "scripted model listed", models);
	await client.setModel("scripted", "scripted");
	check(sessionEvents.some(e => e.type === "model_changed"), "model_changed session event");
	await client.setThinkingLevel("high");
	check((await client.getState()).thinkingLevel === "high", "thinking level set");
	const changed = sessionEvents.filter(e => e.type === "thinking_level_changed").pop();
	check(changed?.thinkingLevel === "high", "thinking_level_changed.thinkingLevel", changed);

	step("available commands");
	const commands = await client.getAvailableCommands();
	check(Array.isArray(commands) && commands.every(c => typeof c.name === "string" && typeof c.source === "string"), "commands", commands);
	check(commandUpdates.length >= 1, "available_commands_update after the switch to v2");

	step("compact");
	const compacted = await client.compact();
	check(typeof compacted.summary === "string" && compacted.summary.length > 0, "compaction summary", compacted);
	check(
		sessionEvents.some(e => e.type === "auto_compaction_start") && sessionEvents.some(e => e.type === "auto_compaction_end"),
		"auto_compaction_* session events",
	);

	step("handoff right after compact (nothing new to hand off)");
	let handoffError = "";
	try {
		await client.handoff();
	} catch (e) {
		handoffError = String(e);
	}
	check(handoffError.includes("Nothing to hand off (already compacted)"), "handoff refused", handoffError);

	step("new and switch session");
	const firstFile = (await client.getState()).sessionFile!;
	check((await client.newSession()).cancelled === false, "new session");
	const fresh = await client.getState();
	check(fresh.sessionFile !== firstFile && fresh.messageCount === 0, "fresh session", fresh);
	check((await client.switchSession(firstFile)).cancelled === false, "switch session");
	check((await client.getState()).sessionFile === firstFile, "back on the first session");
	check(commandUpdates.length >= 3, "available_commands_update after each session change", commandUpdates.length);

	step("branch");
	const count = (await client.getState()).messageCount;
	const branchable = await client.getBranchMessages();
	check(branchable.length > 0, "branch messages", branchable);
	const branched = await client.branch(branchable[0].entryId);
	check(branched.cancelled === false && branched.text === "hello", "branch", branched);
	const after = (await client.getState()).messageCount;
	check(after < count, "the branch starts before the first prompt", [after, count]);

	step("frames over 1 MiB (rpc_chunk)");
	const big = "0123456789abcdef".repeat(100_000);
	events = await client.promptAndWait(big);
	const bigEnd = events.find(
		e => e.type === "message_end" && JSON.stringify((e as { message: { content: unknown } }).message.content).includes(big),
	);
	check(bigEnd !== undefined, "the 1.6 MB user message_end arrived whole");
	check(text(events) === "big done", "answer to the big prompt", text(events));
	const withBig = await client.getMessages();
	check(withBig.some((m: { content: unknown }) => JSON.stringify(m.content).includes(big)), "getMessages has the big message");

	step("login providers");
	const loginsBefore = await client.getLoginProviders();
	check(
		loginsBefore.map(p => p.id).join(",") === "anthropic,openai-codex,github-copilot,openai" &&
			loginsBefore.every(p => p.available && !p.authenticated),
		"get_login_providers before any login",
		loginsBefore,
	);

	step("login with a device code (GitHub Copilot)");
	const opened: Array<{ url: string; instructions?: string }> = [];
	const asked: string[] = [];
	const login = await client.login("github-copilot", {
		onOpenUrl: (url, instructions) => opened.push({ url, instructions }),
		onManualCodeInput: prompt => {
			asked.push(prompt.title);
			return ""; // github.com, not an enterprise domain
		},
	});
	check(login.providerId === "github-copilot", "login's data", login);
	check(asked.length === 1 && asked[0].includes("Enterprise"), "the enterprise question", asked);
	check(
		opened.length === 1 && opened[0].url === "https://github.com/login/device" && (opened[0].instructions ?? "").includes("WXYZ-9876"),
		"open_url with the device page and the code",
		opened,
	);

	step("login through the browser's callback (Anthropic)");
	const anthropic = await client.login("anthropic", {
		// The browser: the fake vendor approves and redirects to the
		// callback on this machine, which completes the login.
		onOpenUrl: url => {
			void fetch(url).then(res => res.text());
		},
		onManualCodeInput: () => new Promise<string>(() => {}), // nothing pasted
	});
	check(anthropic.providerId === "anthropic", "anthropic login's data", anthropic);
	const loginsAfter = await client.getLoginProviders();
	check(
		loginsAfter.filter(p => p.authenticated).map(p => p.id).join(",") === "anthropic,github-copilot",
		"get_login_providers after the logins",
		loginsAfter,
	);

	step("stop");
	await client.stop();
	console.log("ok");
} catch (err) {
	console.log(`FAILED after step "${steps.at(-1)}": ${err instanceof Error ? err.stack : String(err)}`);
	await client.stop().catch(() => {});
	process.exit(1);
}
