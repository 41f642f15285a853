#!/usr/bin/env python3
"""protected-paths: a Pisces extension that blocks write and edit on
sensitive paths (.env files, .git/, SSH keys, ...).

It speaks the extension protocol of docs/extensions.md: one JSON object per
line on stdin and stdout. Copy it (executable) into
~/.pisces/agent/extensions/ or pass it with -e. Extra patterns can be given
in PISCES_PROTECTED_PATHS (colon-separated fnmatch patterns).
"""
import fnmatch
import json
import os
import sys

PROTECTED = [
    ".env", ".env.*", "*.pem", "*.key", "id_rsa", "id_ed25519",
]
PROTECTED_DIRS = [".git", ".ssh", ".gnupg", "node_modules"]
PROTECTED += [p for p in os.environ.get("PISCES_PROTECTED_PATHS", "").split(":") if p]

cwd = os.getcwd()


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def protected(path):
    """Returns why path is protected, or None."""
    full = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
    parts = full.split(os.sep)
    for d in PROTECTED_DIRS:
        if d in parts[:-1] or parts[-1] == d:
            return "inside " + d + "/"
    name = parts[-1]
    for pattern in PROTECTED:
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(full, pattern):
            return "matches " + pattern
    return None


def on_tool_call(params):
    if params.get("toolName") not in ("write", "edit"):
        return {}
    path = (params.get("args") or {}).get("path", "")
    why = protected(path) if isinstance(path, str) and path else None
    if why is None:
        return {}
    # A notification: no id, so no response is expected.
    send({"type": "request", "method": "ui.notify",
          "params": {"message": "Blocked %s of %s" % (params["toolName"], path), "notifyType": "warning"}})
    return {"block": True, "reason": "Path %s is protected (%s); do not modify it." % (path, why)}


def main():
    global cwd
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            print("protected-paths: bad message: %r" % line, file=sys.stderr)
            continue
        kind = msg.get("type")
        if kind == "init":
            cwd = msg.get("cwd") or cwd
            send({"type": "register", "protocolVersion": 1, "name": "protected-paths",
                  "hooks": ["tool_call"]})
        elif kind == "request":
            if msg.get("method") == "tool_call":
                send({"type": "response", "id": msg["id"], "result": on_tool_call(msg.get("params") or {})})
            else:
                send({"type": "response", "id": msg["id"], "error": "unsupported method " + str(msg.get("method"))})
        # events, cancels and responses are not used by this extension


if __name__ == "__main__":
    main()
