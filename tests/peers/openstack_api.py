#!/usr/bin/env python3
"""fencekit's OpenStack peer: Keystone v3 (identity) and Nova (compute v2.1) on one
HTTPS port, written from the Keystone v3 and Compute API references, for
fence_openstack (upstream 4.12.1: keystoneauth1 and python-novaclient) and fencekit.

Identity (/identity)
  GET  /identity, /identity/v3      version discovery (keystoneauth reads it)
  POST /identity/v3/auth/tokens     201, the token in X-Subject-Token, the body
       {"token": {"expires_at", "methods", "user", "project", "roles", "catalog"}}.
       Methods: "password" (user by name + domain or id; scope project by name +
       domain or id), "application_credential" (id, or name + user; the credential's
       own scope, a request scope refused), "token" (an issued token, re-scoped).
       Refused: 401 {"error": {"code": 401, "title": "Unauthorized", "message": ...}}.
  Users (domain Default, project "fencing" in Default): fence / fence-secret (member),
  reader / reader-secret (reader: every action 403), admin / admin-secret (admin:
  sees host_status with microversion >= 2.16). Application credential
  id ac-fence, name fencekit (user fence), secret ac-secret. A token lives
  --token-s seconds (3600).
  Catalog: compute public  https://HOST:PORT/compute/v2.1 (RegionOne),
           compute internal https://HOST:PORT/compute-internal/v2.1 (RegionOne),
           identity public https://HOST:PORT/identity/v3. /fencekit/regions?n=2 adds
           RegionTwo's public compute endpoint (/compute2/v2.1, same servers).

Compute (/compute/v2.1, /compute-internal/v2.1), X-Auth-Token required (401 otherwise)
  GET  /compute/v2.1[/]             {"version": ...}  GET /compute/ {"versions": [...]}
  GET  /servers[/detail][?name=REGEX&limit=N&marker=ID]   pages of at most --max-limit
       (1000) servers, "servers_links" rel=next when a page is full; a marker that is
       no server: 400.
  GET  /servers/ID                  404 itemNotFound for an unknown id (or a name)
  POST /servers/ID/action           {"os-stop": null}, {"os-start": null},
       {"reboot": {"type": "HARD"|"SOFT"}} -> 202, no body. Nova's rules: a task under
       way, or a vm_state the action does not start from, is 409 conflictingRequest
       ("Cannot 'stop' instance ... while it is in vm_state stopped"); a locked server
       409 ("Instance ... is locked"). The task (powering-off, powering-on,
       rebooting_hard) lasts --task-ms (150) and ends in the new state, or in ERROR
       with a fault when /fencekit/fail asked.
  Microversion: OpenStack-API-Version: compute 2.X (or X-OpenStack-Nova-API-Version);
  >= 2.16 and an admin: host_status (UP, DOWN) in each server.

Servers (INVENTORY): node1, node2 ACTIVE; node3 SHUTOFF; paused PAUSED; suspended
  SUSPENDED; shelved SHELVED; offloaded SHELVED_OFFLOADED; error ERROR (running);
  unknown UNKNOWN (its host down); hostdown SHUTOFF on a host whose service is DOWN;
  crashed SHUTOFF with power state 6; stuck ACTIVE with task powering-off forever;
  twin twice (two servers of one name); locked ACTIVE and locked.

Test control, no authentication (a loopback test peer):
  GET  /fencekit/servers | /fencekit/calls
  POST /fencekit/server?name=N[&status=S][&power=P][&task=T|-][&vm_state=V]
  POST /fencekit/fail?action=os-stop|os-start|reboot[&count=N]  accepted, then ERROR
  POST /fencekit/drop?action=A[&count=N]   carried out, its answer lost
  POST /fencekit/throttle?count=N[&retry_after=S]   POST /fencekit/hang?count=N
  POST /fencekit/expire[?after=N]          every token issued so far is refused (401);
                                           after=N: once N more compute requests were served
  POST /fencekit/max_limit?n=N             POST /fencekit/regions?n=1|2
  POST /fencekit/reset
Run: openstack_api.py --port P --cert C --key K [--bind ADDR] [--info FILE] [--log FILE]
"""
import argparse
import json
import os
import re
import secrets
import socket
import ssl
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PROJECT = {"id": "b9f3d2c1a0e14f6d8c7b6a5f4e3d2c1b", "name": "fencing",
           "domain": {"id": "default", "name": "Default"}}
USERS = {"fence": ("fence-secret", "member"), "reader": ("reader-secret", "reader"),
         "admin": ("admin-secret", "admin")}
