// The connection to pisces --mode web: the RPC protocol of docs/rpc.md, one
// JSON object per WebSocket text frame. It reconnects by itself after a
// dropped connection (with a growing delay) and tells its owner about every
// state change, response and event.

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;

export class RPC {
  constructor({ onEvent, onStatus }) {
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.ws = null;
    this.pending = new Map();
    this.nextId = 1;
    this.retryMs = RETRY_MIN_MS;
    this.timer = null;
    this.session = null; // id or path to reattach to after a reconnect
  }

  url() {
    const loc = window.location;
    const proto = loc.protocol === "https:" ? "wss:" : "ws:";
    const q = this.session ? "?session=" + encodeURIComponent(this.session) : "";
    return `${proto}//${loc.host}/ws${q}`;
  }

  connect() {
    clearTimeout(this.timer);
    this.timer = null;
    this.onStatus({ state: "connecting" });
    let opened = false;
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      opened = true;
      this.retryMs = RETRY_MIN_MS;
      this.onStatus({ state: "open" });
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data !== "string") return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === "response" && msg.id && this.pending.has(msg.id)) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.success) p.resolve(msg.data);
        else p.reject(new Error(msg.error || "request failed"));
        return;
      }
      this.onEvent(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const p of this.pending.values()) p.reject(new Error("connection closed"));
      this.pending.clear();
      this.diagnose(opened, ev).then((status) => {
        this.onStatus(status);
        this.timer = setTimeout(() => this.connect(), status.retryMs);
      });
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    };
  }

  // diagnose finds out why a connection ended. A refused handshake shows
  // the page no status, so it asks the server: GET /ws answers 401 without
  // a valid token and 426 with one; a session that no longer exists is
  // dropped so that the next attempt attaches to the server's default.
  async diagnose(opened, ev) {
    const retryMs = this.retryMs;
    const base = { state: "closed", retryMs, code: ev.code, reason: ev.reason || "" };
    if (opened) return base;
    try {
      const res = await fetch("/ws", { cache: "no-store", credentials: "same-origin" });
      if (res.status === 401) return { ...base, unauthorized: true, retryMs: RETRY_MAX_MS };
      if (res.status === 426 && this.session) {
        // Authorized, yet the handshake failed: the session may be gone.
        this.session = null;
        return { ...base, retryMs: RETRY_MIN_MS };
      }
    } catch {
      // The server is down: keep trying.
    }
    return base;
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  // request sends a command and resolves with its response's data; it
  // rejects with the server's error.
  request(type, fields = {}) {
    if (!this.connected) return Promise.reject(new Error("not connected"));
    const id = "ui-" + this.nextId++;
    const msg = { ...fields, type, id };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify(msg));
    });
  }

  // send writes a message that gets no response (extension_ui_response).
  send(msg) {
    if (this.connected) this.ws.send(JSON.stringify(msg));
  }
}
