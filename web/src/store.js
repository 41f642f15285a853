// The page's state: what the server said about the session this tab is
// attached to, kept in signals that the components read. Events update it as
// they arrive; after a (re)connection or a session change everything is read
// again, so several tabs on one session stay in step.
import { signal, computed, batch } from "@preact/signals";
import { RPC } from "./rpc.js";
import { handleLoginRequest } from "./login.jsx";

export const conn = signal({ state: "connecting" });
export const session = signal({ id: "", file: "", name: "" });
export const agentState = signal(null);
export const messages = signal([]);
export const streaming = signal(null); // the assistant message being streamed
export const toolRuns = signal({}); // toolCallId → {args, partial, result, isError, running}
export const queue = signal({ steering: [], followUp: [] });
export const usage = signal(null);
export const running = signal(false);
export const compacting = signal(false);
export const retry = signal(null);
export const bashRun = signal(null); // {command, output, running}
export const commands = signal([]);
export const models = signal([]);
export const thinkingLevels = signal([]);
export const sessionList = signal({ items: [], total: 0, query: "", loading: false });
export const dialogs = signal([]); // extension UI dialogs, oldest first
export const toasts = signal([]);
export const statuses = signal({});
export const widgets = signal({});
export const editorText = signal({ text: "", seq: 0 });
export const tree = signal(null);
export const panel = signal(null); // "tree" | "stats" | null
export const stats = signal(null);
export const sidebarOpen = signal(window.innerWidth > 900);
export const readOnly = signal(""); // why the session is a read-only view ("" when it is not)

export const model = computed(() => agentState.value?.model || null);

const PAGE = 50;
let toastSeq = 0;

export const rpc = new RPC({ onEvent: handleEvent, onStatus: handleStatus });

function initialSession() {
  const q = new URLSearchParams(window.location.search);
  return q.get("session") || null;
}

export function start() {
  rpc.session = initialSession();
  rpc.connect();
}

function handleStatus(status) {
  conn.value = status;
  if (status.state === "open") {
    // The server sends session_changed right after ready; refresh then.
  }
}

export function toast(text, kind = "info", ms = kind === "info" ? 6000 : 12000) {
  const id = ++toastSeq;
  toasts.value = [...toasts.value, { id, text, kind }];
  if (ms > 0) setTimeout(() => dismissToast(id), ms);
}

export function dismissToast(id) {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}

// call runs a command and shows its error, if any, as a toast.
export async function call(type, fields, what) {
  try {
    return await rpc.request(type, fields);
  } catch (err) {
    toast(`${what || type}: ${err.message}`, "error");
    throw err;
  }
}

function quiet(p) {
  return p.catch(() => undefined);
}

// refresh reads everything about the attached session again.
export async function refresh() {
  await Promise.all([
    refreshState(),
    refreshMessages(),
    refreshUsage(),
    quiet(rpc.request("get_commands").then((d) => (commands.value = d.commands || []))),
    quiet(rpc.request("get_available_models").then((d) => (models.value = d.models || []))),
    quiet(rpc.request("get_available_thinking_levels").then((d) => (thinkingLevels.value = d.levels || []))),
    loadSessions(sessionList.value.query),
  ]);
  if (panel.value === "tree") await loadTree();
  if (panel.value === "stats") await loadStats();
}

export async function refreshState() {
  const st = await quiet(rpc.request("get_state"));
  if (!st) return;
  batch(() => {
    agentState.value = st;
    running.value = st.isStreaming;
    compacting.value = st.isCompacting;
    session.value = { ...session.value, id: st.sessionId, file: st.sessionFile || "", name: st.sessionName || "" };
  });
}

export async function refreshMessages() {
  const d = await quiet(rpc.request("get_messages"));
  if (!d) return;
  batch(() => {
    messages.value = d.messages || [];
    if (!running.value) streaming.value = null;
  });
}

export async function refreshUsage() {
  const d = await quiet(rpc.request("get_context_usage"));
  usage.value = d && d.usage ? d.usage : null;
}

export async function loadSessions(query, more = false) {
  const cur = sessionList.value;
  const offset = more ? cur.items.length : 0;
  sessionList.value = { ...cur, query, loading: true };
  const d = await quiet(rpc.request("list_sessions", { scope: "all", query: query || undefined, limit: PAGE, offset }));
  if (sessionList.value.query !== query) return; // a newer search is under way
  if (!d) {
    sessionList.value = { ...sessionList.value, loading: false };
    return;
  }
  const items = more ? [...cur.items, ...d.sessions] : d.sessions;
  sessionList.value = { items, total: d.total ?? items.length, query, loading: false };
}