APP_CRED = {"id": "ac-fence", "name": "fencekit", "user": "fence", "secret": "ac-secret"}
# name, status, power_state, task_state, vm_state, host_status
INVENTORY = [
    ("node1", "ACTIVE", 1, None, "active", "UP"),
    ("node2", "ACTIVE", 1, None, "active", "UP"),
    ("node3", "SHUTOFF", 4, None, "stopped", "UP"),
    ("paused", "PAUSED", 3, None, "paused", "UP"),
    ("suspended", "SUSPENDED", 7, None, "suspended", "UP"),
    ("shelved", "SHELVED", 4, None, "shelved", "UP"),
    ("offloaded", "SHELVED_OFFLOADED", 0, None, "shelved_offloaded", ""),
    ("error", "ERROR", 1, None, "error", "UP"),
    ("unknown", "UNKNOWN", 1, None, "active", "UNKNOWN"),
    ("hostdown", "SHUTOFF", 4, None, "stopped", "DOWN"),
    ("crashed", "SHUTOFF", 6, None, "stopped", "UP"),
    ("stuck", "ACTIVE", 1, "powering-off", "active", "UP"),
    ("twin", "ACTIVE", 1, None, "active", "UP"),
    ("twin", "SHUTOFF", 4, None, "stopped", "UP"),
    ("locked", "ACTIVE", 1, None, "active", "UP"),
]
STATUS_OF = {"active": "ACTIVE", "stopped": "SHUTOFF", "error": "ERROR"}
# The vm_states an action starts from (Nova's check_instance_state).
STARTS_FROM = {"os-stop": ("active", "error", "rescued"), "os-start": ("stopped",),
               "reboot": ("active", "stopped", "paused", "suspended", "error", "rescued")}
TASK_OF = {"os-stop": "powering-off", "os-start": "powering-on", "reboot": "rebooting_hard"}


def server_id(name, n):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "openstack/server/%s/%d" % (name, n)))


class World:
    def __init__(self, task_ms, token_s):
        self.lock = threading.Lock()
        self.task_ms = task_ms
        self.token_s = token_s
        self.reset()

    def reset(self):
        with self.lock:
            self.servers = {}
            for n, (name, st, pw, task, vm, host) in enumerate(INVENTORY):
                i = server_id(name, n)
                self.servers[i] = {"id": i, "name": name, "status": st, "power": pw, "task": task,
                                   "vm_state": vm, "host_status": host, "fault": None,
                                   "locked": name == "locked", "n": n, "reboots": 0}
            self.tokens = {}
            self.fail = {}
            self.drop = {}
            self.throttle = {"count": 0, "retry_after": "1"}
            self.hang = 0
            self.max_limit = 1000
            self.regions = 1
            self.expire_after = 0
            self.calls = {}


