#!/usr/bin/env python3
"""fencekit's Nutanix Prism Central peer: the v4 APIs fence_nutanix_ahv speaks,
written from Nutanix's v4 API reference (vmm v4.0, prism v4.0, clustermgmt v4.0),
for the newest upstream fence_nutanix_ahv (requests) and fencekit.

Every request: HTTP Basic (admin / nutanix-secret may power; viewer /
viewer-secret may only read: 403). Errors in the v4 shape:
  {"data": {"$objectType": "...error.ErrorResponse", "error": [{"message", "code",
   "severity": "ERROR", "$objectType": "...AppMessage"}]}}

  GET  /api/vmm/v4.0/ahv/config/vms[?$filter=F][&$limit=N][&$page=P]
       F: name eq 'x' | startswith(name,'x') | name in ('a','b') (quotes doubled inside)
       -> {"data": [vm...], "metadata": {"totalAvailableResults": N}}; no "data" when none
  GET  /api/vmm/v4.0/ahv/config/vms/EXTID -> {"data": vm}, header ETag; 404 unknown
  POST /api/vmm/v4.0/ahv/config/vms/EXTID/$actions/ACTION   ACTION: power-on, power-off,
       power-cycle, reset, shutdown, guest-shutdown, reboot, guest-reboot
       headers If-Match: the VM's ETag (none: 428; another: 412) and NTNX-Request-Id (none:
       400; one already seen: the same task again, nothing done twice)
       -> 202 {"data": {"$objectType": "prism.v4.config.TaskReference", "extId": TASK}}
  GET  /api/prism/v4.0/config/tasks/TASK -> {"data": {"extId", "status": QUEUED | RUNNING |
       SUCCEEDED | FAILED | CANCELED, "progressPercentage", "entitiesAffected": [{"extId",
       "rel": "vmm:ahv:config:vm"}], "errorMessages": [{"message"}], "operation"}}
  GET  /api/clustermgmt/v4.0/config/clusters/CLUSTER/hosts/HOST -> {"data": {"extId",
       "hostName", "hypervisor": {"acropolisConnectionState": CONNECTED | DISCONNECTED,
       "state": "ACROPOLIS_NORMAL"}}}

vm: {"extId", "name", "powerState": ON | OFF | PAUSED | SUSPENDED | UNDETERMINED,
     "biosUuid", "host": {"extId"} (while placed), "cluster": {"extId"}}.
A task runs --task-ms (default 150 ms: QUEUED, then RUNNING), then SUCCEEDED with
its effect, or FAILED: power-on of an ON VM, power-off of an OFF one, power-cycle or
reset of a VM that is not ON ("INVALID_STATE ..."). ACPI actions (shutdown, reboot)
only change a VM whose guest answers (none here: they fail).

The inventory: hosts h1, h2 connected, h3 disconnected (its VMs' last report
stays); VMs node1 ON, node2 ON, node3 OFF, paused PAUSED, suspended SUSPENDED,
undetermined UNDETERMINED, stale OFF on h3, stale-on ON on h3, twin ON twice.

Test control, no authentication (a loopback test peer):
  GET  /fencekit/vms | /fencekit/calls | /fencekit/tasks
  POST /fencekit/vm?name=N&power=STATE[&host=H|-]
  POST /fencekit/host?host=H&connected=0|1
  POST /fencekit/task?action=A[&outcome=FAILED|CANCELED][&ms=N][&count=N]
  POST /fencekit/drop?action=A[&count=N]      carried out, the answer lost
  POST /fencekit/conflict?action=A[&count=N]  409: another operation holds the VM
  POST /fencekit/lie?count=N                  a VM read by extId names another BIOS UUID
  POST /fencekit/throttle?count=N[&retry_after=S][&what=get|post|all]   429s
  POST /fencekit/hang?count=N                 requests never answered
  POST /fencekit/reset

Run: nutanix_api.py --port P --cert C --key K [--bind ADDR] [--info FILE] [--log FILE]
Prints one JSON line (url, host, port, user, password, cert, pid) when it serves.
"""
import argparse
import base64
import copy
import json
import os
import re
import sys
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import hvpeer

USERS = {"admin": "nutanix-secret", "viewer": "viewer-secret"}
CLUSTER = "0005f1a2-b3c4-4d5e-8f60-718293a4b5c6"
HOSTS = {"h1": True, "h2": True, "h3": False}
INVENTORY = [
    ("node1", "ON", "h1"), ("node2", "ON", "h2"), ("node3", "OFF", None),
    ("paused", "PAUSED", "h1"), ("suspended", "SUSPENDED", "h1"),
    ("undetermined", "UNDETERMINED", "h1"), ("stale", "OFF", "h3"),
    ("stale-on", "ON", "h3"), ("twin", "ON", "h1"), ("twin", "ON", "h2"),
]
ACTIONS = ("power-on", "power-off", "power-cycle", "reset", "shutdown", "guest-shutdown",
           "reboot", "guest-reboot")