export async function loadTree() {
  const d = await quiet(rpc.request("get_session_tree", { view: "browse" }));
  if (d) tree.value = d;
}

export async function loadStats() {
  const d = await quiet(rpc.request("get_session_stats"));
  if (d) stats.value = d;
}

function setURLSession(id) {
  const u = new URL(window.location.href);
  if (id) u.searchParams.set("session", id);
  else u.searchParams.delete("session");
  window.history.replaceState(null, "", u.toString());
}

function applyAssistantEvent(msg, ev) {
  const content = msg.content ? [...msg.content] : [];
  const i = ev.contentIndex;
  switch (ev.type) {
    case "text_start":
      content[i] = { type: "text", text: "" };
      break;
    case "thinking_start":
      content[i] = { type: "thinking", thinking: "" };
      break;
    case "toolcall_start":
      content[i] = { type: "toolCall", id: ev.id, name: ev.toolName, arguments: {}, partialArgs: "" };
      break;
    case "text_delta":
      content[i] = { ...(content[i] || { type: "text", text: "" }) };
      content[i].text = (content[i].text || "") + ev.delta;
      break;
    case "thinking_delta":
      content[i] = { ...(content[i] || { type: "thinking", thinking: "" }) };
      content[i].thinking = (content[i].thinking || "") + ev.delta;
      break;
    case "toolcall_delta":
      content[i] = { ...(content[i] || { type: "toolCall", arguments: {} }) };
      content[i].partialArgs = (content[i].partialArgs || "") + ev.delta;
      break;
    case "text_end":
      content[i] = { type: "text", text: ev.content };
      break;
    case "thinking_end":
      content[i] = { ...(content[i] || {}), type: "thinking", thinking: ev.content };
      break;
    case "toolcall_end":
      content[i] = ev.toolCall;
      break;
    default:
      return msg;
  }
  return { ...msg, content };
}

function handleEvent(ev) {
  switch (ev.type) {
    case "ready":
      return;
    case "session_changed": {
      const changed = ev.sessionId !== session.value.id;
      batch(() => {
        session.value = { id: ev.sessionId, file: ev.sessionFile || "", name: ev.sessionName || "" };
        if (changed) {
          readOnly.value = "";
          streaming.value = null;
          toolRuns.value = {};
          queue.value = { steering: [], followUp: [] };
          statuses.value = {};
          widgets.value = {};
          tree.value = null;
          bashRun.value = null;
        }
      });
      rpc.session = ev.sessionFile || ev.sessionId;
      setURLSession(ev.sessionId);
      refresh();
      return;
    }
    case "agent_start":
      running.value = true;
      return;
    case "agent_settled":
      batch(() => {
        running.value = false;
        streaming.value = null;
        retry.value = null;
      });
      refreshState();
      refreshUsage();
      refreshMessages();
      loadSessions(sessionList.value.query);
      if (panel.value === "tree") loadTree();
      if (panel.value === "stats") loadStats();
      return;
    case "message_start": {
      const m = ev.message;
      if (m.role === "assistant") streaming.value = { ...m, content: m.content ? [...m.content] : [] };
      else messages.value = [...messages.value, m];
      return;
    }
    case "message_update":
      if (streaming.value && ev.assistantMessageEvent) streaming.value = applyAssistantEvent(streaming.value, ev.assistantMessageEvent);
      return;
    case "message_end": {
      const m = ev.message;
      if (m.role === "assistant") {
        batch(() => {
          messages.value = [...messages.value, m];
          streaming.value = null;
        });
      } else {
        const list = [...messages.value];
        if (list.length && list[list.length - 1].role === m.role) list[list.length - 1] = m;
        else list.push(m);
        messages.value = list;
      }
      return;
    }
    case "tool_execution_start":
      toolRuns.value = { ...toolRuns.value, [ev.toolCallId]: { args: ev.args, running: true } };
      return;
    case "tool_execution_update":
      toolRuns.value = { ...toolRuns.value, [ev.toolCallId]: { ...toolRuns.value[ev.toolCallId], partial: ev.partialResult, running: true } };
      return;
    case "tool_execution_end":
      toolRuns.value = {
        ...toolRuns.value,
        [ev.toolCallId]: { ...toolRuns.value[ev.toolCallId], result: ev.result, isError: ev.isError, running: false },
      };
      return;
    case "queue_update":
      queue.value = { steering: ev.steering || [], followUp: ev.followUp || [] };
      return;
    case "compaction_start":
      compacting.value = true;
      return;
    case "compaction_end":
      compacting.value = false;
      if (ev.errorMessage) toast(`Compaction failed: ${ev.errorMessage}`, "error");
      refreshMessages();
      refreshUsage();
      return;
    case "entry_appended":
      if (!running.value) refreshMessages();
      else if (ev.entry && ev.entry.type === "context_edit") refreshMessages();
      if (panel.value === "tree") loadTree();
      return;
    case "session_info_changed":
      session.value = { ...session.value, name: ev.name || "" };
      loadSessions(sessionList.value.query);
      return;
    case "thinking_level_changed":
      if (agentState.value) agentState.value = { ...agentState.value, thinkingLevel: ev.level };
      return;
    case "auto_retry_start":
      retry.value = ev;
      return;
    case "auto_retry_end":
      retry.value = null;
      if (!ev.success && ev.finalError) toast(`Retry failed: ${ev.finalError}`, "error");
      return;
    case "bash_execution_update":
      if (bashRun.value) bashRun.value = { ...bashRun.value, output: bashRun.value.output + ev.delta };
      return;
    case "extension_error":
      toast(`Extension ${ev.extensionPath || ""} failed (${ev.event || ""}): ${ev.error}`, "error");
      return;
    case "extension_ui_request":
      handleUIRequest(ev);
      return;
    case "ttsr_triggered":
      toast(`Rule triggered: ${(ev.rules || []).map((r) => r.name || r.path || "rule").join(", ")}`, "info");
      return;
    default:
      return;
  }
}