def now_iso(delta=0):
    t = datetime.now(timezone.utc) + timedelta(seconds=delta)
    return t.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "openstack-peer"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        if self.server.log:
            self.server.log.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))
            self.server.log.flush()

    def base(self):
        return "https://%s:%d" % (self.server.host, self.server.port)

    def send(self, status, obj=None, headers=()):
        raw = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        if obj is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def nova_error(self, status, kind, message):
        self.send(status, {kind: {"code": status, "message": message}})

    def count(self, shape):
        w = self.server.world
        with w.lock:
            w.calls[shape] = w.calls.get(shape, 0) + 1

    def body(self):
        try:
            return json.loads(self.raw) if self.raw else None
        except ValueError:
            return None

    # -- control ----------------------------------------------------------
    def control(self, method, path, q):
        w = self.server.world
        arg = lambda k, d=None: q.get(k, [d])[0]
        if method == "GET":
            with w.lock:
                if path == "servers":
                    return self.send(200, sorted(w.servers.values(), key=lambda s: s["n"]))
                if path == "calls":
                    return self.send(200, w.calls)
            return self.send(404, {"ok": False})
        if path == "reset":
            w.reset()
            return self.send(200, {"ok": True})
        with w.lock:
            if path == "server":
                s = next(s for s in w.servers.values() if s["name"] == arg("name"))
                if arg("status"):
                    s["status"] = arg("status")
                if arg("power"):
                    s["power"] = int(arg("power"))
                if arg("task"):
                    s["task"] = None if arg("task") == "-" else arg("task")
                if arg("vm_state"):
                    s["vm_state"] = arg("vm_state")
            elif path == "fail":
                w.fail[arg("action")] = int(arg("count", "1"))
            elif path == "drop":
                w.drop[arg("action")] = int(arg("count", "1"))
            elif path == "throttle":
                w.throttle = {"count": int(arg("count", "1")), "retry_after": arg("retry_after", "1")}
            elif path == "hang":
                w.hang = int(arg("count", "1"))
            elif path == "expire":
                if arg("after"):
                    w.expire_after = int(arg("after"))
                else:
                    w.tokens = {}
            elif path == "max_limit":
                w.max_limit = int(arg("n"))
            elif path == "regions":
                w.regions = int(arg("n"))
            else:
                return self.send(404, {"ok": False})
        self.send(200, {"ok": True})

    # -- identity ---------------------------------------------------------
    def version_doc(self):
        return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
                "links": [{"rel": "self", "href": self.base() + "/identity/v3/"}],
                "media-types": [{"base": "application/json",
                                 "type": "application/vnd.openstack.identity-v3+json"}]}

    def catalog(self):
        b = self.base()
        compute = [{"id": "c1", "interface": "public", "region": "RegionOne", "region_id": "RegionOne",
                    "url": b + "/compute/v2.1"},
                   {"id": "c2", "interface": "internal", "region": "RegionOne",
                    "region_id": "RegionOne", "url": b + "/compute-internal/v2.1"}]
        if self.server.world.regions > 1:
            compute.append({"id": "c3", "interface": "public", "region": "RegionTwo",
                            "region_id": "RegionTwo", "url": b + "/compute2/v2.1"})
        return [{"id": "s1", "type": "identity", "name": "keystone",
                 "endpoints": [{"id": "i1", "interface": "public", "region": "RegionOne",
                                "region_id": "RegionOne", "url": b + "/identity/v3"}]},
                {"id": "s2", "type": "compute", "name": "nova", "endpoints": compute}]

    def unauthorized(self, why="The request you have made requires authentication."):
        self.send(401, {"error": {"code": 401, "title": "Unauthorized", "message": why}},
                  headers=[("WWW-Authenticate", 'Keystone uri="%s/identity"' % self.base())])

    def issue(self):
        w = self.server.world
        self.count("POST /auth/tokens")
        req = (self.body() or {}).get("auth") or {}
        ident = req.get("identity") or {}
        methods = ident.get("methods") or []
        scope = req.get("scope")
        user = None
        if methods == ["password"]:
            u = (ident.get("password") or {}).get("user") or {}
            name = u.get("name")
            if u.get("id") in USERS:
                name = u.get("id")
            elif name is not None:
                d = u.get("domain") or {}
                if d.get("name") != "Default" and d.get("id") != "default":
                    return self.unauthorized()
            if name in USERS and USERS[name][0] == u.get("password"):
                user = name
            self.count("auth password")
        elif methods == ["application_credential"]:
            a = ident.get("application_credential") or {}
            ok_id = a.get("id") == APP_CRED["id"]
            ok_name = a.get("name") == APP_CRED["name"] and \
                ((a.get("user") or {}).get("name") == APP_CRED["user"] or
                 (a.get("user") or {}).get("id") == APP_CRED["user"])
            if (ok_id or ok_name) and a.get("secret") == APP_CRED["secret"]:
                if scope:
                    return self.unauthorized("An application credential cannot request a scope.")
                user = APP_CRED["user"]
                scope = {"project": {"id": PROJECT["id"]}}
            self.count("auth application_credential")
        elif methods == ["token"]:
            t = (ident.get("token") or {}).get("id")
            with w.lock:
                user = w.tokens.get(t, {}).get("user")
            self.count("auth token")
        if user is None:
            return self.unauthorized()
        p = (scope or {}).get("project")
        scoped = False
        if p is not None:
            pd = p.get("domain") or {}
            if p.get("id") == PROJECT["id"] or (p.get("name") == PROJECT["name"] and
                                                 (pd.get("name") == "Default" or pd.get("id") == "default")):
                scoped = True
            else:
                return self.unauthorized("User %s has no access to project %s" %
                                         (user, p.get("name") or p.get("id")))
        tok = "gAAAA" + secrets.token_urlsafe(24)
        with w.lock:
            w.tokens[tok] = {"user": user, "scoped": scoped}
        role = USERS[user][1]
        body = {"methods": methods, "expires_at": now_iso(w.token_s), "issued_at": now_iso(),
                "user": {"id": user, "name": user, "domain": {"id": "default", "name": "Default"}},
                "audit_ids": [secrets.token_hex(8)]}
        if scoped:
            body["project"] = PROJECT
            body["roles"] = [{"id": role, "name": role}]
            body["catalog"] = self.catalog()
        self.send(201, {"token": body}, headers=[("X-Subject-Token", tok)])

    # -- compute ----------------------------------------------------------
    def microversion(self):
        v = self.headers.get("OpenStack-API-Version", "")
        m = re.match(r"\s*compute\s+2\.(\d+)", v)
        if not m:
            m = re.match(r"\s*2\.(\d+)", self.headers.get("X-OpenStack-Nova-API-Version", ""))
        return int(m.group(1)) if m else 1

    def view(self, s, role):
        out = {"id": s["id"], "name": s["name"], "status": s["status"],
               "tenant_id": PROJECT["id"], "user_id": "fence", "locked": s["locked"],
               "OS-EXT-STS:power_state": s["power"], "OS-EXT-STS:task_state": s["task"],
               "OS-EXT-STS:vm_state": s["vm_state"],
               "links": [{"rel": "self", "href": "%s/compute/v2.1/servers/%s" % (self.base(), s["id"])}]}
        if s["fault"]:
            out["fault"] = {"code": 500, "message": s["fault"], "created": now_iso()}
        if role == "admin" and self.microversion() >= 16:
            out["host_status"] = s["host_status"]
            out["OS-EXT-SRV-ATTR:host"] = "compute-1"
        return out

    def compute(self, method, prefix, rest, query):
        w = self.server.world
        tok = self.headers.get("X-Auth-Token")
        with w.lock:
            t = w.tokens.get(tok)
            if t is not None and w.expire_after > 0:
                w.expire_after -= 1
                if w.expire_after == 0:
                    w.tokens = {}
        if t is None or not t["scoped"]:
            return self.unauthorized()
        role = USERS[t["user"]][1]
        parts = [p for p in rest.split("/") if p]
        shape = "%s /%s" % (method, "/".join("{id}" if len(p) == 36 else p for p in parts))
        self.count(shape)
        headers = [("OpenStack-API-Version", "compute 2.%d" % self.microversion()),
                   ("Vary", "OpenStack-API-Version")]
        if method == "GET" and not parts:
            return self.send(200, {"version": {"id": "v2.1", "status": "CURRENT", "version": "2.95",
                                               "min_version": "2.1", "updated": "2013-07-23T11:33:21Z",
                                               "links": [{"rel": "self", "href": self.base() + prefix + "/v2.1/"}]}})
        if method == "GET" and parts in (["servers"], ["servers", "detail"]):
            q = parse_qs(query)
            arg = lambda k: q.get(k, [None])[0]
            with w.lock:
                every = sorted(w.servers.values(), key=lambda s: s["n"])
                if arg("name"):
                    try:
                        pat = re.compile(arg("name"))
                    except re.error:
                        return self.nova_error(400, "badRequest", "Invalid regular expression")
                    every = [s for s in every if pat.search(s["name"])]
                limit = min(int(arg("limit") or w.max_limit), w.max_limit)
                start = 0
                if arg("marker"):
                    ids = [s["id"] for s in every]
                    if arg("marker") not in ids:
                        return self.nova_error(400, "badRequest", "marker [%s] not found" % arg("marker"))
                    start = ids.index(arg("marker")) + 1
                page = every[start:start + limit]
                detail = parts == ["servers", "detail"]
                body = {"servers": [self.view(s, role) if detail else
                                    {"id": s["id"], "name": s["name"]} for s in page]}
                if len(page) == limit and page:
                    body["servers_links"] = [{"rel": "next", "href": "%s%s/v2.1/servers%s?limit=%d&marker=%s"
                                              % (self.base(), prefix, "/detail" if detail else "",
                                                 limit, page[-1]["id"])}]
            return self.send(200, body, headers)
        if len(parts) >= 2 and parts[0] == "servers":
            with w.lock:
                s = w.servers.get(parts[1])
                view = self.view(s, role) if s else None
            if s is None:
                return self.nova_error(404, "itemNotFound", "Instance %s could not be found." % parts[1])
            if method == "GET" and len(parts) == 2:
                return self.send(200, {"server": view}, headers)
            if method == "POST" and parts[2:] == ["action"]:
                return self.act(s, role, headers)
        return self.nova_error(404, "itemNotFound", "The resource could not be found.")

    def act(self, s, role, headers):
        w = self.server.world
        b = self.body()
        if not isinstance(b, dict) or len(b) != 1:
            return self.nova_error(400, "badRequest", "Malformed request body")
        action = next(iter(b))
        if action == "reboot" and (b["reboot"] or {}).get("type") not in ("HARD", "SOFT"):
            return self.nova_error(400, "badRequest", "Invalid reboot type")
        if action not in TASK_OF:
            return self.nova_error(400, "badRequest", "Unsupported action %s" % action)
        self.count("action " + action)
        if role == "reader":
            return self.nova_error(403, "forbidden", "Policy doesn't allow os_compute_api:servers:%s "
                                   "to be performed." % action.replace("os-", ""))
        name = action.replace("os-", "")
        with w.lock:
            if s["locked"]:
                return self.nova_error(409, "conflictingRequest", "Instance %s is locked" % s["id"])
            if s["task"] is not None:
                return self.nova_error(409, "conflictingRequest",
                                       "Cannot '%s' instance %s while it is in task_state %s"
                                       % (name, s["id"], s["task"]))
            if s["vm_state"] not in STARTS_FROM[action]:
                return self.nova_error(409, "conflictingRequest",
                                       "Cannot '%s' instance %s while it is in vm_state %s"
                                       % (name, s["id"], s["vm_state"]))
            fail = w.fail.get(action, 0) > 0
            if fail:
                w.fail[action] -= 1
            drop = w.drop.get(action, 0) > 0
            if drop:
                w.drop[action] -= 1
            s["task"] = TASK_OF[action]
            if action == "reboot":
                s["status"] = "HARD_REBOOT"

        def finish():
            time.sleep(w.task_ms / 1000.0)
            with w.lock:
                s["task"] = None
                if fail:
                    s["vm_state"], s["status"] = "error", "ERROR"
                    s["fault"] = "libvirtError: Failed to %s the domain" % name
                    return
                if action == "os-stop":
                    s["vm_state"], s["status"], s["power"] = "stopped", "SHUTOFF", 4
                else:
                    s["vm_state"], s["status"], s["power"] = "active", "ACTIVE", 1
                    if action == "reboot":
                        s["reboots"] += 1
                s["fault"] = None
        threading.Thread(target=finish, daemon=True).start()
        if drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            self.connection.close()
            return
        self.send(202, None, headers)

    # -- routing ----------------------------------------------------------
    def route(self, method):
        w = self.server.world
        url = urlsplit(self.path)
        path = url.path
        # Read the whole request first: an answer before it leaves the rest
        # of the body to be read as the next request.
        n = int(self.headers.get("Content-Length") or 0)
        self.raw = self.rfile.read(n) if n else b""
        if path.startswith("/fencekit/"):
            return self.control(method, path[len("/fencekit/"):], parse_qs(url.query))
        with w.lock:
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
            self.count("throttled")
            return self.send(429, {"overLimit": {"code": 429, "message": "Too many requests"}},
                             [("Retry-After", w.throttle["retry_after"])])
        if path.rstrip("/") == "/identity" and method == "GET":
            return self.send(300, {"versions": {"values": [self.version_doc()]}})
        if path.rstrip("/") == "/identity/v3" and method == "GET":
            return self.send(200, {"version": self.version_doc()})
        if path == "/identity/v3/auth/tokens" and method == "POST":
            return self.issue()
        for prefix in ("/compute-internal", "/compute2", "/compute"):
            if path.rstrip("/") == prefix and method == "GET":
                return self.send(200, {"versions": [{"id": "v2.1", "status": "CURRENT", "version": "2.95",
                                                     "min_version": "2.1",
                                                     "links": [{"rel": "self", "href": self.base() + prefix + "/v2.1/"}]}]})
            if path.startswith(prefix + "/v2.1"):
                if prefix != "/compute":
                    self.count("endpoint " + prefix)
                return self.compute(method, prefix, path[len(prefix + "/v2.1"):], url.query)
        self.send(404, {"error": {"code": 404, "message": "Not Found", "title": "Not Found"}})

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--info")
    ap.add_argument("--log")
    ap.add_argument("--task-ms", type=int, default=150)
    ap.add_argument("--token-s", type=int, default=3600)
    a = ap.parse_args()
    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    srv.world = World(a.task_ms, a.token_s)
    srv.host, srv.port = a.bind, a.port
    srv.log = open(a.log, "a") if a.log else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    info = json.dumps({"url": "https://%s:%d/identity/v3" % (a.bind, a.port), "host": a.bind,
                       "port": a.port, "project": PROJECT["name"],
                       "users": {u: p for u, (p, _) in USERS.items()},
                       "app_cred": {"id": APP_CRED["id"], "secret": APP_CRED["secret"]},
                       "cert": a.cert, "pid": os.getpid()})
    if a.info:
        tmp = a.info + ".tmp"
        with open(tmp, "w") as f:
            f.write(info + "\n")
        os.rename(tmp, a.info)
    print(info, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