VMS = "/api/vmm/v4.0/ahv/config/vms"
TASKS = "/api/prism/v4.0/config/tasks/"
HOSTS_PATH = re.compile(r"/api/clustermgmt/v4\.0/config/clusters/([^/]+)/hosts/([^/]+)")


def host_id(h):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "nutanix/host/" + h))


def build():
    vms = {}
    for i, (name, power, host) in enumerate(INVENTORY):
        ext = str(uuid.uuid5(uuid.NAMESPACE_URL, "nutanix/vm/%d" % i))
        vms[ext] = {"extId": ext, "name": name, "powerState": power, "host": host,
                    "biosUuid": str(uuid.uuid5(uuid.NAMESPACE_URL, "nutanix/bios/%d" % i)),
                    "version": 1}
    return vms


class World:
    def __init__(self, task_ms):
        self.lock = threading.RLock()
        self.task_ms = task_ms
        self.reset()

    def reset(self):
        with self.lock:
            self.vms = build()
            self.hosts = dict(HOSTS)
            self.tasks = {}
            self.request_ids = {}
            self.knobs = {}
            self.drop = {}
            self.conflict = {}
            self.lie = 0
            self.throttle = {"count": 0, "retry_after": None, "what": "all"}
            self.hang = 0
            self.calls = {}

    def take(self, table, action):
        with self.lock:
            k = table.get(action)
            if not k or k["count"] == 0:
                return None
            if k["count"] > 0:
                k["count"] -= 1
            return dict(k)


def odata_filter(f):
    """A predicate for the $filter forms fence_nutanix_ahv documents."""
    def unq(s):
        return s[1:-1].replace("''", "'")
    f = f.strip()
    m = re.fullmatch(r"name\s+eq\s+('(?:[^']|'')*')", f)
    if m:
        want = unq(m.group(1))
        return lambda vm: vm["name"] == want
    m = re.fullmatch(r"startswith\(\s*name\s*,\s*('(?:[^']|'')*')\s*\)", f)
    if m:
        pre = unq(m.group(1))
        return lambda vm: vm["name"].startswith(pre)
    m = re.fullmatch(r"name\s+in\s+\((.*)\)", f)
    if m:
        names = {unq(x.strip()) for x in re.findall(r"'(?:[^']|'')*'", m.group(1))}
        return lambda vm: vm["name"] in names
    return None