function handleUIRequest(ev) {
  if (handleLoginRequest(ev)) return;
  switch (ev.method) {
    case "select":
    case "confirm":
    case "input":
    case "editor":
      dialogs.value = [...dialogs.value, ev];
      return;
    case "cancel":
      dialogs.value = dialogs.value.filter((d) => d.id !== ev.targetId);
      return;
    case "notify":
      if (typeof ev.message === "string" && ev.message.startsWith("Read-only session: ")) readOnly.value = ev.message.slice("Read-only session: ".length);
      toast(ev.message, ev.notifyType || "info");
      return;
    case "setStatus": {
      const next = { ...statuses.value };
      if (ev.statusText) next[ev.statusKey] = ev.statusText;
      else delete next[ev.statusKey];
      statuses.value = next;
      return;
    }
    case "setWidget": {
      const next = { ...widgets.value };
      if (ev.widgetLines && ev.widgetLines.length) next[ev.widgetKey] = { lines: ev.widgetLines, placement: ev.widgetPlacement || "aboveEditor" };
      else delete next[ev.widgetKey];
      widgets.value = next;
      return;
    }
    case "setTitle":
      if (ev.title) document.title = ev.title;
      return;
    case "set_editor_text":
      editorText.value = { text: ev.text || "", seq: editorText.value.seq + 1 };
      return;
    default:
      return;
  }
}

// answerDialog answers an extension dialog and closes it here.
export function answerDialog(id, answer) {
  rpc.send({ type: "extension_ui_response", id, ...answer });
  dialogs.value = dialogs.value.filter((d) => d.id !== id);
}

// Actions the components call.

export async function sendPrompt(text, images, behavior) {
  const fields = { message: text };
  if (images && images.length) fields.images = images;
  if (running.value) fields.streamingBehavior = behavior || "steer";
  return call("prompt", fields, "Send");
}

export async function runBash(command, excludeFromContext) {
  bashRun.value = { command, output: "", running: true };
  try {
    const d = await call("bash", { command, excludeFromContext }, "Shell command");
    bashRun.value = null;
    if (d && d.truncated && d.fullOutputPath) toast(`Output truncated; full output in ${d.fullOutputPath}`, "info");
    await refreshMessages();
  } catch {
    bashRun.value = null;
  }
}

export async function switchTo(path) {
  await quiet(call("switch_session", { sessionPath: path }, "Switch session"));
}

export async function newSession(cwd) {
  await quiet(call("new_session", cwd ? { cwd } : {}, "New session"));
}

export async function renameSession(path, name) {
  await quiet(call("rename_session", { sessionPath: path, name }, "Rename"));
  await loadSessions(sessionList.value.query);
  if (path === session.value.file) session.value = { ...session.value, name: name.trim() };
}

export async function deleteSession(path) {
  const d = await quiet(call("delete_session", { sessionPath: path }, "Delete"));
  if (d) toast(`Moved to the trash: ${d.trashPath}`, "info");
  await loadSessions(sessionList.value.query);
}
