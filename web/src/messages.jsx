// The conversation: user, assistant, tool, bash and summary messages.
// Everything a model or a tool wrote is either plain text (set as text, never
// as HTML) or Markdown through renderMarkdown, which sanitises it.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { diffLines } from "diff";
import { renderMarkdown } from "./markdown.js";
import { messages, streaming, toolRuns, running, bashRun, retry, compacting } from "./store.js";

function Markdown({ text, className }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class={"md " + (className || "")} dangerouslySetInnerHTML={{ __html: html }} />;
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

function imageSrc(c) {
  if (c.data) return `data:${c.mimeType || "image/png"};base64,${c.data}`;
  if (c.url) return c.url;
  if (c.source) {
    if (c.source.type === "base64") return `data:${c.source.mediaType || "image/png"};base64,${c.source.data}`;
    if (c.source.type === "url") return c.source.url;
  }
  return null;
}

function Images({ content }) {
  if (!Array.isArray(content)) return null;
  const imgs = content.filter((c) => c.type === "image").map(imageSrc).filter(Boolean);
  if (!imgs.length) return null;
  return (
    <div class="images">
      {imgs.map((src, i) => (
        <a key={i} href={src} target="_blank" rel="noopener noreferrer">
          <img src={src} alt="image" referrerpolicy="no-referrer" />
        </a>
      ))}
    </div>
  );
}

function Collapsible({ summary, open: initial, className, children }) {
  const [open, setOpen] = useState(!!initial);
  return (
    <div class={"collapsible " + (className || "") + (open ? " open" : "")}>
      <button class="collapsible-head" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span class="chev">{open ? "▾" : "▸"}</span>
        {summary}
      </button>
      {open && <div class="collapsible-body">{children}</div>}
    </div>
  );
}

function UserMessage({ m }) {
  const text = textOf(m.content);
  return (
    <div class="msg user">
      <div class="bubble">
        <div class="plain">{text}</div>
        <Images content={m.content} />
      </div>
    </div>
  );
}

function Thinking({ text, live }) {
  const first = (text || "").trim().split("\n")[0].slice(0, 120);
  return (
    <Collapsible className="thinking" open={false} summary={<span>{live ? "Thinking…" : "Thinking"} <span class="muted">{first}</span></span>}>
      <Markdown text={text} className="thinking-body" />
    </Collapsible>
  );
}

function argSummary(name, args) {
  if (!args || typeof args !== "object") return "";
  switch (name) {
    case "bash":
      return args.command || "";
    case "read":
    case "write":
    case "edit":
    case "ls":
      return args.path || "";
    case "grep":
    case "find":
      return [args.pattern, args.path].filter(Boolean).join(" in ");
    case "task":
      return args.description || args.agent || "";
    default: {
      const s = JSON.stringify(args);
      return s.length > 100 ? s.slice(0, 100) + "…" : s;
    }
  }
}

function DiffView({ text }) {
  const lines = text.split("\n");
  return (
    <pre class="diff">
      {lines.map((l, i) => (
        <div key={i} class={l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "ctx"}>
          {l || " "}
        </div>
      ))}
    </pre>
  );
}

function PendingEdits({ edits }) {
  return (
    <pre class="diff">
      {edits.flatMap((e, k) =>
        diffLines(e.oldText || "", e.newText || "").flatMap((part, j) =>
          part.value
            .replace(/\n$/, "")
            .split("\n")
            .map((l, i) => (
              <div key={`${k}-${j}-${i}`} class={part.added ? "add" : part.removed ? "del" : "ctx"}>
                {(part.added ? "+" : part.removed ? "-" : " ") + l}
              </div>
            )),
        ),
      )}
    </pre>
  );
}

function ToolOutput({ result }) {
  if (!result) return null;
  const content = result.content;
  const text = textOf(content);
  return (
    <>
      {text && <pre class="tool-output">{text}</pre>}
      <Images content={content} />
    </>
  );
}

function ToolCall({ call, result }) {
  const run = toolRuns.value[call.id];
  const args = call.arguments && Object.keys(call.arguments).length ? call.arguments : run?.args || {};
  const final = result ? { content: result.content, details: result.details } : run?.result;
  const isError = result ? result.isError : run?.isError;
  const live = !final && run?.running;
  const partial = run?.partial;
  const state = final ? (isError ? "error" : "done") : live ? "running" : running.value ? "pending" : "incomplete";
  const diff = final?.details?.diff;
  const edits = call.name === "edit" && Array.isArray(args.edits) ? args.edits : null;
  const summary = (
    <span class="tool-head">
      <span class={"tool-state " + state} title={state} />
      <span class="tool-name">{call.name}</span>
      <span class="tool-args">{argSummary(call.name, args) || (call.partialArgs ? call.partialArgs.slice(0, 100) : "")}</span>
    </span>
  );
  return (
    <Collapsible className={"tool " + state} open={call.name === "edit" || isError} summary={summary}>
      <div class="tool-section-label">Arguments</div>
      <pre class="tool-args-full">{call.partialArgs && !Object.keys(args).length ? call.partialArgs : JSON.stringify(args, null, 2)}</pre>
      {diff ? (
        <>
          <div class="tool-section-label">Diff</div>
          <DiffView text={diff} />
        </>
      ) : edits && !final ? (
        <>
          <div class="tool-section-label">Changes</div>
          <PendingEdits edits={edits} />
        </>
      ) : null}
      {(final || partial) && <div class="tool-section-label">{final ? (isError ? "Error" : "Output") : "Output so far"}</div>}
      <ToolOutput result={final || partial} />
    </Collapsible>
  );
}

function AssistantMessage({ m, results, live }) {
  const blocks = m.content || [];
  return (
    <div class="msg assistant">
      {blocks.map((b, i) => {
        if (!b) return null;
        if (b.type === "text") return b.text ? <Markdown key={i} text={b.text} /> : null;
        if (b.type === "thinking") return b.thinking || live ? <Thinking key={i} text={b.thinking} live={live} /> : null;
        if (b.type === "toolCall") return <ToolCall key={b.id || i} call={b} result={results[b.id]} />;
        if (b.type === "image") return <Images key={i} content={[b]} />;
        return null;
      })}
      {m.stopReason === "error" && m.errorMessage && <div class="error-note">Error: {m.errorMessage}</div>}
      {m.stopReason === "aborted" && <div class="muted note">Aborted</div>}
      {live && !blocks.length && <div class="typing">…</div>}
    </div>
  );
}

function BashMessage({ m }) {
  return (
    <div class="msg bash">
      <Collapsible open summary={<span class="tool-head"><span class="tool-name">$</span><span class="tool-args">{m.command}</span></span>}>
        <pre class="tool-output">{m.output}</pre>
        {m.exitCode != null && m.exitCode !== 0 && <div class="muted">exit code {m.exitCode}</div>}
        {m.cancelled && <div class="muted">cancelled</div>}
        {m.excludeFromContext && <div class="muted">not sent to the model</div>}
      </Collapsible>
    </div>
  );
}

function SummaryMessage({ m, title }) {
  return (
    <div class="msg summary">
      <Collapsible summary={<span>{title}</span>}>
        <Markdown text={m.summary || textOf(m.content)} />
      </Collapsible>
    </div>
  );
}

function SystemMessage({ m }) {
  const sections = Array.isArray(m.sections) ? m.sections : [];
  const text = sections.map((s) => (typeof s === "string" ? s : s.text || s.content || "")).join("\n\n") || textOf(m.content);
  return (
    <div class="msg system">
      <Collapsible summary={<span class="muted">System prompt{m.toolsAdded?.length ? ` · tools: ${m.toolsAdded.map((t) => (typeof t === "string" ? t : t.name)).join(", ")}` : ""}</span>}>
        <pre class="tool-output">{text}</pre>
      </Collapsible>
    </div>
  );
}

function CustomMessage({ m }) {
  if (m.display === false) return null;
  return (
    <div class="msg custom">
      <div class="muted small">{m.customType || "extension"}</div>
      <Markdown text={textOf(m.content)} />
    </div>
  );
}

function Message({ m, results, calls }) {
  switch (m.role) {
    case "user":
      return <UserMessage m={m} />;
    case "assistant":
      return <AssistantMessage m={m} results={results} />;
    case "toolResult":
      return calls.has(m.toolCallId) ? null : (
        <div class="msg tool-orphan">
          <ToolCall call={{ id: m.toolCallId, name: m.toolName, arguments: {} }} result={m} />
        </div>
      );
    case "bashExecution":
      return <BashMessage m={m} />;
    case "branchSummary":
      return <SummaryMessage m={m} title="Summary of another branch" />;
    case "compactionSummary":
      return <SummaryMessage m={m} title="Summary of the earlier conversation (compacted)" />;
    case "system":
      return <SystemMessage m={m} />;
    case "custom":
      return <CustomMessage m={m} />;
    default:
      return null;
  }
}

// The scrolling container and whether it follows the end (the user has not
// scrolled up): shared by the list and the live message, which re-renders
// alone while an answer streams.
const scroller = { el: null, stick: true };

function followEnd() {
  const el = scroller.el;
  if (el && scroller.stick) el.scrollTop = el.scrollHeight;
}

function LiveMessage({ results }) {
  const live = streaming.value;
  useEffect(followEnd);
  return live ? <AssistantMessage m={live} results={results} live /> : null;
}

export function Conversation() {
  const list = messages.value;
  const [results, calls] = useMemo(() => {
    const r = {};
    const c = new Set();
    for (const m of list) {
      if (m.role === "toolResult") r[m.toolCallId] = m;
      if (m.role === "assistant" && Array.isArray(m.content)) for (const b of m.content) if (b && b.type === "toolCall") c.add(b.id);
    }
    return [r, c];
  }, [list]);
  const ref = useRef(null);
  useEffect(() => {
    scroller.el = ref.current;
    followEnd();
  });
  const onScroll = (e) => {
    const el = e.currentTarget;
    scroller.stick = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };
  const bash = bashRun.value;
  return (
    <div class="conversation" ref={ref} onScroll={onScroll} data-testid="conversation">
      <div class="conversation-inner">
        {!list.length && !streaming.peek() && (
          <div class="empty">
            <h2>New conversation</h2>
            <p class="muted">Type a message below. Start with <code>/</code> for commands and templates, <code>!</code> to run a shell command.</p>
          </div>
        )}
        {list.map((m, i) => (
          <Message key={i} m={m} results={results} calls={calls} />
        ))}
        <LiveMessage results={results} />
        {bash && (
          <div class="msg bash">
            <div class="tool-head">
              <span class="tool-state running" />
              <span class="tool-name">$</span>
              <span class="tool-args">{bash.command}</span>
            </div>
            <pre class="tool-output">{bash.output}</pre>
          </div>
        )}
        {retry.value && (
          <div class="muted note">
            Retrying ({retry.value.attempt}/{retry.value.maxAttempts}) after: {retry.value.errorMessage}
          </div>
        )}
        {compacting.value && <div class="muted note">Compacting the conversation…</div>}
      </div>
    </div>
  );
}
