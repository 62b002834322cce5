#!/usr/bin/env python3
"""fencekit's oVirt / RHV peer: the engine's REST API v4 (/ovirt-engine/api, XML),
written from the oVirt REST API reference (ovirt-engine-api-model), for fence_rhevm
(upstream 4.12.1, pycurl) and fencekit.

Authentication
  Basic (admin@internal / ovirt-secret: an administrator; user@internal / user-secret:
  UserVmManager on node1 and node2 only, which needs "Filter: true": without it
  403 <fault>). "Prefer: persistent-auth" with Basic: the answer sets
  JSESSIONID=...; Path=/ovirt-engine/api; later requests may send only the cookie.
  Refused: 401 with WWW-Authenticate: Basic realm="RESTAPI" and the engine's HTML
  error page (<title>Error</title>).

Reads
  GET /ovirt-engine/api            <api> with product_info (version 4.5)
  GET /ovirt-engine/api/vms[?search=name%3DX]   <vms><vm id=...><name/><status/>...</vms>
  GET /ovirt-engine/api/vms/ID     <vm>; unknown: 404 <fault>
  GET /ovirt-engine/api/hosts/ID, /jobs/ID

Actions (POST <action/>)
  /vms/ID/stop, /start, /shutdown: 200 <action><status>complete</status><job id=.../></action>;
  the job runs --task-ms (default 150 ms) and ends finished (the VM then down, or up
  after wait_for_launch) or failed (the VM unchanged). A start of a VM that is not down:
  409 "[Cannot run VM. VM is running.]"; a stop of a down VM: 409 "[Cannot stop VM. VM
  is not running.]".

VMs (INVENTORY): node1 up, node2 up, node3 down, paused, suspended, saving
  (saving_state), restoring (restoring_state), migrating, notresp (not_responding),
  stale (unknown: on host h2, non_responsive), poweringdown (powering_down),
  launching (wait_for_launch), locked (image_locked), nostatus (no <status>).

Test control, no authentication (a loopback test peer):
  GET  /fencekit/vms | /fencekit/calls
  POST /fencekit/vm?name=N&status=S      POST /fencekit/task?action=A&fail=TEXT[&count=N]
  POST /fencekit/drop?action=A           (carried out, its answer lost)
  POST /fencekit/throttle?count=N[&retry_after=S]   POST /fencekit/hang?count=N
  POST /fencekit/expire                  (every session cookie is refused)
  POST /fencekit/expire?on=POST          (refused from the next POST that sends only the cookie)
  POST /fencekit/reset
Run: ovirt_api.py --port P --cert C --key K [--bind ADDR] [--info FILE] [--log FILE]
"""
import argparse
import base64
import json
import os
import secrets
import socket
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

import hvpeer

API = "/ovirt-engine/api"
USERS = {"admin@internal": "ovirt-secret", "user@internal": "user-secret"}
USER_VMS = {"node1", "node2"}
INVENTORY = [
    ("node1", "up", "h1"), ("node2", "up", "h1"), ("node3", "down", None),
    ("paused", "paused", "h1"), ("suspended", "suspended", None),
    ("saving", "saving_state", "h1"), ("restoring", "restoring_state", "h1"),
    ("migrating", "migrating", "h1"), ("notresp", "not_responding", "h1"),
    ("stale", "unknown", "h2"), ("poweringdown", "powering_down", "h1"),
    ("launching", "wait_for_launch", "h1"), ("locked", "image_locked", None),
    ("nostatus", None, "h1"),
]
HOSTS = {"h1": "up", "h2": "non_responsive"}
ERROR_PAGE = b"<html><head><title>Error</title></head><body>Unauthorized</body></html>"


def vm_id(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "ovirt/vm/" + name))


class World:
    def __init__(self, task_ms):
        self.lock = threading.Lock()
        self.task_ms = task_ms
        self.reset()

    def reset(self):
        with self.lock:
            self.vms = {}
            for name, status, host in INVENTORY:
                self.vms[vm_id(name)] = {"id": vm_id(name), "name": name, "status": status,
                                         "host": host}
            self.jobs = {}
            self.sessions = {}
            self.expire_on = None
            self.fail = {}
            self.drop = {}
            self.throttle = {"count": 0, "retry_after": "1"}
            self.hang = 0
            self.calls = {}