class Handler(hvpeer.Handler):
    # One write per answer, sent at once (as a real server does): without these
    # the body waits behind the headers for the client's delayed ACK (~40 ms).
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    server_version = "envoy"

    def send(self, status, body, headers=()):
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def error(self, status, code, message, ns="vmm"):
        self.send(status, {"data": {"$objectType": "%s.v4.error.ErrorResponse" % ns, "error": [
            {"$objectType": "%s.v4.error.AppMessage" % ns, "message": message, "severity": "ERROR",
             "code": code, "locale": "en_US"}]}})

    def count(self, shape):
        with self.server.world.lock:
            c = self.server.world.calls
            c[shape] = c.get(shape, 0) + 1

    def user(self):
        h = self.headers.get("Authorization", "")
        if not h.lower().startswith("basic "):
            return None
        try:
            u, _, p = base64.b64decode(h[6:].strip()).decode().partition(":")
        except Exception:
            return None
        return u if USERS.get(u) == p else None

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def route(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        u = urlsplit(self.path)
        path = u.path.rstrip("/")
        q = {k: v[0] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
        if path.startswith("/fencekit/"):
            return self.control(method, path, q)
        shape = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "{id}", path)
        shape = re.sub(r"/tasks/[^/]+", "/tasks/{task}", shape)
        self.count("%s %s" % (method, shape))
        world = self.server.world
        with world.lock:
            hang = world.hang > 0
            if hang:
                world.hang -= 1
            t = world.throttle
            thr = t["count"] > 0 and t["what"] in ("all", method.lower())
            if thr:
                t["count"] -= 1
        if hang:
            time.sleep(60)
            self.close_connection = True
            return
        if thr:
            hdr = [("Retry-After", str(t["retry_after"]))] if t["retry_after"] is not None else []
            return self.send(429, {"data": {"error": [{"message": "Too many requests",
                                                        "code": "GW-429"}]}}, hdr)
        user = self.user()
        if user is None:
            return self.send(401, {"data": {"error": [{"message": "Authentication required.",
                                                        "code": "IAM-401"}]}},
                             [("WWW-Authenticate", 'Basic realm="Intent Gateway"')])
        if method == "GET" and path == VMS:
            return self.list_vms(q)
        m = re.fullmatch(re.escape(VMS) + r"/([^/]+)", path)
        if m and method == "GET":
            return self.get_vm(m.group(1))
        m = re.fullmatch(re.escape(VMS) + r"/([^/]+)/\$actions/([a-z-]+)", path)
        if m and method == "POST" and m.group(2) in ACTIONS:
            return self.action(user, m.group(1), m.group(2))
        if method == "GET" and path.startswith(TASKS):
            return self.task(path[len(TASKS):])
        m = HOSTS_PATH.fullmatch(path)
        if m and method == "GET":
            return self.host(m.group(1), m.group(2))
        self.error(404, "GW-404", "No such path: %s %s" % (method, path), "prism")

    def view(self, vm):
        out = {"$objectType": "vmm.v4.ahv.config.Vm", "extId": vm["extId"], "name": vm["name"],
               "powerState": vm["powerState"], "biosUuid": vm["biosUuid"],
               "cluster": {"extId": CLUSTER}, "numSockets": 1, "memorySizeBytes": 2147483648}
        if vm["host"]:
            out["host"] = {"extId": host_id(vm["host"])}
        return out

    def list_vms(self, q):
        world = self.server.world
        pred = lambda vm: True
        if "$filter" in q:
            pred = odata_filter(q["$filter"])
            if pred is None:
                return self.error(400, "VMM-40000", "Invalid $filter: %s" % q["$filter"])
        try:
            limit = int(q.get("$limit", "50"))
            page = int(q.get("$page", "0"))
        except ValueError:
            return self.error(400, "VMM-40001", "Invalid $limit or $page")
        if not 1 <= limit <= 100:
            return self.error(400, "VMM-40002", "$limit must be between 1 and 100")
        with world.lock:
            hits = [self.view(v) for v in world.vms.values() if pred(v)]
        body = {"metadata": {"totalAvailableResults": len(hits), "flags": [
            {"name": "hasError", "value": False}]}, "$objectType": "List"}
        part = hits[page * limit:(page + 1) * limit]
        if part:
            body["data"] = part
        self.send(200, body)

    def etag(self, vm):
        return 'W/"%s:%d"' % (vm["extId"][:8], vm["version"])

    def get_vm(self, ext):
        with self.server.world.lock:
            vm = copy.deepcopy(self.server.world.vms.get(ext))
        if vm is None:
            return self.error(404, "VMM-30303", "VM with extId %s was not found." % ext)
        with self.server.world.lock:
            lie = self.server.world.lie > 0
            if lie:
                self.server.world.lie -= 1
        if lie:
            vm["biosUuid"] = str(uuid.uuid4())
        self.send(200, {"data": self.view(vm)}, [("ETag", self.etag(vm))])

    def host(self, cluster, ext):
        with self.server.world.lock:
            names = [h for h in self.server.world.hosts if host_id(h) == ext]
            connected = self.server.world.hosts.get(names[0]) if names else None
        if cluster != CLUSTER or not names:
            return self.error(404, "CLU-10004", "Host %s was not found." % ext, "clustermgmt")
        self.send(200, {"data": {"$objectType": "clustermgmt.v4.config.Host", "extId": ext,
                                 "hostName": names[0], "cluster": {"uuid": CLUSTER},
                                 "hypervisor": {"type": "AHV", "state": "ACROPOLIS_NORMAL",
                                                "acropolisConnectionState":
                                                    "CONNECTED" if connected else "DISCONNECTED"}}})

    def action(self, user, ext, action):
        world = self.server.world
        with world.lock:
            vm = world.vms.get(ext)
            if vm is None:
                return self.error(404, "VMM-30303", "VM with extId %s was not found." % ext)
            etag = self.etag(vm)
        if user == "viewer":
            return self.error(403, "VMM-30100", "User viewer is not authorized to perform "
                              "%s on the VM." % action)
        rid = self.headers.get("NTNX-Request-Id")
        if not rid:
            return self.error(400, "VMM-40010", "NTNX-Request-Id header is required.")
        match = self.headers.get("If-Match")
        if not match:
            return self.error(428, "VMM-40012", "If-Match header is required.")
        with world.lock:
            if rid in world.request_ids:
                return self.send(202, {"data": {"$objectType": "prism.v4.config.TaskReference",
                                                "extId": world.request_ids[rid]}})
        if match != etag:
            return self.error(412, "VMM-40013", "The VM was changed since it was read (ETag %s)."
                              % etag)
        if world.take(world.conflict, action):
            return self.error(409, "VMM-30409", "Another operation is in progress on VM %s."
                              % ext)
        knob = world.take(world.knobs, action) or {}
        task = "ZXJnb24=:" + str(uuid.uuid4())
        with world.lock:
            world.request_ids[rid] = task
            world.tasks[task] = {"extId": task, "status": "QUEUED", "progressPercentage": 0,
                                 "operation": "Vm" + action.title().replace("-", ""),
                                 "entitiesAffected": [{"extId": ext, "rel": "vmm:ahv:config:vm"}],
                                 "errorMessages": [], "createdTime": time.time()}
        ms = knob.get("ms") if knob.get("ms") is not None else world.task_ms
        threading.Thread(target=self.run_task, daemon=True,
                         args=(task, ext, action, knob.get("outcome"), ms)).start()
        if world.take(world.drop, action):
            self.close_connection = True
            return
        self.send(202, {"data": {"$objectType": "prism.v4.config.TaskReference", "extId": task}})

    def run_task(self, task, ext, action, outcome, ms):
        world = self.server.world
        time.sleep(ms / 2000.0)
        with world.lock:
            world.tasks[task]["status"] = "RUNNING"
            world.tasks[task]["progressPercentage"] = 50
        time.sleep(ms / 2000.0)
        with world.lock:
            t = world.tasks[task]
            vm = world.vms[ext]
            err = None
            if outcome == "CANCELED":
                t["status"] = "CANCELED"
                return
            if outcome == "FAILED":
                err = "Simulated failure of %s." % action
            else:
                err = self.apply(vm, action)
            if err:
                t["status"] = "FAILED"
                t["errorMessages"] = [{"message": err, "code": "VMM-20005"}]
            else:
                t["status"] = "SUCCEEDED"
                t["progressPercentage"] = 100
                vm["version"] += 1

    @staticmethod
    def apply(vm, action):
        s = vm["powerState"]
        if action == "power-on":
            if s == "ON":
                return "INVALID_STATE: the VM is already powered on."
            vm["powerState"], vm["host"] = "ON", vm["host"] or "h1"
        elif action == "power-off":
            if s == "OFF":
                return "INVALID_STATE: the VM is already powered off."
            vm["powerState"], vm["host"] = "OFF", None
        elif action in ("power-cycle", "reset"):
            if s != "ON":
                return "INVALID_STATE: the VM is not powered on."
        else:
            return "GUEST_TOOLS: the guest does not answer ACPI or guest requests."
        return None

    def task(self, ext):
        with self.server.world.lock:
            t = copy.deepcopy(self.server.world.tasks.get(ext))
        if t is None:
            return self.error(404, "PRISM-50404", "Task %s was not found." % ext, "prism")
        t["$objectType"] = "prism.v4.config.Task"
        t.pop("createdTime", None)
        self.send(200, {"data": t})

    def control(self, method, path, q):
        world = self.server.world
        if method == "GET":
            return self.views(path, ("vms", "calls", "tasks"))
        count = int(q.get("count", "1"))
        with world.lock:
            if path == "/fencekit/vm":
                hits = [v for v in world.vms.values() if v["name"] == q.get("name")]
                if len(hits) != 1:
                    return self.plain(400, {"error": "name= must name one VM"})
                if "power" in q:
                    hits[0]["powerState"] = q["power"]
                if "host" in q:
                    hits[0]["host"] = None if q["host"] == "-" else q["host"]
                hits[0]["version"] += 1
                return self.plain(200, {"ok": True})
            if path == "/fencekit/host":
                world.hosts[q.get("host", "")] = q.get("connected", "1") == "1"
                return self.plain(200, {"ok": True})
            if path == "/fencekit/task":
                ms = q.get("ms")
                world.knobs[q.get("action", "")] = {"outcome": q.get("outcome"),
                                                    "ms": int(ms) if ms else None, "count": count}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/lie":
                world.lie = count
                return self.plain(200, {"ok": True})
            if path == "/fencekit/conflict":
                world.conflict[q.get("action", "")] = {"count": count}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/drop":
                world.drop[q.get("action", "")] = {"count": count}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/throttle":
                ra = q.get("retry_after")
                world.throttle = {"count": count, "retry_after": int(ra) if ra else None,
                                  "what": q.get("what", "all")}
                return self.plain(200, {"ok": True})
            if path == "/fencekit/hang":
                world.hang = count
                return self.plain(200, {"ok": True})
        if path == "/fencekit/reset":
            world.reset()
            return self.plain(200, {"ok": True})
        self.plain(404, {"error": "no such control"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    hvpeer.server_args(ap, port=9440)
    ap.add_argument("--task-ms", type=int, default=150)
    a = ap.parse_args()
    hvpeer.serve(Handler, World(a.task_ms), a, lambda port: {
        "url": "https://%s:%d" % (a.bind, port), "host": a.bind, "port": port,
        "user": "admin", "password": USERS["admin"], "cluster": CLUSTER,
        "cert": a.cert, "pid": os.getpid()})


if __name__ == "__main__":
    sys.exit(main())
