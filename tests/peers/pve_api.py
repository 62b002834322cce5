#!/usr/bin/env python3
"""fencekit's Proxmox VE peer: the /api2/json API of a three-node cluster,
written from Proxmox VE's API reference (pve-docs api-viewer) and its
documented behaviour, for fence_pve (upstream 4.12.1, pycurl) and fencekit.

Authentication
  POST /api2/json/access/ticket  form username=U&password=P (or password=TICKET
       to renew) -> 200 {"data": {"username", "ticket", "CSRFPreventionToken", "cap"}};
       refused: 401 "authentication failure", {"data": null}
  every other request: the cookie PVEAuthCookie=TICKET (and, for POST/PUT/DELETE,
       the header CSRFPreventionToken: 401 "Permission denied - invalid csrf token"
       without it), or Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET (no CSRF);
       no ticket: 401 "No ticket"; an expired or unknown ticket: 401
       "permission denied - invalid PVE ticket"; a wrong token: 401 "invalid token value!"
  users: root@pam / pve-secret (may skiplock), fence@pve / fence-secret (VM.Audit,
       VM.PowerMgmt), viewer@pve / viewer-secret (VM.Audit only: 403
       "Permission check failed (/vms/ID, VM.PowerMgmt)"); token
       fence@pve!fencekit = 5f1d0c6e-... (--token-secret), same rights as fence@pve.

Errors are worded as pveproxy words them: in the status line's reason phrase,
the body {"data": null} (and {"errors": {...}} for a parameter). An unknown VM:
500 "Configuration file 'nodes/N/qemu-server/ID.conf' does not exist"; a path
the API lacks: 501 "Method 'GET /x' not implemented"; a request proxied to an
offline node: 595 "Errors during connection establishment, proxy handshake:
No route to host".

Reads
  GET /api2/json/version, /nodes, /cluster/status, /cluster/resources[?type=vm|node],
      /cluster/ha/status/current, /nodes/N/{qemu,lxc}, /nodes/N/{qemu,lxc}/ID/status/current
      (status, qmpstatus for QEMU, lock, ha {managed, state}), /nodes/N/{qemu,lxc}/ID/config
      (smbios1 uuid=..., vmstate of a hibernated VM), /nodes/N/tasks/UPID/status
  vmid is an integer, as Proxmox VE serializes it. /cluster/resources keeps the
  last report of an offline node's guests (their status as last seen).

Power (a worker task each: 200 {"data": "UPID:N:PID:PSTART:STARTTIME:TYPE:ID:USER:"})
  POST /nodes/N/qemu/ID/status/{start,stop,reset,shutdown,suspend,resume}, lxc: no reset
  (501). Form parameters skiplock=1 (root@pam only: 400 "Parameter verification
  failed.") and timeout. The task runs --task-ms (default 150 ms); its status is
  "running", then "stopped" with exitstatus "OK" or the error: a locked VM
  "VM is locked (backup)" (unless skiplock), start of a running VM "VM ID already
  running", reset of a stopped one "VM ID not running". stop of a stopped VM is OK.
  An HA-managed VM's stop and start are "hastop"/"hastart" tasks that only ask
  the HA manager (OK at once); the VM changes --ha-ms later.

The cluster (INVENTORY): nodes pve1, pve2 online, pve3 offline; guests
  100 node1 running, 101 node2 running (pve2), 102 node3 stopped,
  103 paused (running, qmpstatus paused), 104 suspended (running, qmpstatus suspended),
  105 hibernated (stopped, lock suspended, vmstate), 106 locked (running, lock backup),
  107 stale (on pve3, last report stopped), 108 fenced (stopped, HA state fence),
  109 and 110 both named twin, 111 hanode (HA-managed, started),
  200 ct1 (lxc, running, pve2), 201 ct2 (lxc, stopped).

Test control, no authentication (a loopback test peer):
  GET  /fencekit/vms | /fencekit/calls | /fencekit/tasks
  POST /fencekit/vm?vmid=ID[&status=S][&qmpstatus=Q][&lock=L|-][&ha=STATE|-][&node=N][&name=X]
  POST /fencekit/node?node=N&online=0|1
  POST /fencekit/task?action=A[&fail=TEXT][&ms=N][&count=N]  the next A task fails
                                         after acceptance with TEXT (or lasts N ms)
  POST /fencekit/drop?action=A[&count=N]  the next A is carried out and its answer lost
  POST /fencekit/throttle?count=N[&retry_after=S]  the next N API requests get 429
  POST /fencekit/hang?count=N            the next N API requests are never answered
  POST /fencekit/expire[?after=N]        every ticket issued so far expires (after=N:
                                         every ticket, new ones too, expires after N requests)
  POST /fencekit/echo?on=1               401 reasons quote the credentials sent
  POST /fencekit/reset

Run: pve_api.py --port P --cert C --key K [--bind ADDR] [--info FILE] [--log FILE]
Prints one JSON line (url, host, port, users, token, cert, pid) when it serves.
"""
import argparse
import base64
import copy
import json
import os
import re
import secrets
import sys
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit, unquote