def vm_xml(v):
    """A <vm>, one element a line, as the engine pretty-prints it (upstream's
    regular expressions read it line by line)."""
    s = '<vm href="%s/vms/%s" id="%s">\n  <actions>\n    <link href="%s/vms/%s/stop" rel="stop"/>\n  </actions>\n  <name>%s</name>\n' % (
        API, v["id"], v["id"], API, v["id"], escape(v["name"]))
    if v["status"] is not None:
        s += "  <status>%s</status>\n" % v["status"]
    s += '  <cluster href="%s/clusters/c1" id="c1"/>\n' % API
    if v["host"] and v["status"] not in ("down", None):
        s += '  <host href="%s/hosts/%s" id="%s"/>\n' % (API, v["host"], v["host"])
    return s + "</vm>\n"


class Handler(hvpeer.Handler):
    server_version = "ovirt-engine"

    def setup(self):
        super().setup()
        # Headers and body go out as two writes: without this, Nagle's
        # algorithm and the client's delayed ACK add 40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, status, body, ctype="application/xml", headers=()):
        raw = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def fault(self, status, reason, detail):
        self.send(status, "<fault><reason>%s</reason><detail>%s</detail></fault>"
                  % (escape(reason), escape(detail)))

    def control(self, method, path, q):
        w = self.server.world
        arg = lambda k, d=None: q.get(k, [d])[0]
        with w.lock:
            if method == "GET" and path == "vms":
                return self.send(200, json.dumps(list(w.vms.values())), "application/json")
            if method == "GET" and path == "calls":
                return self.send(200, json.dumps(w.calls), "application/json")
        if path == "reset":
            w.reset()
        else:
            with w.lock:
                if path == "vm":
                    v = next(v for v in w.vms.values() if v["name"] == arg("name"))
                    st = arg("status")
                    v["status"] = None if st == "-" else st
                elif path == "task":
                    w.fail[arg("action")] = {"text": arg("fail"), "count": int(arg("count", "1"))}
                elif path == "drop":
                    w.drop[arg("action")] = int(arg("count", "1"))
                elif path == "throttle":
                    w.throttle = {"count": int(arg("count", "1")),
                                  "retry_after": arg("retry_after", "1")}
                elif path == "hang":
                    w.hang = int(arg("count", "1"))
                elif path == "expire":
                    w.expire_on = arg("on")
                    if w.expire_on is None:
                        w.sessions = {}
                else:
                    return self.send(404, json.dumps({"ok": False}), "application/json")
        self.send(200, json.dumps({"ok": True}), "application/json")

    def who(self):
        w = self.server.world
        cookie = None
        for part in self.headers.get("Cookie", "").split(";"):
            k, _, v = part.strip().partition("=")
            if k == "JSESSIONID":
                cookie = v
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                u, _, p = base64.b64decode(auth[6:]).decode().partition(":")
            except Exception:
                return None, None
            if USERS.get(u) == p:
                with w.lock:
                    w.calls["auth basic"] = w.calls.get("auth basic", 0) + 1
                new = None
                if "persistent-auth" in self.headers.get("Prefer", ""):
                    new = secrets.token_hex(16)
                    with w.lock:
                        w.sessions[new] = u
                return u, new
            return None, None
        if cookie:
            with w.lock:
                u = w.sessions.get(cookie)
                if u:
                    w.calls["auth cookie"] = w.calls.get("auth cookie", 0) + 1
                return u, None
        return None, None

    def handle_api(self, method):
        w = self.server.world
        url = urlsplit(self.path)
        path = url.path
        if path.startswith("/fencekit/"):
            return self.control(method, path[len("/fencekit/"):], parse_qs(url.query))
        if method == "POST":
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
        rest = path[len(API):].strip("/") if path.startswith(API) else None
        parts = rest.split("/") if rest else []
        shape = "%s /%s" % (method, "/".join("{id}" if len(p) == 36 else p for p in parts))
        with w.lock:
            w.calls[shape] = w.calls.get(shape, 0) + 1
            hang = w.hang > 0
            if hang:
                w.hang -= 1
            throttled = w.throttle["count"] > 0
            if throttled:
                w.throttle["count"] -= 1
        if hang:
            time.sleep(120)
            return
        if throttled:
            return self.send(429, "", headers=[("Retry-After", w.throttle["retry_after"])])
        if rest is None:
            return self.send(404, "<html><head><title>Error</title></head><body>Not Found</body></html>",
                             "text/html")
        with w.lock:
            if (w.expire_on == method and "JSESSIONID" in self.headers.get("Cookie", "")
                    and not self.headers.get("Authorization")):
                w.sessions, w.expire_on = {}, None
                w.calls["expired cookie"] = w.calls.get("expired cookie", 0) + 1
        user, new = self.who()
        if user is None:
            return self.send(401, ERROR_PAGE, "text/html;charset=utf-8",
                             [("WWW-Authenticate", 'Basic realm="RESTAPI"')])
        extra = [("Set-Cookie", "JSESSIONID=%s; Path=/ovirt-engine/api; Secure; HttpOnly" % new)] if new else []
        filtered = self.headers.get("Filter", "false").lower() == "true"
        if user != "admin@internal" and not filtered:
            return self.fault(403, "Operation Failed",
                              "[User is not authorized to perform this action.]")
        visible = lambda v: user == "admin@internal" or v["name"] in USER_VMS
        if method == "GET" and not parts:
            return self.send(200, '<api><product_info><name>oVirt Engine</name><version '
                             'major="4" minor="5" build="4" revision="0"/></product_info></api>',
                             headers=extra)
        if method == "GET" and parts == ["vms"]:
            term = parse_qs(url.query).get("search", [""])[0]
            with w.lock:
                vms = [v for v in w.vms.values() if visible(v)]
                if term.startswith("name="):
                    want = term[5:].strip('"')
                    if "*" in want:
                        pre = want.split("*")[0]
                        vms = [v for v in vms if v["name"].startswith(pre)]
                    else:
                        vms = [v for v in vms if v["name"] == want]
                body = "<vms>\n" + "".join(vm_xml(v) for v in vms) + "</vms>\n"
            return self.send(200, body, headers=extra)
        if len(parts) >= 2 and parts[0] == "vms":
            with w.lock:
                v = w.vms.get(parts[1])
                if v is not None and not visible(v):
                    v = None
                xml = vm_xml(v) if v else None
            if v is None:
                return self.fault(404, "Resource not found", "Entity not found: " + parts[1])
            if method == "GET" and len(parts) == 2:
                return self.send(200, xml, headers=extra)
            if method == "POST" and len(parts) == 3 and parts[2] in ("stop", "start", "shutdown"):
                return self.act(v, parts[2], extra)
        if method == "GET" and len(parts) == 2 and parts[0] == "jobs":
            with w.lock:
                j = w.jobs.get(parts[1])
            if j is None:
                return self.fault(404, "Resource not found", "Entity not found: " + parts[1])
            return self.send(200, '<job id="%s"><description>%s</description><status>%s</status></job>'
                             % (parts[1], escape(j["description"]), j["status"]), headers=extra)
        if method == "GET" and len(parts) == 2 and parts[0] == "hosts" and parts[1] in HOSTS:
            return self.send(200, '<host id="%s"><status>%s</status></host>'
                             % (parts[1], HOSTS[parts[1]]), headers=extra)
        return self.fault(404, "Resource not found", "no such resource")

    def act(self, v, action, extra):
        w = self.server.world
        with w.lock:
            st = v["status"]
            if action == "start" and st != "down":
                return self.fault(409, "Operation Failed", "[Cannot run VM. VM is running.]")
            if action in ("stop", "shutdown") and st == "down":
                return self.fault(409, "Operation Failed", "[Cannot stop VM. VM is not running.]")
            knob = w.fail.get(action)
            fail = None
            if knob and knob["count"] != 0:
                knob["count"] -= 1
                fail = knob["text"]
            drop = w.drop.get(action, 0) > 0
            if drop:
                w.drop[action] -= 1
            jid = str(uuid.uuid4())
            w.jobs[jid] = {"status": "started", "description": "%s VM %s" % (action, v["name"])}
            if action == "start" and not fail:
                v["status"] = "wait_for_launch"
            if action == "shutdown" and not fail:
                v["status"] = "powering_down"

        def finish():
            time.sleep(w.task_ms / 1000.0)
            with w.lock:
                if fail:
                    w.jobs[jid]["status"] = "failed"
                    w.jobs[jid]["description"] += ": " + fail
                    return
                v["status"] = "up" if action == "start" else "down"
                if action == "start":
                    v["host"] = "h1"
                w.jobs[jid]["status"] = "finished"
        threading.Thread(target=finish, daemon=True).start()
        if drop:
            self.close_connection = True
            self.connection.close()
            return
        self.send(200, '<action><status>complete</status><job href="%s/jobs/%s" id="%s"/></action>'
                  % (API, jid, jid), headers=extra)

    def do_GET(self):
        self.handle_api("GET")

    def do_POST(self):
        self.handle_api("POST")


def main():
    ap = argparse.ArgumentParser()
    hvpeer.server_args(ap, port=None)
    ap.add_argument("--task-ms", type=int, default=150)
    a = ap.parse_args()
    hvpeer.serve(Handler, World(a.task_ms), a, lambda port: {
        "url": "https://%s:%d%s" % (a.bind, port, API), "host": a.bind,
        "port": port, "users": USERS, "cert": a.cert, "pid": os.getpid()})


if __name__ == "__main__":
    main()
