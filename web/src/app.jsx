// The page: the session list, the header (model, thinking level, context
// meter, actions), the conversation, the prompt box, the tree and stats
// panels, extension dialogs and notifications.
import { useEffect, useRef, useState } from "preact/hooks";
import { signal } from "@preact/signals";
import * as S from "./store.js";
import { Conversation } from "./messages.jsx";
import { LoginModal, openLogin } from "./login.jsx";

// Icons: stroked 24×24 paths (no font or emoji needed).
const ICONS = {
  pen: "M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4",
  trash: "M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13",
  tag: "M3 12V3h9l9 9-9 9-9-9zM7.5 7.5h.01",
  fork: "M6 3v6a3 3 0 0 0 3 3h6a3 3 0 0 1 3 3v6M6 3v18",
  clip: "M21 11l-8.5 8.5a5 5 0 0 1-7-7L14 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L15 7",
  menu: "M4 6h16M4 12h16M4 18h16",
  close: "M6 6l12 12M18 6L6 18",
};

function Icon({ name }) {
  return (
    <svg class="svg-icon" viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
      <path d={ICONS[name]} />
    </svg>
  );
}

// A page-local modal (rename, delete, directory picker, navigate).
const modal = signal(null);

function relTime(iso) {
  const t = Date.parse(iso);
  if (!t) return "";
  const s = (Date.now() - t) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 30) return `${Math.floor(s / 86400)} d ago`;
  return new Date(t).toLocaleDateString();
}

function shortPath(p) {
  if (!p) return "";
  const parts = p.split("/").filter(Boolean);
  return parts.length > 2 ? "…/" + parts.slice(-2).join("/") : p;
}

function Sidebar() {
  const list = S.sessionList.value;
  const cur = S.session.value;
  const [q, setQ] = useState(list.query);
  const timer = useRef(null);
  const onSearch = (e) => {
    const v = e.currentTarget.value;
    setQ(v);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => S.loadSessions(v), 200);
  };
  return (
    <aside class={"sidebar" + (S.sidebarOpen.value ? " open" : "")} data-testid="sidebar">
      <div class="sidebar-head">
        <strong class="brand">Pisces</strong>
        <button class="primary small" onClick={() => (modal.value = { kind: "newSession" })} data-testid="new-session">
          + New
        </button>
      </div>
      <input class="search" type="search" placeholder="Search sessions" value={q} onInput={onSearch} aria-label="Search sessions" />
      <ul class="session-list" data-testid="session-list">
        {list.items.map((it) => {
          const active = it.id === cur.id;
          const title = it.name || it.firstMessage || "(empty session)";
          return (
            <li key={it.path} class={"session-item" + (active ? " active" : "")} data-session-id={it.id}>
              <button class="session-open" onClick={() => !active && S.switchTo(it.path)} title={it.path}>
                <span class="session-title">{title}</span>
                <span class="session-meta">
                  {shortPath(it.cwd)} · {it.messageCount} msg · {relTime(it.modified)}
                </span>
              </button>
              <span class="session-actions">
                <button class="icon" title="Rename" aria-label="Rename" onClick={() => (modal.value = { kind: "rename", path: it.path, name: it.name || "" })}>
                  <Icon name="pen" />
                </button>
                {!active && (
                  <button class="icon" title="Delete (to the trash)" aria-label="Delete" onClick={() => (modal.value = { kind: "delete", path: it.path, title })}>
                    <Icon name="trash" />
                  </button>
                )}
              </span>
            </li>
          );
        })}
        {!list.items.length && !list.loading && <li class="muted pad">No sessions{list.query ? " match" : " yet"}.</li>}
      </ul>
      {list.items.length < list.total && (
        <button class="more" onClick={() => S.loadSessions(list.query, true)} disabled={list.loading}>
          Load more ({list.total - list.items.length})
        </button>
      )}
    </aside>
  );
}

function UsageMeter() {
  const u = S.usage.value;
  const m = S.model.value;
  if (!u || u.percent == null) return <span class="meter muted" title="Context usage is known after the next answer">ctx –</span>;
  const pct = Math.min(100, Math.max(0, u.percent));
  const cls = pct > 85 ? "hot" : pct > 60 ? "warm" : "";
  return (
    <span class={"meter " + cls} title={`${u.tokens?.toLocaleString()} of ${(u.contextWindow || m?.contextWindow || 0).toLocaleString()} tokens`} data-testid="context-meter">
      <span class="meter-bar">
        <span class="meter-fill" style={{ width: pct + "%" }} />
      </span>
      {pct.toFixed(0)}%
    </span>
  );
}