import hvpeer

USERS = {"root@pam": "pve-secret", "fence@pve": "fence-secret", "viewer@pve": "viewer-secret"}
TOKEN_ID = "fence@pve!fencekit"
TOKEN_SECRET = "5f1d0c6e-8a2b-4c3d-9e7f-0a1b2c3d4e5f"
NODES = [("pve1", True), ("pve2", True), ("pve3", False)]

# vmid, kind, name, node, status, qmpstatus, lock, ha state (None: not managed)
INVENTORY = [
    (100, "qemu", "node1", "pve1", "running", "running", None, None),
    (101, "qemu", "node2", "pve2", "running", "running", None, None),
    (102, "qemu", "node3", "pve1", "stopped", "stopped", None, None),
    (103, "qemu", "paused", "pve1", "running", "paused", None, None),
    (104, "qemu", "suspended", "pve1", "running", "suspended", None, None),
    (105, "qemu", "hibernated", "pve1", "stopped", "stopped", "suspended", None),
    (106, "qemu", "locked", "pve1", "running", "running", "backup", None),
    (107, "qemu", "stale", "pve3", "stopped", "stopped", None, None),
    (108, "qemu", "fenced", "pve1", "stopped", "stopped", None, "fence"),
    (109, "qemu", "twin", "pve1", "running", "running", None, None),
    (110, "qemu", "twin", "pve2", "running", "running", None, None),
    (111, "qemu", "hanode", "pve2", "running", "running", None, "started"),
    (200, "lxc", "ct1", "pve2", "running", None, None, None),
    (201, "lxc", "ct2", "pve2", "stopped", None, None, None),
]

ACTIONS = ("start", "stop", "reset", "shutdown", "suspend", "resume")


def build_inventory():
    vms = {}
    for vmid, kind, name, node, status, qmp, lock, ha in INVENTORY:
        vms[vmid] = {
            "vmid": vmid, "type": kind, "name": name, "node": node, "status": status,
            "qmpstatus": qmp, "lock": lock, "ha": ha,
            "smbios_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, "pve/smbios/%d" % vmid)),
            "vmstate": "local-lvm:vm-%d-state-hiber" % vmid if lock == "suspended" else None,
            "resets": 0,
        }
    return vms


class World:
    def __init__(self, task_ms, ha_ms):
        self.lock = threading.RLock()
        self.task_ms = task_ms
        self.ha_ms = ha_ms
        self.reset()

    def reset(self):
        with self.lock:
            self.vms = build_inventory()
            self.nodes = dict(NODES)
            self.tickets = {}       # ticket -> (user, csrf, issued)
            self.expired = set()
            self.expire_after = None
            self.uses = {}
            self.tasks = {}         # upid -> task
            self.task_knobs = {}    # action -> {fail, ms, count}
            self.drop = {}
            self.throttle = {"count": 0, "retry_after": None}
            self.hang = 0
            self.echo = False
            self.calls = {}
            self.pid = 4000

    def take(self, table, action):
        with self.lock:
            k = table.get(action)
            if not k or k["count"] == 0:
                return None
            if k["count"] > 0:
                k["count"] -= 1
            return dict(k)


def upid_of(node, kind, vmid, user, pid):
    now = int(time.time())
    return "UPID:%s:%08X:%08X:%08X:%s:%s:%s:" % (node, pid, pid * 7, now, kind, vmid, user)


