#!/usr/bin/env python3
"""fencekit's vSphere Automation API peer: a vCenter REST server written from
VMware's API reference, for the REST agent (fence_vmware_rest) and its
upstream counterpart. vcsim's own REST side cannot power VMs.

Both API generations, with their own shapes:

  /rest (6.5+)                               /api (7.0 U2+)
  POST   /rest/com/vmware/cis/session        POST   /api/session
         basic auth -> 200 {"value": ID}            basic auth -> 201 "ID"
  DELETE /rest/com/vmware/cis/session 200    DELETE /api/session 204
  GET    /rest/com/vmware/cis/session        GET    /api/session
  GET    /rest/vcenter/vm?filter.names=N     GET    /api/vcenter/vm?names=N
         -> {"value": [summary, ...]}               -> [summary, ...]
  GET    /rest/vcenter/vm/VM                 GET    /api/vcenter/vm/VM
  GET    /rest/vcenter/vm/VM/power           GET    /api/vcenter/vm/VM/power
         -> {"value": {"state": S}}                 -> {"state": S}
  POST   /rest/vcenter/vm/VM/power/ACTION    POST   /api/vcenter/vm/VM/power?action=ACTION
         -> 200, empty                              -> 204
  errors {"type": "com.vmware.vapi.std.errors.not_found",
          "value": {"messages": [...]}}      errors {"error_type": "NOT_FOUND", "messages": [...]}

summary: {"vm", "name", "power_state", "cpu_count", "memory_size_MiB"};
states POWERED_ON, POWERED_OFF, SUSPENDED; actions start, stop, reset, suspend
(stop of an off VM: already_in_desired_state; reset or suspend of a VM that is
not on: not_allowed_in_current_state); list filters names, vms, power_states,
hosts, clusters, datacenters, folders, resource_pools (filter.X under /rest);
more than 1000 matches: unable_to_allocate_resource. Other requests need the
session header vmware-api-session-id (401 unauthenticated otherwise); the user
"viewer" may read but not power (403 unauthorized). Power operations answer when
done, as the API's are synchronous.

The inventory (see INVENTORY): node1, node2 on; node3 off; node4 suspended;
"twin" twice (two datacenters); --bulk N adds N more (bulk-0000 ...).

Test control, no authentication (a loopback test peer):
  GET  /fencekit/vms                     every VM with its state, host, datacenter, uuids
  POST /fencekit/vm?vm=NAME|ID&power=POWERED_ON|POWERED_OFF|SUSPENDED
  POST /fencekit/slow?action=stop&delay_ms=N[&count=N]   the next power ACTION
                                          answers after N ms (the state changes at the end)
  POST /fencekit/fail?action=stop&status=500[&count=N]   the next ACTION fails with STATUS
  POST /fencekit/drop?action=stop[&count=N]   the next ACTION is carried out, and the
                                          connection closed without an answer (a lost answer)
  POST /fencekit/echo?on=1               401 answers quote the credentials the request
                                          carried (Authorization, vmware-api-session-id), as
                                          a careless proxy or debug build does
  GET  /fencekit/sessions                every session id issued, and those still open
  GET  /fencekit/calls                   requests served, by "METHOD path-shape"
  POST /fencekit/reset                   inventory, sessions and knobs as at start

Run: vsphere_rest.py --port P --cert C --key K [--user U --password P] [--info FILE]
Prints one JSON line (url, port, user, password, cert, pid) when it serves.
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
from urllib.parse import parse_qs, urlsplit

import hvpeer

STATES = ("POWERED_ON", "POWERED_OFF", "SUSPENDED")
LIST_LIMIT = 1000

INVENTORY = [
    # name, state, datacenter, host, cluster
    ("node1", "POWERED_ON", "datacenter-1", "host-11", "domain-c7"),
    ("node2", "POWERED_ON", "datacenter-1", "host-12", "domain-c7"),
    ("node3", "POWERED_OFF", "datacenter-1", "host-11", "domain-c7"),
    ("node4", "SUSPENDED", "datacenter-1", "host-12", "domain-c7"),
    ("twin", "POWERED_ON", "datacenter-1", "host-11", "domain-c7"),
    ("twin", "POWERED_ON", "datacenter-2", "host-21", "domain-c9"),
]


def build_inventory(bulk):
    vms = {}
    rows = list(INVENTORY) + [
        ("bulk-%04d" % i, "POWERED_ON", "datacenter-2", "host-21", "domain-c9")
        for i in range(bulk)
    ]
    for i, (name, state, dc, host, cluster) in enumerate(rows):
        vm_id = "vm-%d" % (101 + i)
        vms[vm_id] = {
            "vm": vm_id,
            "name": name,
            "power_state": state,
            "cpu_count": 1,
            "memory_size_MiB": 1024,
            "datacenter": dc,
            "host": host,
            "cluster": cluster,
            "folder": "group-v%d" % (3 if dc == "datacenter-1" else 4),
            "resource_pool": "resgroup-%d" % (8 if dc == "datacenter-1" else 10),
            "bios_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, "bios/" + vm_id)),
            "instance_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, "instance/" + vm_id)),
        }
    return vms


class World:
    def __init__(self, users, bulk):
        self.lock = threading.Lock()
        self.users = users
        self.bulk = bulk
        self.reset()

    def reset(self):
        with self.lock:
            self.vms = build_inventory(self.bulk)
            self.sessions = {}
            self.slow = {}
            self.fail = {}
            self.drop = {}
            self.echo = False
            self.issued = []
            self.calls = {}

    def take(self, table, action):
        with self.lock:
            k = table.get(action)
            if not k or k["count"] == 0:
                return None
            if k["count"] > 0:
                k["count"] -= 1
            return dict(k)


# Messages and ids as the API reference names them.
ERRORS = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "unauthorized",
    404: "not_found",
    500: "internal_server_error",
    503: "service_unavailable",
}


class Handler(hvpeer.Handler):
    server_version = "fencekit-vsphere-rest"

    # -- answers --------------------------------------------------------
    def send(self, status, body=None, ctype="application/json"):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if data:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    def error(self, api, status, kind, message, msg_id, args=()):
        """An error as each API generation returns it: kind is the std error
        in lower case (not_found, already_in_desired_state, ...)."""
        messages = [{"args": list(args), "default_message": message, "id": msg_id}]
        if api == "rest":
            self.send(status, {"type": "com.vmware.vapi.std.errors." + kind,
                               "value": {"messages": messages}})
        else:
            self.send(status, {"error_type": kind.upper(), "messages": messages})

    # -- plumbing -------------------------------------------------------
    def count(self, shape):
        with self.server.world.lock:
            c = self.server.world.calls
            c[shape] = c.get(shape, 0) + 1

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def basic_user(self):
        h = self.headers.get("Authorization", "")
        if not h.lower().startswith("basic "):
            return None
        try:
            user, _, password = base64.b64decode(h[6:].strip()).decode().partition(":")
        except Exception:
            return None
        if self.server.world.users.get(user) == password:
            return user
        return None

    def session_user(self):
        sid = self.headers.get("vmware-api-session-id")
        if not sid:
            return None, None
        with self.server.world.lock:
            s = self.server.world.sessions.get(sid)
        return (sid, s) if s else (None, None)

    def unauthenticated(self, api):
        msg = "Authentication required."
        if self.server.world.echo:
            msg += " You sent Authorization: %s; vmware-api-session-id: %s" % (
                self.headers.get("Authorization", "-"),
                self.headers.get("vmware-api-session-id", "-"))
        self.error(api, 401, "unauthenticated", msg,
                   "com.vmware.vapi.endpoint.method.authentication.required")

    # -- routing --------------------------------------------------------
    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")

    def do_PATCH(self):
        self.route("PATCH")

    def route(self, method):
        self.body()
        u = urlsplit(self.path)
        path, query = u.path.rstrip("/") or "/", parse_qs(u.query, keep_blank_values=True)
        if path.startswith("/fencekit/"):
            return self.control(method, path, query)
        if path.startswith("/rest/"):
            api, rest = "rest", path[len("/rest"):]
        elif path.startswith("/api/"):
            api, rest = "api", path[len("/api"):]
        else:
            return self.send(404, {"error": "no such path"})
        shape = re.sub(r"/vm-\d+|/[^/]*vm-[^/]*", "/{vm}", rest)
        self.count("%s /%s%s" % (method, api, shape))

        session_path = "/com/vmware/cis/session" if api == "rest" else "/session"
        if rest == session_path:
            return self.session(api, method)

        sid, user = self.session_user()
        if user is None:
            return self.unauthenticated(api)

        m = re.fullmatch(r"/vcenter/vm", rest)
        if m and method == "GET":
            return self.list_vms(api, query)
        m = re.fullmatch(r"/vcenter/vm/([^/]+)", rest)
        if m and method == "GET":
            return self.get_vm(api, m.group(1))
        m = re.fullmatch(r"/vcenter/vm/([^/]+)/power", rest)
        if m and method == "GET":
            return self.get_power(api, m.group(1))
        if api == "api" and m and method == "POST":
            action = (query.get("action") or [""])[0]
            return self.power(api, user, m.group(1), action)
        m = re.fullmatch(r"/vcenter/vm/([^/]+)/power/([a-z]+)", rest)
        if api == "rest" and m and method == "POST":
            return self.power(api, user, m.group(1), m.group(2))
        self.error(api, 404, "not_found", "Operation not found.",
                   "com.vmware.vapi.rest.httpNotFound")

    def session(self, api, method):
        world = self.server.world
        if method == "POST":
            # Basic credentials create a session; an existing session id does not.
            user = self.basic_user()
            if user is None:
                return self.unauthenticated(api)
            sid = secrets.token_hex(16)
            with world.lock:
                world.sessions[sid] = user
                world.issued.append(sid)
            if api == "rest":
                return self.send(200, {"value": sid})
            return self.send(201, sid)
        sid, user = self.session_user()
        if user is None:
            return self.unauthenticated(api)
        if method == "DELETE":
            with world.lock:
                world.sessions.pop(sid, None)
            return self.send(200 if api == "rest" else 204)
        if method == "GET":
            info = {"user": "VSPHERE.LOCAL\\" + user,
                    "created_time": "2026-01-01T00:00:00.000Z",
                    "last_accessed_time": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}
            return self.send(200, {"value": info} if api == "rest" else info)
        self.error(api, 404, "not_found", "Operation not found.",
                   "com.vmware.vapi.rest.httpNotFound")

    @staticmethod
    def summary(vm):
        return {k: vm[k] for k in ("memory_size_MiB", "vm", "name", "power_state", "cpu_count")}

    def list_vms(self, api, query):
        prefix = "filter." if api == "rest" else ""
        fields = {"names": "name", "vms": "vm", "power_states": "power_state",
                  "hosts": "host", "clusters": "cluster", "datacenters": "datacenter",
                  "folders": "folder", "resource_pools": "resource_pool"}
        wanted = {}
        for key, values in query.items():
            if not key.startswith(prefix):
                continue
            name = key[len(prefix):]
            if name not in fields:
                continue
            vals = set()
            for v in values:
                vals.update(x for x in v.split(",") if x) if api == "api" else vals.add(v)
            if name == "power_states":
                bad = [v for v in vals if v not in STATES]
                if bad:
                    return self.error(api, 400, "invalid_argument",
                                      "Invalid value '%s' for power_states." % bad[0],
                                      "vapi.bindings.typeconverter.invalid.enum", [bad[0]])
            wanted[fields[name]] = vals
        with self.server.world.lock:
            out = [self.summary(vm) for vm in self.server.world.vms.values()
                   if all(vm[f] in vals for f, vals in wanted.items())]
        if len(out) > LIST_LIMIT:
            return self.error(api, 400, "unable_to_allocate_resource",
                              "Too many virtual machines. Add more filter criteria to reduce the number.",
                              "com.vmware.api.vcenter.vm.max_vms_exceeded", [str(LIST_LIMIT)])
        return self.send(200, {"value": out} if api == "rest" else out)

    def find(self, api, vm_id):
        with self.server.world.lock:
            vm = self.server.world.vms.get(vm_id)
            vm = copy.deepcopy(vm) if vm else None
        if vm is None:
            self.error(api, 404, "not_found",
                       "Virtual machine with identifier '%s' does not exist." % vm_id,
                       "com.vmware.api.vcenter.vm.not_found", [vm_id])
        return vm

    def get_vm(self, api, vm_id):
        vm = self.find(api, vm_id)
        if vm is None:
            return
        info = {
            "name": vm["name"], "power_state": vm["power_state"],
            "cpu": {"count": 1, "cores_per_socket": 1, "hot_add_enabled": False,
                    "hot_remove_enabled": False},
            "memory": {"size_MiB": 1024, "hot_add_enabled": False},
            "guest_OS": "OTHER_LINUX_64",
            "identity": {"name": vm["name"], "bios_uuid": vm["bios_uuid"],
                         "instance_uuid": vm["instance_uuid"]},
        }
        self.send(200, {"value": info} if api == "rest" else info)

    def get_power(self, api, vm_id):
        vm = self.find(api, vm_id)
        if vm is None:
            return
        info = {"state": vm["power_state"]}
        if vm["power_state"] == "POWERED_OFF":
            info["clean_power_off"] = True
        self.send(200, {"value": info} if api == "rest" else info)

    def power(self, api, user, vm_id, action):
        if action not in ("start", "stop", "reset", "suspend"):
            return self.error(api, 400, "invalid_argument",
                              "Invalid action '%s'." % action,
                              "vapi.method.input.invalid", [action])
        if self.find(api, vm_id) is None:
            return
        if user == "viewer":
            return self.error(api, 403, "unauthorized",
                              "Permission to perform this operation was denied.",
                              "vapi.security.authorization.invalid")
        world = self.server.world
        fail = world.take(world.fail, action)
        if fail:
            kind = ERRORS.get(fail["status"], "error")
            return self.error(api, fail["status"], kind, "Simulated failure.",
                              "com.vmware.fencekit.simulated", [])
        slow = world.take(world.slow, action)
        if slow:
            time.sleep(slow["delay_ms"] / 1000.0)
        with world.lock:
            vm = world.vms[vm_id]
            state = vm["power_state"]
            err = None
            if action == "start":
                if state == "POWERED_ON":
                    err = ("already_in_desired_state", "Virtual machine is already powered on.",
                           "com.vmware.api.vcenter.vm.power.already_powered_on")
                else:
                    vm["power_state"] = "POWERED_ON"
            elif action == "stop":
                if state == "POWERED_OFF":
                    err = ("already_in_desired_state", "Virtual machine is already powered off.",
                           "com.vmware.api.vcenter.vm.power.already_powered_off")
                else:
                    vm["power_state"] = "POWERED_OFF"
            elif action == "reset":
                if state != "POWERED_ON":
                    err = ("not_allowed_in_current_state",
                           "Virtual machine is not powered on.",
                           "com.vmware.api.vcenter.vm.power.not_powered_on")
            elif action == "suspend":
                if state == "SUSPENDED":
                    err = ("already_in_desired_state", "Virtual machine is already suspended.",
                           "com.vmware.api.vcenter.vm.power.already_suspended")
                elif state != "POWERED_ON":
                    err = ("not_allowed_in_current_state",
                           "Virtual machine is not powered on.",
                           "com.vmware.api.vcenter.vm.power.not_powered_on")
                else:
                    vm["power_state"] = "SUSPENDED"
        if err:
            return self.error(api, 400, err[0], err[1], err[2], [vm_id])
        if world.take(world.drop, action):
            # Carried out; the answer is lost on the way back.
            self.close_connection = True
            return
        self.send(200 if api == "rest" else 204)

    # -- control --------------------------------------------------------
    def control(self, method, path, query):
        world = self.server.world
        q = {k: v[0] for k, v in query.items()}
        if path == "/fencekit/vms" and method == "GET":
            with world.lock:
                return self.send(200, list(world.vms.values()))
        if path == "/fencekit/calls" and method == "GET":
            with world.lock:
                return self.send(200, dict(world.calls))
        if path == "/fencekit/sessions" and method == "GET":
            with world.lock:
                return self.send(200, {"issued": list(world.issued),
                                       "open": list(world.sessions)})
        if method != "POST":
            return self.send(400, {"error": "POST expected"})
        if path == "/fencekit/vm":
            with world.lock:
                hits = [v for v in world.vms.values() if q.get("vm") in (v["vm"], v["name"])]
                if len(hits) != 1 or q.get("power") not in STATES:
                    return self.send(400, {"error": "vm= must name one VM, power= one of %s" % (STATES,)})
                hits[0]["power_state"] = q["power"]
            return self.send(200, {"ok": True})
        if path in ("/fencekit/slow", "/fencekit/fail", "/fencekit/drop"):
            try:
                k = {"count": int(q.get("count", "1")),
                     "delay_ms": int(q.get("delay_ms", "0")),
                     "status": int(q.get("status", "500"))}
            except ValueError:
                return self.send(400, {"error": "count, delay_ms and status are integers"})
            with world.lock:
                table = {"/fencekit/slow": world.slow, "/fencekit/fail": world.fail,
                         "/fencekit/drop": world.drop}[path]
                table[q.get("action", "")] = k
            return self.send(200, {"ok": True})
        if path == "/fencekit/echo":
            with world.lock:
                world.echo = q.get("on", "1") == "1"
            return self.send(200, {"ok": True})
        if path == "/fencekit/reset":
            world.reset()
            return self.send(200, {"ok": True})
        self.send(404, {"error": "no such control"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--plain", action="store_true", help="HTTP, no TLS")
    ap.add_argument("--info", help="also write the JSON line to this file")
    ap.add_argument("--log", help="request log file")
    ap.add_argument("--user", default="fence")
    ap.add_argument("--password", default="rest-secret")
    ap.add_argument("--bulk", type=int, default=0, help="extra VMs bulk-0000 ...")
    a = ap.parse_args()
    users = {a.user: a.password, "viewer": "viewer-secret"}
    hvpeer.serve(Handler, World(users, a.bulk), a, lambda port: {
        "url": "%s://127.0.0.1:%d" % ("http" if a.plain else "https", port),
        "host": "127.0.0.1", "port": port, "user": a.user,
        "password": a.password, "viewer": "viewer", "viewer_password": "viewer-secret",
        "cert": a.cert, "pid": os.getpid()}, bind="127.0.0.1", tls=not a.plain)


if __name__ == "__main__":
    sys.exit(main())