function ModelPicker() {
  const cur = S.model.value;
  const list = S.models.value;
  const key = cur ? `${cur.provider}/${cur.id}` : "";
  const onChange = async (e) => {
    const [provider, ...rest] = e.currentTarget.value.split("/");
    await S.call("set_model", { provider, modelId: rest.join("/") }, "Model").catch(() => {});
    S.refreshState();
    S.refreshUsage();
    S.rpc.request("get_available_thinking_levels").then((d) => (S.thinkingLevels.value = d.levels || []), () => {});
  };
  return (
    <select class="picker" value={key} onChange={onChange} title="Model" aria-label="Model">
      {!cur && <option value="">no model</option>}
      {cur && !list.some((m) => `${m.provider}/${m.id}` === key) && <option value={key}>{key}</option>}
      {list.map((m) => (
        <option key={`${m.provider}/${m.id}`} value={`${m.provider}/${m.id}`}>
          {m.provider}/{m.name || m.id}
        </option>
      ))}
    </select>
  );
}

function ThinkingPicker() {
  const levels = S.thinkingLevels.value;
  const cur = S.agentState.value?.thinkingLevel || "off";
  if (!levels.length) return null;
  return (
    <select
      class="picker"
      value={cur}
      title="Thinking level"
      aria-label="Thinking level"
      onChange={(e) => S.call("set_thinking_level", { level: e.currentTarget.value }, "Thinking level").then(S.refreshState, () => {})}
    >
      {levels.map((l) => (
        <option key={l} value={l}>
          thinking: {l}
        </option>
      ))}
    </select>
  );
}

function Header() {
  const s = S.session.value;
  const item = S.sessionList.value.items.find((i) => i.id === s.id);
  const cwd = item?.cwd || "";
  const title = s.name || item?.firstMessage || "New session";
  const togglePanel = (p) => {
    S.panel.value = S.panel.value === p ? null : p;
    if (S.panel.value === "tree") S.loadTree();
    if (S.panel.value === "stats") S.loadStats();
  };
  const compact = async () => {
    const d = await S.call("compact", {}, "Compact").catch(() => null);
    if (d) S.toast(`Compacted: ${d.tokensBefore?.toLocaleString()} tokens before`, "info");
  };
  // Export downloads the page to this browser: the server sends it in the
  // response (inline) and writes nothing on its side.
  const exportHTML = async () => {
    const d = await S.call("export_html", { inline: true }, "Export").catch(() => null);
    if (!d) return;
    const url = URL.createObjectURL(new Blob([d.html], { type: "text/html" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = d.fileName || "session.html";
    document.body.appendChild(a);
    a.click();
    a.remove();
    // The download reads the blob after the click returns.
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    S.toast(`Downloaded ${a.download}`, "info");
  };
  return (
    <header class="header">
      <button class="icon" title="Sessions" aria-label="Toggle the session list" onClick={() => (S.sidebarOpen.value = !S.sidebarOpen.value)}>
        <Icon name="menu" />
      </button>
      <div class="title" title={s.file}>
        <span class="session-name" data-testid="session-name">
          {title}
          {S.readOnly.value && (
            <span class="badge warn-badge" title={S.readOnly.value}>
              read-only
            </span>
          )}
        </span>
        {cwd && <span class="muted small cwd">{cwd}</span>}
      </div>
      <div class="header-tools">
        <ModelPicker />
        <ThinkingPicker />
        <UsageMeter />
        <button class={"small" + (S.panel.value === "tree" ? " active" : "")} onClick={() => togglePanel("tree")} data-testid="open-tree">
          Tree
        </button>
        <button class={"small" + (S.panel.value === "stats" ? " active" : "")} onClick={() => togglePanel("stats")}>
          Stats
        </button>
        <button class="small" onClick={compact} disabled={S.compacting.value} title="Summarise the conversation so far">
          Compact
        </button>
        <button class="small" onClick={exportHTML} title="Download the conversation as one HTML file" data-testid="export">
          Export
        </button>
        <button class="small" onClick={openLogin} title="Subscription logins (Claude, ChatGPT, GitHub Copilot)" data-testid="open-login">
          Log in
        </button>
      </div>
    </header>
  );
}

// flattenTree lays the tree out as rows, iteratively (a long session is a
// deep chain): indentation grows only where a node has several children.
function flattenTree(nodes) {
  const rows = [];
  const stack = [];
  for (let i = nodes.length - 1; i >= 0; i--) stack.push({ node: nodes[i], depth: 0, branch: nodes.length > 1 });
  while (stack.length) {
    const { node, depth, branch } = stack.pop();
    rows.push({ entry: node.entry, depth, branch });
    const kids = node.children || [];
    const d = kids.length > 1 ? depth + 1 : depth;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i], depth: d, branch: kids.length > 1 });
  }
  return rows;
}