class Handler(hvpeer.Handler):
    # One write per answer, sent at once (as a real server does): without these
    # the body waits behind the headers for the client's delayed ACK (~40 ms).
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    server_version = "pve-api-daemon/3.0"

    # -- answers ----------------------------------------------------------
    def send(self, status, data=None, reason=None, errors=None, headers=()):
        body = {"data": data}
        if errors:
            body["errors"] = errors
        raw = json.dumps(body).encode()
        self.send_response(status, reason)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def fail(self, status, reason, errors=None):
        self.send(status, None, reason, errors)

    # -- plumbing ---------------------------------------------------------
    def count(self, shape):
        with self.server.world.lock:
            c = self.server.world.calls
            c[shape] = c.get(shape, 0) + 1

    def form(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace") if n > 0 else ""
        return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

    def cookie(self, name):
        for part in self.headers.get("Cookie", "").split(";"):
            k, _, v = part.strip().partition("=")
            if k == name:
                return unquote(v)
        return None

    def who(self, method):
        """(user, None) or (None, (status, reason)) for the request's credentials."""
        world = self.server.world
        auth = self.headers.get("Authorization", "")
        if auth.startswith("PVEAPIToken="):
            full, _, secret = auth[len("PVEAPIToken="):].partition("=")
            if full == TOKEN_ID and secret == self.server.token_secret:
                return full.split("!")[0], None
            return None, (401, self.echoed("invalid token value!"))
        ticket = self.cookie("PVEAuthCookie")
        if not ticket:
            return None, (401, self.echoed("No ticket"))
        with world.lock:
            t = world.tickets.get(ticket)
            world.uses[ticket] = world.uses.get(ticket, 0) + 1
            expired = ticket in world.expired or (
                world.expire_after is not None and world.uses[ticket] > world.expire_after)
        if t is None or expired:
            return None, (401, self.echoed("permission denied - invalid PVE ticket"))
        user, csrf, _ = t
        if method != "GET" and self.headers.get("CSRFPreventionToken") != csrf:
            return None, (401, "Permission denied - invalid csrf token")
        return user, None

    def echoed(self, reason):
        if not self.server.world.echo:
            return reason
        return "%s (you sent Cookie: %s; Authorization: %s)" % (
            reason, self.headers.get("Cookie", "-"), self.headers.get("Authorization", "-"))

    # -- routing ----------------------------------------------------------
    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")

    def route(self, method):
        u = urlsplit(self.path)
        path = u.path.rstrip("/") or "/"
        query = {k: v[0] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
        form = self.form() if method in ("POST", "PUT") else {}
        if path.startswith("/fencekit/"):
            return self.control(method, path, query)
        if not path.startswith("/api2/json/"):
            return self.fail(404, "Not Found")
        rest = path[len("/api2/json"):]
        shape = re.sub(r"/UPID:[^/]*", "/{upid}", rest)
        shape = re.sub(r"/(qemu|lxc)/\d+", r"/\1/{vmid}", shape)
        shape = re.sub(r"/nodes/[^/]+", "/nodes/{node}", shape)
        self.count("%s %s" % (method, shape))
        world = self.server.world
        with world.lock:
            hang = world.hang > 0
            if hang:
                world.hang -= 1
            thr = world.throttle["count"] > 0
            if thr:
                world.throttle["count"] -= 1
            retry_after = world.throttle["retry_after"]
        if hang:
            time.sleep(60)
            self.close_connection = True
            return
        if thr:
            hdr = [("Retry-After", str(retry_after))] if retry_after is not None else []
            return self.send(429, None, "Too Many Requests", headers=hdr)
        if rest == "/access/ticket" and method == "POST":
            return self.ticket(form)
        user, refused = self.who(method)
        if refused:
            return self.fail(*refused)
        return self.api(method, rest, query, form, user)

    def ticket(self, form):
        world = self.server.world
        user, password = form.get("username", ""), form.get("password", "")
        if "@" not in user and form.get("realm"):
            user = "%s@%s" % (user, form["realm"])
        with world.lock:
            renewed = world.tickets.get(password)
            ok = (USERS.get(user) == password) or (
                renewed is not None and renewed[0] == user and password not in world.expired)
            if not ok:
                return self.fail(401, "authentication failure")
            stamp = "%08X" % int(time.time())
            ticket = "PVE:%s:%s::%s" % (user, stamp, base64.b64encode(secrets.token_bytes(24)).decode())
            csrf = "%s:%s" % (stamp, base64.b64encode(secrets.token_bytes(16)).decode().rstrip("="))
            world.tickets[ticket] = (user, csrf, time.time())
        self.send(200, {"username": user, "ticket": ticket, "CSRFPreventionToken": csrf,
                        "cap": {"vms": {"VM.PowerMgmt": 1, "VM.Audit": 1}}})

    def api(self, method, rest, query, form, user):
        world = self.server.world
        if method == "GET" and rest == "/version":
            return self.send(200, {"version": "8.2.4", "release": "8.2", "repoid": "faa83925c9641325"})
        if method == "GET" and rest == "/nodes":
            with world.lock:
                return self.send(200, [{"node": n, "status": "online" if up else "offline",
                                        "type": "node", "id": "node/" + n}
                                       for n, up in world.nodes.items()])
        if method == "GET" and rest == "/cluster/status":
            with world.lock:
                out = [{"type": "cluster", "name": "lab", "quorate": 1, "nodes": len(world.nodes)}]
                out += [{"type": "node", "name": n, "online": 1 if up else 0, "nodeid": i + 1,
                         "id": "node/" + n} for i, (n, up) in enumerate(world.nodes.items())]
            return self.send(200, out)
        if method == "GET" and rest == "/cluster/resources":
            return self.send(200, self.resources(query.get("type")))
        if method == "GET" and rest == "/cluster/ha/status/current":
            with world.lock:
                out = [{"id": "service:vm:%d" % v["vmid"], "type": "service",
                        "sid": "vm:%d" % v["vmid"], "state": v["ha"], "node": v["node"]}
                       for v in world.vms.values() if v["ha"]]
            return self.send(200, out)
        m = re.fullmatch(r"/nodes/([^/]+)(/.*)?", rest)
        if not m:
            return self.fail(501, "Method '%s %s' not implemented" % (method, rest))
        node, sub = m.group(1), m.group(2) or ""
        with world.lock:
            known, online = node in world.nodes, world.nodes.get(node, False)
        if not known:
            return self.fail(500, "hostname lookup '%s' failed - failed to get address info for: "
                             "%s: Name or service not known" % (node, node))
        if not online:
            time.sleep(0.2)
            return self.fail(595, "Errors during connection establishment, proxy handshake: "
                             "No route to host")
        m = re.fullmatch(r"/tasks/(UPID:[^/]+)/status", sub)
        if m and method == "GET":
            return self.task_status(node, unquote(m.group(1)))
        m = re.fullmatch(r"/(qemu|lxc)", sub)
        if m and method == "GET":
            with world.lock:
                out = [self.listed(v) for v in world.vms.values()
                       if v["node"] == node and v["type"] == m.group(1)]
            return self.send(200, out)
        m = re.fullmatch(r"/(qemu|lxc)/(\d+)/(status/current|config|status/([a-z]+))", sub)
        if not m:
            return self.fail(501, "Method '%s /nodes/%s%s' not implemented" % (method, node, sub))
        kind, vmid, what, action = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        with world.lock:
            vm = world.vms.get(vmid)
            vm = copy.deepcopy(vm) if vm and vm["node"] == node and vm["type"] == kind else None
        if vm is None:
            conf = "qemu-server" if kind == "qemu" else "lxc"
            return self.fail(500, "Configuration file 'nodes/%s/%s/%d.conf' does not exist"
                             % (node, conf, vmid))
        if method == "GET" and what == "status/current":
            return self.send(200, self.current(vm))
        if method == "GET" and what == "config":
            return self.send(200, self.config(vm))
        if method == "POST" and action in ACTIONS and not (kind == "lxc" and action == "reset"):
            return self.power(node, vm, action, form, user)
        return self.fail(501, "Method '%s /nodes/%s%s' not implemented" % (method, node, sub))

    # -- views ------------------------------------------------------------
    @staticmethod
    def listed(v):
        out = {"vmid": v["vmid"], "name": v["name"], "status": v["status"],
               "maxmem": 2147483648, "cpus": 2, "uptime": 1000 if v["status"] == "running" else 0}
        if v["lock"]:
            out["lock"] = v["lock"]
        if v["type"] == "qemu":
            out["pid"] = 1000 + v["vmid"] if v["status"] == "running" else None
        return out

    def resources(self, rtype):
        world = self.server.world
        out = []
        with world.lock:
            if rtype in (None, "node"):
                out += [{"id": "node/" + n, "type": "node", "node": n,
                         "status": "online" if up else "offline"} for n, up in world.nodes.items()]
            if rtype in (None, "vm"):
                for v in world.vms.values():
                    r = {"id": "%s/%d" % (v["type"], v["vmid"]), "type": v["type"],
                         "vmid": v["vmid"], "name": v["name"], "node": v["node"],
                         "status": v["status"], "template": 0}
                    if v["ha"]:
                        r["hastate"] = v["ha"]
                    if v["lock"]:
                        r["lock"] = v["lock"]
                    out.append(r)
        return out

    @staticmethod
    def current(v):
        out = {"vmid": v["vmid"], "name": v["name"], "status": v["status"],
               "ha": {"managed": 1, "state": v["ha"], "group": "lab"} if v["ha"] else {"managed": 0},
               "uptime": 1000 if v["status"] == "running" else 0, "cpus": 2}
        if v["type"] == "qemu":
            out["qmpstatus"] = v["qmpstatus"]
            if v["status"] == "running":
                out["pid"] = 1000 + v["vmid"]
        if v["lock"]:
            out["lock"] = v["lock"]
        return out

    @staticmethod
    def config(v):
        out = {"name" if v["type"] == "qemu" else "hostname": v["name"], "cores": 2,
               "memory": 2048, "digest": "%040x" % v["vmid"]}
        if v["type"] == "qemu":
            out["smbios1"] = "uuid=" + v["smbios_uuid"]
            out["vmgenid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, "pve/gen/%d" % v["vmid"]))
        if v["vmstate"]:
            out["vmstate"] = v["vmstate"]
        if v["lock"]:
            out["lock"] = v["lock"]
        return out

    # -- power ------------------------------------------------------------
    def power(self, node, vm, action, form, user):
        world = self.server.world
        skiplock = form.get("skiplock") in ("1", "true")
        if skiplock and user != "root@pam":
            return self.fail(400, "Parameter verification failed.",
                             {"skiplock": "Only root may use this option."})
        if user == "viewer@pve":
            return self.fail(403, "Permission check failed (/vms/%d, VM.PowerMgmt)" % vm["vmid"])
        knob = world.take(world.task_knobs, action) or {}
        ha = vm["ha"] is not None and action in ("start", "stop")
        kind = ("ha" + action) if ha else {"qemu": "qm", "lxc": "vz"}[vm["type"]] + action
        with world.lock:
            world.pid += 1
            upid = upid_of(node, kind, vm["vmid"], user, world.pid)
            task = {"upid": upid, "node": node, "type": kind, "id": str(vm["vmid"]),
                    "user": user, "status": "running", "exitstatus": None,
                    "pid": world.pid, "starttime": int(time.time())}
            world.tasks[upid] = task
        ms = knob.get("ms") if knob.get("ms") is not None else world.task_ms
        threading.Thread(target=self.run_task, daemon=True,
                         args=(upid, vm["vmid"], action, skiplock, ha, knob.get("fail"), ms)).start()
        if world.take(world.drop, action):
            self.close_connection = True
            return
        self.send(200, upid)

    def run_task(self, upid, vmid, action, skiplock, ha, fail, ms):
        world = self.server.world
        time.sleep(ms / 1000.0)
        with world.lock:
            vm = world.vms[vmid]
            err = fail
            if err is None and ha:
                vm["ha"] = "request_stop" if action == "stop" else "started"
                threading.Thread(target=self.ha_settle, args=(vmid, action), daemon=True).start()
            elif err is None:
                err = self.apply(vm, action, skiplock)
            t = world.tasks[upid]
            t["status"] = "stopped"
            t["exitstatus"] = "OK" if err is None else err
            t["endtime"] = int(time.time())

    def ha_settle(self, vmid, action):
        world = self.server.world
        time.sleep(world.ha_ms / 1000.0)
        with world.lock:
            vm = world.vms[vmid]
            self.apply(vm, action, True)
            vm["ha"] = "stopped" if action == "stop" else "started"

    @staticmethod
    def apply(vm, action, skiplock):
        """Carries out `action` on `vm`; the task's error text or None."""
        vmid = vm["vmid"]
        if vm["lock"] and not skiplock:
            return "VM is locked (%s)" % vm["lock"]
        running = vm["status"] == "running"
        if action == "stop":
            if running:
                vm["status"], vm["qmpstatus"] = "stopped", "stopped" if vm["type"] == "qemu" else None
            return None
        if action == "start":
            if running:
                return "VM %d already running" % vmid
            vm["status"] = "running"
            vm["qmpstatus"] = "running" if vm["type"] == "qemu" else None
            if vm["lock"] == "suspended":
                vm["lock"], vm["vmstate"] = None, None  # resumed from the saved state
            return None
        if action == "reset":
            if not running:
                return "VM %d not running" % vmid
            vm["resets"] += 1
            vm["qmpstatus"] = "running"
            return None
        if action == "shutdown":
            if running:
                vm["status"], vm["qmpstatus"] = "stopped", "stopped"
            return None
        if action == "suspend":
            if not running:
                return "VM %d not running" % vmid
            vm["qmpstatus"] = "paused"
            return None
        if action == "resume":
            vm["qmpstatus"] = "running"
            return None
        return "unknown action"

    def task_status(self, node, upid):
        world = self.server.world
        with world.lock:
            t = world.tasks.get(upid)
            t = dict(t) if t else None
        if t is None or t["node"] != node:
            return self.fail(500, "unable to open file '/var/log/pve/tasks/active' - no such task")
        out = {k: t[k] for k in ("upid", "node", "type", "id", "user", "status", "pid", "starttime")}
        if t["status"] == "stopped":
            out["exitstatus"] = t["exitstatus"]
        self.send(200, out)

    # -- control ----------------------------------------------------------
    def control(self, method, path, q):
        world = self.server.world
        if method == "GET":
            return self.views(path, ("vms", "calls", "tasks"))
        try:
            count = int(q.get("count", "1"))
        except ValueError:
            return self.plain(400, {"error": "count is an integer"})
        with world.lock:
            if path == "/fencekit/vm":
                vm = world.vms.get(int(q.get("vmid", "0")))
                if vm is None:
                    return self.plain(400, {"error": "vmid= must name a guest"})
                for k in ("status", "qmpstatus", "lock", "ha", "node", "name"):
                    if k in q:
                        vm[k] = None if q[k] == "-" else q[k]
                if vm["lock"] == "suspended" and not vm["vmstate"]:
                    vm["vmstate"] = "local-lvm:vm-%d-state-hiber" % vm["vmid"]
                return self.plain(200, {"ok": True})
            if path == "/fencekit/node":
                if q.get("node") not in world.nodes:
                    return self.plain(400, {"error": "node= must name a node"})
                world.nodes[q["node"]] = q.get("online", "1") == "1"
                return self.plain(200, {"ok": True})
            if path == "/fencekit/task":
                ms = q.get("ms")
                world.task_knobs[q.get("action", "")] = {
                    "fail": q.get("fail"), "ms": int(ms) if ms else None, "count": count}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/drop":
                world.drop[q.get("action", "")] = {"count": count}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/throttle":
                ra = q.get("retry_after")
                world.throttle = {"count": count, "retry_after": int(ra) if ra else None}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/hang":
                world.hang = count
                return self.plain(200, {"ok": True})
            if path == "/fencekit/expire":
                world.expired.update(world.tickets.keys())
                if q.get("after"):
                    world.expire_after = int(q["after"])
                return self.plain(200, {"ok": True, "expired": len(world.expired)})
            if path == "/fencekit/echo":
                world.echo = q.get("on", "1") == "1"
                return self.plain(200, {"ok": True})
        if path == "/fencekit/reset":
            world.reset()
            return self.plain(200, {"ok": True})
        self.plain(404, {"error": "no such control"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    hvpeer.server_args(ap)
    ap.add_argument("--task-ms", type=int, default=150)
    ap.add_argument("--ha-ms", type=int, default=400)
    ap.add_argument("--token-secret", default=TOKEN_SECRET)
    a = ap.parse_args()
    hvpeer.serve(Handler, World(a.task_ms, a.ha_ms), a, lambda port: {
        "url": "https://%s:%d" % (a.bind, port), "host": a.bind, "port": port,
        "users": USERS, "token_id": TOKEN_ID, "token_secret": a.token_secret,
        "cert": a.cert, "pid": os.getpid()}, token_secret=a.token_secret)


if __name__ == "__main__":
    sys.exit(main())
