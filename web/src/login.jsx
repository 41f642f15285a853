// Subscription logins in the page: the providers with their logged-in
// state, and a login flow run by the server (the login command) whose
// steps arrive as extension_ui_requests carrying providerId: open_url (the
// address, shown as a link: the server may have no browser), notify (a
// device code, a refused paste) and input (a pasted code or address).
import { useEffect, useRef, useState } from "preact/hooks";
import { signal } from "@preact/signals";
import * as S from "./store.js";

export const loginOpen = signal(false);
export const loginProviders = signal(null); // [{id, name, available, authenticated, expires?}]
// flow is the login running from this page: {providerId, name, notes, url,
// input: {id, title} | null, lastId (its latest request), error,
// cancelRequested}.
export const loginFlow = signal(null);

// The page's browser is on the server's machine when the page is served
// from a loopback address: the login may then use the callback to a local
// port; otherwise the copy-code or device-code method.
function browserIsLocal() {
  return ["localhost", "127.0.0.1", "[::1]", "::1"].includes(window.location.hostname);
}

export async function openLogin() {
  if (loginFlow.value && loginFlow.value.error) loginFlow.value = null;
  loginOpen.value = true;
  await loadLoginProviders();
}

export async function loadLoginProviders() {
  const d = await S.call("get_login_providers", {}, "Logins").catch(() => null);
  if (d) loginProviders.value = d.providers || [];
}

async function refreshModels() {
  const d = await S.rpc.request("get_available_models").catch(() => null);
  if (d) S.models.value = d.models || [];
}

export async function startLogin(p) {
  loginFlow.value = { providerId: p.id, name: p.name, notes: [], url: "", input: null, lastId: "", error: "" };
  try {
    await S.rpc.request("login", { providerId: p.id, noBrowser: !browserIsLocal() });
    loginFlow.value = null;
    S.toast(`Logged in to ${p.name}`, "info");
    await Promise.all([loadLoginProviders(), refreshModels()]);
  } catch (err) {
    const f = loginFlow.value;
    if (!f || f.providerId !== p.id) return;
    // A login the person cancelled needs no error shown.
    loginFlow.value = f.cancelRequested ? null : { ...f, input: null, error: err.message };
  }
}

export async function logout(p) {
  const d = await S.call("logout", { providerId: p.id }, "Log out").catch(() => null);
  if (d) S.toast(d.removed ? `Logged out of ${p.name}` : `Nothing was stored for ${p.name}`, "info");
  await Promise.all([loadLoginProviders(), refreshModels()]);
}

// cancelLogin answers the flow's latest request cancelled: the server
// ends the login and answers it. Before the first request has come, the
// first one is answered so when it comes.
export function cancelLogin() {
  const f = loginFlow.value;
  if (!f) return;
  if (f.error) {
    loginFlow.value = null;
    return;
  }
  loginFlow.value = { ...f, input: null, cancelRequested: true };
  if (f.lastId) S.rpc.send({ type: "extension_ui_response", id: f.input ? f.input.id : f.lastId, cancelled: true });
}

function answerInput(value) {
  const f = loginFlow.value;
  if (!f || !f.input) return;
  S.rpc.send({ type: "extension_ui_response", id: f.input.id, value });
  loginFlow.value = { ...f, input: null };
}

// handleLoginRequest takes the extension UI requests of the page's login;
// it reports whether it did.
export function handleLoginRequest(ev) {
  const f = loginFlow.value;
  if (!f) return false;
  if (ev.method === "cancel") {
    if (f.input && f.input.id === ev.targetId) loginFlow.value = { ...f, input: null };
    return false;
  }
  if (ev.providerId !== f.providerId) return false;
  if (f.cancelRequested) {
    S.rpc.send({ type: "extension_ui_response", id: ev.id, cancelled: true });
    return true;
  }
  const next = { ...f, lastId: ev.id };
  switch (ev.method) {
    case "open_url":
      next.url = ev.url || "";
      break;
    case "notify":
      next.notes = [...f.notes, ev.message || ""];
      break;
    case "input":
      next.input = { id: ev.id, title: ev.title || "" };
      break;
    default:
      return false;
  }
  loginFlow.value = next;
  return true;
}

function LoginFlow({ f }) {
  const [value, setValue] = useState("");
  const field = useRef(null);
  useEffect(() => {
    setValue("");
    if (f.input) setTimeout(() => field.current?.focus(), 0);
  }, [f.input?.id]);
  return (
    <div class="login-flow" data-testid="login-flow">
      <h4>{f.name}</h4>
      {f.notes.map((n, i) => (
        <p key={i} class="dialog-message" data-testid="login-note">
          {n}
        </p>
      ))}
      {f.url && (
        <p>
          Open this address in a browser to log in:{" "}
          <a href={f.url} target="_blank" rel="noopener noreferrer" class="login-url" data-testid="login-url">
            {f.url}
          </a>
        </p>
      )}
      {f.input && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            answerInput(value);
          }}
        >
          <label class="small">{f.input.title}</label>
          <input ref={field} class="wide" value={value} onInput={(e) => setValue(e.currentTarget.value)} data-testid="login-input" />
          <div class="dialog-buttons">
            <button type="submit" class="primary" data-testid="login-submit">
              Submit
            </button>
          </div>
        </form>
      )}
      {f.error ? (
        <p class="login-error" data-testid="login-error">
          {f.error}
        </p>
      ) : (
        !f.input && <p class="muted small">{f.cancelRequested ? "Cancelling…" : "Waiting for the login to be confirmed…"}</p>
      )}
      <div class="dialog-buttons">
        <button onClick={cancelLogin} disabled={f.cancelRequested} data-testid="login-cancel">
          {f.error ? "Back" : "Cancel login"}
        </button>
      </div>
    </div>
  );
}

// LoginModal lists the logins and runs one.
export function LoginModal() {
  if (!loginOpen.value) return null;
  const f = loginFlow.value;
  const ps = loginProviders.value;
  const close = () => {
    // A login still running is cancelled; its answer then clears it.
    if (f && !f.error) cancelLogin();
    else loginFlow.value = null;
    loginOpen.value = false;
  };
  return (
    <div class="overlay" onKeyDown={(e) => e.key === "Escape" && close()}>
      <div class="dialog wide-dialog" role="dialog" aria-modal="true" data-testid="login-dialog">
        <h3>Subscription logins</h3>
        {f ? (
          <LoginFlow f={f} />
        ) : (
          <>
            <p class="muted small">Logins are kept in auth.json in the agent directory on the server, shared with pi.</p>
            {!ps && <p class="muted">Loading…</p>}
            {ps && (
              <ul class="login-list">
                {ps.map((p) => (
                  <li key={p.id} data-testid="login-provider" data-provider={p.id} data-authenticated={p.authenticated ? "yes" : "no"}>
                    <span class="login-name">{p.name}</span>
                    <span class={"badge" + (p.authenticated ? "" : " muted")}>{p.authenticated ? "logged in" : "not logged in"}</span>
                    {p.authenticated && (
                      <button class="small" onClick={() => logout(p)} data-testid="logout">
                        Log out
                      </button>
                    )}
                    <button class="small primary" disabled={!p.available} onClick={() => startLogin(p)} data-testid="login">
                      {p.authenticated ? "Log in again" : "Log in"}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
        <div class="dialog-buttons">
          <button onClick={close}>Close</button>
        </div>
      </div>
    </div>
  );
}