function entryText(e) {
  if (e.role === "user") return e.preview || "(empty)";
  if (e.role === "assistant") return e.preview || "(assistant)";
  if (e.type === "tool_result") return e.formattedToolCall || e.preview || `[${e.toolName}]`;
  if (e.type === "model_change") return `model ${e.provider}/${e.modelId}`;
  if (e.type === "thinking_level_change") return `thinking ${e.thinkingLevel}`;
  if (e.rawRole === "system") return "system prompt";
  if (e.type === "compaction") return "compaction summary";
  if (e.type === "branch_summary") return "branch summary";
  return e.preview || `[${e.type}]`;
}

function TreePanel() {
  const t = S.tree.value;
  if (!t) return <div class="panel muted pad">Loading the tree…</div>;
  const rows = flattenTree(t.nodes || []);
  const byId = new Map(rows.map((r) => [r.entry.id, r.entry]));
  const onPath = new Set();
  for (let id = t.leafId; id && byId.has(id); id = byId.get(id).parentId) onPath.add(id);
  return (
    <div class="panel tree-panel" data-testid="tree-panel">
      <div class="panel-head">
        <strong>Session tree</strong>
        <span class="grow" />
        <button class="small" onClick={() => S.call("clone", {}, "Clone").catch(() => {})} title="Copy this branch into a new session">
          Clone
        </button>
        <button class="icon" onClick={() => (S.panel.value = null)} aria-label="Close">
          <Icon name="close" />
        </button>
      </div>
      <ul class="tree">
        {rows.map(({ entry: e, depth }) => {
          const cls = ["tree-row", e.role || e.type, onPath.has(e.id) ? "on-path" : "", e.id === t.leafId ? "leaf" : ""].join(" ");
          return (
            <li key={e.id} class={cls} style={{ paddingLeft: 8 + depth * 14 + "px" }} data-entry-id={e.id}>
              <button class="tree-open" title="Go to this point" onClick={() => (modal.value = { kind: "navigate", entry: e })}>
                {e.role === "user" && <span class="badge">you</span>}
                <span class="tree-text">{entryText(e)}</span>
                {e.label && <span class="label-chip">{e.label}</span>}
              </button>
              <span class="tree-actions">
                <button class="icon" title="Label" aria-label="Label" onClick={() => (modal.value = { kind: "label", entry: e })}>
                  <Icon name="tag" />
                </button>
                {e.role === "user" && (
                  <button class="icon" title="Fork a new session from here" aria-label="Fork" onClick={() => S.call("fork", { entryId: e.id }, "Fork").catch(() => {})}>
                    <Icon name="fork" />
                  </button>
                )}
              </span>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function money(n) {
  return n == null ? "–" : "$" + Number(n).toFixed(n < 1 ? 4 : 2);
}

function StatsPanel() {
  const s = S.stats.value;
  if (!s) return <div class="panel muted pad">Loading…</div>;
  const t = s.tokens || {};
  return (
    <div class="panel stats-panel">
      <div class="panel-head">
        <strong>Session stats</strong>
        <span class="grow" />
        <button class="icon" onClick={() => (S.panel.value = null)} aria-label="Close">
          <Icon name="close" />
        </button>
      </div>
      <table class="stats">
        <tbody>
          <tr><th>Messages</th><td>{s.userMessages} from you, {s.assistantMessages} answers, {s.totalMessages} in all</td></tr>
          <tr><th>Tool calls</th><td>{s.toolCalls} ({s.toolResults} results)</td></tr>
          <tr><th>Input tokens</th><td>{t.input?.toLocaleString()}</td></tr>
          <tr><th>Output tokens</th><td>{t.output?.toLocaleString()}</td></tr>
          <tr><th>Cache read / write</th><td>{t.cacheRead?.toLocaleString()} / {t.cacheWrite?.toLocaleString()}</td></tr>
          <tr><th>Total tokens</th><td>{t.total?.toLocaleString()}</td></tr>
          <tr><th>Cost</th><td>{money(s.cost)}</td></tr>
          {s.subagents && <tr><th>Subagents</th><td>{s.subagents.count} · {s.subagents.tokens?.toLocaleString()} tokens · {money(s.subagents.cost)}</td></tr>}
          {s.contextUsage && s.contextUsage.percent != null && <tr><th>Context</th><td>{s.contextUsage.tokens?.toLocaleString()} of {s.contextUsage.contextWindow?.toLocaleString()} ({s.contextUsage.percent.toFixed(1)}%)</td></tr>}
          <tr><th>File</th><td class="break">{s.sessionFile || "(not saved)"}</td></tr>
        </tbody>
      </table>
    </div>
  );
}

function readImage(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => {
      const url = String(r.result);
      const comma = url.indexOf(",");
      resolve({ type: "image", data: url.slice(comma + 1), mimeType: file.type || "image/png", preview: url });
    };
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

function Completion({ items, index, onPick }) {
  if (!items.length) return null;
  return (
    <ul class="completion" role="listbox" data-testid="completion">
      {items.map((c, i) => (
        <li key={c.name + c.source} class={i === index ? "selected" : ""} role="option" onMouseDown={(e) => (e.preventDefault(), onPick(c))}>
          <span class="cmd-name">/{c.name}</span>
          <span class="cmd-source">{c.source}</span>
          {c.description && <span class="cmd-desc">{c.description}</span>}
        </li>
      ))}
    </ul>
  );
}

function Composer() {
  const [text, setText] = useState("");
  const [images, setImages] = useState([]);
  const [sel, setSel] = useState(0);
  const [drag, setDrag] = useState(false);
  const ta = useRef(null);
  const isRunning = S.running.value;
  const q = S.queue.value;
  const ed = S.editorText.value;
  useEffect(() => {
    if (ed.seq) {
      setText(ed.text);
      ta.current?.focus();
    }
  }, [ed.seq]);
  useEffect(() => {
    const el = ta.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = Math.min(el.scrollHeight, 320) + "px";
  }, [text]);

  const slash = /^\/(\S*)$/.exec(text);
  const matches = slash
    ? S.commands.value.filter((c) => c.name.toLowerCase().startsWith(slash[1].toLowerCase())).slice(0, 12)
    : [];

  const pick = (c) => {
    setText("/" + c.name + " ");
    setSel(0);
    ta.current?.focus();
  };

  const submit = async (behavior) => {
    const msg = text.trim();
    if (!msg && !images.length) return;
    if (msg.startsWith("!") && !images.length) {
      const exclude = msg.startsWith("!!");
      const command = msg.slice(exclude ? 2 : 1).trim();
      if (!command) return;
      setText("");
      await S.runBash(command, exclude);
      return;
    }
    const imgs = images.map(({ type, data, mimeType }) => ({ type, data, mimeType }));
    setText("");
    setImages([]);
    try {
      await S.sendPrompt(msg, imgs, behavior);
    } catch {
      setText(msg);
      setImages(images);
    }
  };

  const onKeyDown = (e) => {
    if (matches.length) {
      if (e.key === "ArrowDown") return e.preventDefault(), setSel((sel + 1) % matches.length);
      if (e.key === "ArrowUp") return e.preventDefault(), setSel((sel - 1 + matches.length) % matches.length);
      if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && slash[1] !== matches[Math.min(sel, matches.length - 1)].name)) {
        e.preventDefault();
        return pick(matches[Math.min(sel, matches.length - 1)]);
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit(e.altKey ? "followUp" : "steer");
    } else if (e.key === "Escape" && isRunning) {
      e.preventDefault();
      S.call("abort", {}, "Abort").catch(() => {});
    }
  };

  const addFiles = async (files) => {
    const list = [...files].filter((f) => f.type.startsWith("image/"));
    if (!list.length) return;
    const read = await Promise.all(list.map(readImage));
    setImages((cur) => [...cur, ...read]);
  };

  const widgets = Object.entries(S.widgets.value);
  const statuses = Object.entries(S.statuses.value);
  return (
    <div
      class={"composer" + (drag ? " drag" : "")}
      onDragOver={(e) => (e.preventDefault(), setDrag(true))}
      onDragLeave={() => setDrag(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDrag(false);
        addFiles(e.dataTransfer.files);
      }}
    >
      {widgets
        .filter(([, w]) => w.placement !== "belowEditor")
        .map(([k, w]) => (
          <pre key={k} class="widget">{w.lines.join("\n")}</pre>
        ))}
      {(q.steering.length > 0 || q.followUp.length > 0) && (
        <div class="queue" data-testid="queue">
          <div class="queue-head">
            <strong>Queued</strong>
            <button class="small" onClick={() => S.call("clear_queue", {}, "Clear queue").catch(() => {})}>
              Clear
            </button>
          </div>
          {q.steering.map((m, i) => (
            <div key={"s" + i} class="queued">
              <span class="badge">steer</span> {m}
            </div>
          ))}
          {q.followUp.map((m, i) => (
            <div key={"f" + i} class="queued">
              <span class="badge">follow-up</span> {m}
            </div>
          ))}
        </div>
      )}
      {images.length > 0 && (
        <div class="attachments">
          {images.map((im, i) => (
            <span key={i} class="attachment">
              <img src={im.preview} alt="attached image" />
              <button class="icon" aria-label="Remove image" onClick={() => setImages(images.filter((_, j) => j !== i))}>
                <Icon name="close" />
              </button>
            </span>
          ))}
        </div>
      )}
      <div class="composer-row">
        <Completion items={matches} index={Math.min(sel, Math.max(0, matches.length - 1))} onPick={pick} />
        <textarea
          ref={ta}
          rows={1}
          value={text}
          placeholder={isRunning ? "Steer the agent (Enter), or queue a follow-up (Alt+Enter)…" : "Message Pisces… (Enter to send, Shift+Enter for a new line)"}
          onInput={(e) => (setText(e.currentTarget.value), setSel(0))}
          onKeyDown={onKeyDown}
          onPaste={(e) => {
            const files = [...(e.clipboardData?.files || [])];
            if (files.some((f) => f.type.startsWith("image/"))) {
              e.preventDefault();
              addFiles(files);
            }
          }}
          aria-label="Message"
          data-testid="prompt"
        />
        <label class="icon attach" title="Attach images" aria-label="Attach images">
          <Icon name="clip" />
          <input type="file" accept="image/*" multiple hidden onChange={(e) => (addFiles(e.currentTarget.files), (e.currentTarget.value = ""))} />
        </label>
        {isRunning ? (
          <>
            <button class="small" onClick={() => submit("steer")} title="Deliver after the running tool call (Enter)">
              Steer
            </button>
            <button class="small" onClick={() => submit("followUp")} title="Deliver when the agent is done (Alt+Enter)">
              Follow-up
            </button>
            <button class="danger" onClick={() => S.call("abort", {}, "Abort").catch(() => {})} title="Stop (Esc)" data-testid="abort">
              Stop
            </button>
          </>
        ) : (
          <button class="primary" onClick={() => submit()} data-testid="send">
            Send
          </button>
        )}
      </div>
      <div class="status-line">
        {isRunning && <span class="working">Working…</span>}
        {statuses.map(([k, v]) => (
          <span key={k} class="status-item">{v}</span>
        ))}
        {widgets
          .filter(([, w]) => w.placement === "belowEditor")
          .map(([k, w]) => (
            <pre key={k} class="widget">{w.lines.join("\n")}</pre>
          ))}
      </div>
    </div>
  );
}

function Dialog() {
  const d = S.dialogs.value[0];
  const [value, setValue] = useState("");
  const [choice, setChoice] = useState(0);
  const first = useRef(null);
  useEffect(() => {
    if (!d) return;
    setValue(d.method === "editor" ? d.prefill || "" : "");
    setChoice(0);
    setTimeout(() => first.current?.focus(), 0);
  }, [d?.id]);
  if (!d) return null;
  const cancel = () => S.answerDialog(d.id, { cancelled: true });
  const onKey = (e) => {
    if (e.key === "Escape") (e.preventDefault(), cancel());
  };
  let body;
  switch (d.method) {
    case "confirm":
      body = (
        <>
          {d.message && <p class="dialog-message">{d.message}</p>}
          <div class="dialog-buttons">
            <button onClick={() => S.answerDialog(d.id, { confirmed: false })} data-testid="dialog-no">
              No
            </button>
            <button class="primary" ref={first} onClick={() => S.answerDialog(d.id, { confirmed: true })} data-testid="dialog-yes">
              Yes
            </button>
          </div>
        </>
      );
      break;
    case "select":
      body = (
        <>
          <ul class="options" role="listbox">
            {(d.options || []).map((o, i) => (
              <li key={i}>
                <button ref={i === 0 ? first : null} class={i === choice ? "selected" : ""} onClick={() => S.answerDialog(d.id, { value: o })} onFocus={() => setChoice(i)}>
                  {o}
                </button>
              </li>
            ))}
          </ul>
          <div class="dialog-buttons">
            <button onClick={cancel}>Cancel</button>
          </div>
        </>
      );
      break;
    case "input":
    case "editor":
      body = (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            S.answerDialog(d.id, { value });
          }}
        >
          {d.method === "input" ? (
            <input ref={first} class="wide" value={value} placeholder={d.placeholder || ""} onInput={(e) => setValue(e.currentTarget.value)} />
          ) : (
            <textarea ref={first} class="wide editor" rows={12} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          )}
          <div class="dialog-buttons">
            <button type="button" onClick={cancel}>
              Cancel
            </button>
            <button type="submit" class="primary">
              OK
            </button>
          </div>
        </form>
      );
      break;
    default:
      return null;
  }
  return (
    <div class="overlay" onKeyDown={onKey}>
      <div class="dialog" role="dialog" aria-modal="true" data-testid="ext-dialog" data-method={d.method}>
        <h3>{d.title}</h3>
        {body}
        {S.dialogs.value.length > 1 && <div class="muted small">{S.dialogs.value.length - 1} more waiting</div>}
      </div>
    </div>
  );
}

function DirPicker({ onDone }) {
  const [dir, setDir] = useState(null);
  const [path, setPath] = useState("");
  const [error, setError] = useState("");
  const go = async (p) => {
    try {
      const d = await S.rpc.request("list_directory", { path: p });
      setDir(d);
      setPath(d.absolutePath);
      setError("");
    } catch (err) {
      setError(err.message);
    }
  };
  useEffect(() => {
    const cwd = S.sessionList.value.items.find((i) => i.id === S.session.value.id)?.cwd || "";
    go(cwd);
  }, []);
  const parent = dir && dir.absolutePath !== "/" ? dir.absolutePath.replace(/\/[^/]+\/?$/, "") || "/" : null;
  return (
    <div class="dialog wide-dialog" role="dialog" aria-modal="true">
      <h3>New session in…</h3>
      <form onSubmit={(e) => (e.preventDefault(), go(path))}>
        <input class="wide" value={path} onInput={(e) => setPath(e.currentTarget.value)} aria-label="Directory" />
      </form>
      {error && <div class="error-note">{error}</div>}
      <ul class="dir-list">
        {parent && (
          <li>
            <button onClick={() => go(parent)}>..</button>
          </li>
        )}
        {dir?.entries.map((en) => (
          <li key={en.name}>
            <button onClick={() => go(dir.absolutePath.replace(/\/$/, "") + "/" + en.name)}>{en.name}/</button>
          </li>
        ))}
      </ul>
      <div class="dialog-buttons">
        <button onClick={() => onDone(null)}>Cancel</button>
        <button class="primary" disabled={!dir} onClick={() => onDone(dir.absolutePath)} data-testid="start-session">
          Start here
        </button>
      </div>
    </div>
  );
}

function TextModal({ title, initial, placeholder, ok, onDone, children }) {
  const [v, setV] = useState(initial || "");
  const ref = useRef(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div class="dialog" role="dialog" aria-modal="true">
      <h3>{title}</h3>
      {children}
      <form onSubmit={(e) => (e.preventDefault(), onDone(v))}>
        <input ref={ref} class="wide" value={v} placeholder={placeholder} onInput={(e) => setV(e.currentTarget.value)} />
        <div class="dialog-buttons">
          <button type="button" onClick={() => onDone(null)}>
            Cancel
          </button>
          <button type="submit" class="primary">
            {ok}
          </button>
        </div>
      </form>
    </div>
  );
}

function NavigateModal({ entry, onDone }) {
  const [summarize, setSummarize] = useState(false);
  const [instructions, setInstructions] = useState("");
  return (
    <div class="dialog" role="dialog" aria-modal="true" data-testid="navigate-dialog">
      <h3>Go to this point?</h3>
      <p class="dialog-message">{entryText(entry)}</p>
      <p class="muted small">The conversation continues from here; the current branch stays in the tree.</p>
      <label class="check">
        <input type="checkbox" checked={summarize} onChange={(e) => setSummarize(e.currentTarget.checked)} /> Summarise the branch you leave
      </label>
      {summarize && <input class="wide" placeholder="Instructions for the summary (optional)" value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />}
      <div class="dialog-buttons">
        <button onClick={() => onDone(null)}>Cancel</button>
        <button class="primary" onClick={() => onDone({ summarize, customInstructions: instructions || undefined })} data-testid="navigate-go">
          Go
        </button>
      </div>
    </div>
  );
}

function LocalModal() {
  const m = modal.value;
  if (!m) return null;
  const close = () => (modal.value = null);
  let inner;
  switch (m.kind) {
    case "newSession":
      inner = (
        <DirPicker
          onDone={(dir) => {
            close();
            if (dir) S.newSession(dir);
          }}
        />
      );
      break;
    case "rename":
      inner = (
        <TextModal
          title="Rename session"
          initial={m.name}
          placeholder="Session name"
          ok="Rename"
          onDone={(v) => {
            close();
            if (v && v.trim()) S.renameSession(m.path, v);
          }}
        />
      );
      break;
    case "delete":
      inner = (
        <div class="dialog" role="dialog" aria-modal="true">
          <h3>Delete this session?</h3>
          <p class="dialog-message">{m.title}</p>
          <p class="muted small">The file is moved to the trash folder of the agent directory.</p>
          <div class="dialog-buttons">
            <button onClick={close}>Cancel</button>
            <button class="danger" onClick={() => (close(), S.deleteSession(m.path))}>
              Delete
            </button>
          </div>
        </div>
      );
      break;
    case "label":
      inner = (
        <TextModal
          title="Label this entry"
          initial={m.entry.label || ""}
          placeholder="Label (empty clears it)"
          ok="Save"
          onDone={async (v) => {
            close();
            if (v === null) return;
            await S.call("set_label", { entryId: m.entry.id, label: v }, "Label").catch(() => {});
            S.loadTree();
          }}
        />
      );
      break;
    case "navigate":
      inner = (
        <NavigateModal
          entry={m.entry}
          onDone={async (opts) => {
            close();
            if (!opts) return;
            const d = await S.call("navigate_tree", { targetId: m.entry.id, summarize: opts.summarize, customInstructions: opts.customInstructions }, "Navigate").catch(() => null);
            if (d && d.editorText) S.editorText.value = { text: d.editorText, seq: S.editorText.value.seq + 1 };
            S.loadTree();
          }}
        />
      );
      break;
    default:
      return null;
  }
  return (
    <div class="overlay" onKeyDown={(e) => e.key === "Escape" && close()}>
      {inner}
    </div>
  );
}

function Toasts() {
  return (
    <div class="toasts" aria-live="polite">
      {S.toasts.value.map((t) => (
        <div key={t.id} class={"toast " + t.kind} onClick={() => S.dismissToast(t.id)} data-testid="toast">
          {t.text}
        </div>
      ))}
    </div>
  );
}

function ConnectionBanner() {
  const c = S.conn.value;
  if (c.state === "open") return null;
  if (c.unauthorized)
    return (
      <div class="banner error" data-testid="banner">
        This browser has no access token for this server, so it cannot connect. Open the <code>UI:</code> address Pisces printed when it started (it ends in
        <code>?token=…</code>); the token is then kept in a cookie for this server.
      </div>
    );
  if (c.state === "connecting") return <div class="banner">Connecting…</div>;
  return (
    <div class="banner warn" data-testid="banner">
      Disconnected{c.reason ? ` (${c.reason})` : ""}. Reconnecting…
    </div>
  );
}

export function App() {
  return (
    <div class="app">
      <Sidebar />
      <main class="main">
        <Header />
        <ConnectionBanner />
        <div class="body">
          <div class="chat">
            <Conversation />
            <Composer />
          </div>
          {S.panel.value === "tree" && <TreePanel />}
          {S.panel.value === "stats" && <StatsPanel />}
        </div>
      </main>
      <Dialog />
      <LocalModal />
      <LoginModal />
      <Toasts />
    </div>
  );
}
