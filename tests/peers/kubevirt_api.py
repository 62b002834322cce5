#!/usr/bin/env python3
"""A KubeVirt / Kubernetes API server for fencekit's tests (loopback only).

No Kubernetes or KubeVirt can run on the test machines, so this serves the
part of the API a fencing agent uses, written from the Kubernetes and
KubeVirt API references (not from either project's code):

  discovery   GET /version, /api, /api/v1, /apis, /apis/kubevirt.io/v1,
              /apis/subresources.kubevirt.io/v1
  objects     GET /apis/kubevirt.io/v1/namespaces/NS/virtualmachines[/NAME]
              GET /apis/kubevirt.io/v1/namespaces/NS/virtualmachineinstances[/NAME]
              GET /api/v1/namespaces/NS/pods?labelSelector=K=V[,K=V]
              GET /api/v1/nodes[/NAME]
  subresources PUT /apis/subresources.kubevirt.io/v1/namespaces/NS/virtualmachines/NAME/
              start | stop (body {"gracePeriod": N}) | restart ({"gracePeriodSeconds": N})

Behaviour modelled:
  * HTTPS (the start script makes a CA and a certificate for 127.0.0.1) and
    bearer tokens: unknown or expired (rotated) tokens get 401; a token may
    be denied resources (e.g. pods, nodes) and then gets 403 naming the
    resource, verb and namespace as the API server words it.
  * runStrategy Always / RerunOnFailure / Manual / Halted / Once and the
    deprecated spec.running; start on Always/Once is refused (409 "Always
    does not support manual start requests"), stop when nothing runs is 409
    "VM is not running", start while a VMI runs is 409 "VM is already
    running", restart on Halted/Once is refused.
  * Stop: Always/Once/running become Halted (running=false); Manual and
    RerunOnFailure keep their strategy (a state change request). The VMI
    gets a deletionTimestamp and keeps its phase for the grace period
    (body gracePeriod, else the VMI's terminationGracePeriodSeconds,
    default from --grace), then it is Succeeded and its launcher pod is gone,
    then the VMI object is deleted. gracePeriod 0 stops at once (~0.2 s).
  * Start: a new VMI (new uid) goes Pending -> Scheduling -> Scheduled ->
    Running over --boot seconds, with its virt-launcher pod.
  * Phases can be pinned (control op "vm"), Paused is a condition on a
    Running VMI.
  * Node lost: the node's Ready condition becomes Unknown (or False); its
    kubelet no longer reports, so pods there keep their last phase and a
    deletion never completes (they stay Terminating), and a VMI on that node
    cannot finish stopping either (it keeps its deletionTimestamp); the VMI's
    phase is what the control op says (Failed, as virt-controller marks a
    VMI whose handler went silent, or Running).
  * 429 with Retry-After for the next N API requests; a hang mode in which
    API requests are never answered (until the mode is lifted).
  Not modelled: the VM controller restarting a failed VMI of its own accord.

  * A lying server (control op "lie"): reads about one VM answer another
    VM's VM, VMI or launcher pods (a selector ignored), after N honest
    reads; pod lists split into pages nobody asked for (op "page").

Control (no token; loopback): POST /fencekit/control with a JSON op, GET
/fencekit/state (objects and the request log).

usage: kubevirt_api.py --port PORT --cert server.pem --key key.pem [--grace S] [--boot S]
"""

import argparse
import copy
import json
import ssl
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LOCK = threading.RLock()


def now():
    return time.time()


def stamp(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class World:
    def __init__(self, grace, boot, port):
        self.default_grace = grace
        self.boot = boot
        self.port = port
        self.reset()

    def reset(self):
        self.tokens = {}  # token -> {"state": valid|expired, "forbid": [resources], "user": ...}
        self.nodes = {}  # name -> {"ready": "True"|"False"|"Unknown"}
        self.vms = {}  # (ns, name) -> vm record
        self.namespaces = set()
        self.throttle = 0
        self.retry_after = 1
        self.hang = False
        self.lies = {}  # (ns, name) -> {"vm_as", "vmi_as", "pods_as", "after"}: a lying server
        self.gateway = {}  # verb -> N: the next N are carried out and answered 504
        self.page = 0  # > 0: pod lists split into pages of this many, unasked
        self.log = []
        self.rv = 1000

    def lie(self, ns, name, what):
        """The VM whose object a read of NAME's `what` answers instead, or None."""
        lie = self.lies.get((ns, name))
        if lie is None or what not in lie:
            return None
        if lie["after"] > 0:
            lie["after"] -= 1
            return None
        return lie[what]

    # --- records -------------------------------------------------------
    def add_vm(self, op):
        ns, name = op["namespace"], op["name"]
        self.namespaces.add(ns)
        vm = {
            "ns": ns,
            "name": name,
            "uid": op.get("uid") or str(uuid.uuid4()),
            "runStrategy": op.get("runStrategy"),
            "running": op.get("running"),
            "fw_uuid": op.get("firmware_uuid") or str(uuid.uuid4()),
            "grace": op.get("grace", self.default_grace),
            "node": op.get("node", "worker-0"),
            "created": now(),
            "vmi": None,
            "pods": [],
            "pending": None,  # a requested state change: "start" | "stop"
        }
        if vm["runStrategy"] is None and vm["running"] is None:
            vm["runStrategy"] = "Always"
        self.nodes.setdefault(vm["node"], {"ready": "True"})
        self.vms[(ns, name)] = vm
        phase = op.get("phase", "Running" if self.wants_running(vm) else None)
        if phase:
            self.make_vmi(vm, settled=phase, paused=op.get("paused", False))
        return vm

    def strategy(self, vm):
        if vm["running"] is not None:
            return "Always" if vm["running"] else "Halted"
        return vm["runStrategy"]

    def wants_running(self, vm):
        return self.strategy(vm) in ("Always", "RerunOnFailure", "Once")

    def make_vmi(self, vm, settled=None, paused=False, node=None):
        t = now()
        vmi = {
            "uid": str(uuid.uuid4()),
            "created": t,
            "node": node or vm["node"],
            "phase": settled,  # None: follows the boot timeline
            "boot_at": t,
            "paused": paused,
            "deleting": None,  # {"at": t, "done": t_done}
            "grace": vm["grace"],
        }
        vm["vmi"] = vmi
        pod = {
            "name": "virt-launcher-%s-%s" % (vm["name"], vmi["uid"][:5]),
            "uid": str(uuid.uuid4()),
            "node": vmi["node"],
            "phase": "Running" if settled not in (None, "Pending", "Scheduling") else "Pending",
            "deleting": None,
            "vmi_uid": vmi["uid"],
            "created": t,
        }
        if settled in ("Succeeded", "Failed"):
            pod["phase"] = settled
        vm["pods"] = [pod]

    def node_ready(self, name):
        return self.nodes.get(name, {}).get("ready", "Unknown") == "True"

    # --- time ----------------------------------------------------------
    def tick(self):
        t = now()
        for vm in self.vms.values():
            vmi = vm["vmi"]
            # Pods on a node whose kubelet reports: deletions complete; a
            # booting VMI's pod runs once scheduled.
            for pod in list(vm["pods"]):
                if not self.node_ready(pod["node"]):
                    continue
                if pod["deleting"] is not None and t >= pod["deleting"]:
                    vm["pods"].remove(pod)
                elif pod["phase"] == "Pending" and vmi and vmi["uid"] == pod["vmi_uid"]:
                    if self.vmi_phase(vmi, t) in ("Scheduled", "Running"):
                        pod["phase"] = "Running"
            if vmi is None:
                continue
            d = vmi["deleting"]
            if d is not None and self.node_ready(vmi["node"]):
                if t >= d["done"] and vmi["phase"] not in ("Succeeded", "Failed"):
                    vmi["phase"] = "Succeeded"
                    for pod in vm["pods"]:
                        if pod["vmi_uid"] == vmi["uid"]:
                            pod["phase"] = "Succeeded"
                            pod["deleting"] = pod["deleting"] or t
                if t >= d["done"] + 0.3 and not any(
                    p["vmi_uid"] == vmi["uid"] for p in vm["pods"]
                ):
                    vm["vmi"] = None
                    if d.get("then") == "start":
                        self.make_vmi(vm)
                    continue
            elif d is not None and not self.node_ready(vmi["node"]):
                # A deletion on a node that does not report never completes.
                pass
            # A finished VMI of a VM that wants it running (Manual,
            # RerunOnFailure after Succeeded, Halted): stays until deleted.

    def vmi_phase(self, vmi, t=None):
        if vmi["phase"] is not None:
            return vmi["phase"]
        t = t or now()
        f = (t - vmi["boot_at"]) / max(self.boot, 0.001)
        if f < 0.3:
            return "Pending"
        if f < 0.6:
            return "Scheduling"
        if f < 1.0:
            return "Scheduled"
        vmi["phase"] = "Running"
        return "Running"

    # --- objects -------------------------------------------------------
    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def vm_object(self, vm):
        vmi = vm["vmi"]
        spec = {
            "template": {
                "metadata": {"labels": {"kubevirt.io/vm": vm["name"]}},
                "spec": {
                    "domain": {
                        "firmware": {"uuid": vm["fw_uuid"]},
                        "devices": {},
                        "resources": {"requests": {"memory": "1Gi"}},
                    },
                    "terminationGracePeriodSeconds": vm["grace"],
                },
            }
        }
        if vm["running"] is not None:
            spec["running"] = vm["running"]
        else:
            spec["runStrategy"] = vm["runStrategy"]
        phase = self.vmi_phase(vmi) if vmi else None
        if vmi is None:
            printable = "Stopped"
        elif vmi["deleting"] is not None:
            printable = "Stopping"
        elif phase == "Running" and vmi["paused"]:
            printable = "Paused"
        elif phase == "Running":
            printable = "Running"
        elif phase in ("Pending", "Scheduling", "Scheduled"):
            printable = "Starting"
        elif phase in ("Succeeded",):
            printable = "Stopped"
        elif phase == "Failed":
            printable = "CrashLoopBackOff" if self.wants_running(vm) else "Stopped"
        else:
            printable = "Unknown"
        status = {
            "printableStatus": printable,
            "created": vmi is not None,
            "ready": bool(vmi and phase == "Running" and vmi["deleting"] is None),
        }
        if vm["running"] is None:
            status["runStrategy"] = vm["runStrategy"]
        return {
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {
                "name": vm["name"],
                "namespace": vm["ns"],
                "uid": vm["uid"],
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": stamp(vm["created"]),
            },
            "spec": spec,
            "status": status,
        }

    def vmi_object(self, vm):
        vmi = vm["vmi"]
        phase = self.vmi_phase(vmi)
        conds = []
        if phase == "Running":
            conds.append(
                {
                    "type": "Ready",
                    "status": "False" if vmi["paused"] or vmi["deleting"] else "True",
                    "lastTransitionTime": stamp(vmi["created"]),
                }
            )
            if vmi["paused"]:
                conds.append(
                    {
                        "type": "Paused",
                        "status": "True",
                        "reason": "PausedByUser",
                        "message": "VMI was paused by user",
                        "lastTransitionTime": stamp(vmi["created"]),
                    }
                )
        meta = {
            "name": vm["name"],
            "namespace": vm["ns"],
            "uid": vmi["uid"],
            "resourceVersion": self.next_rv(),
            "creationTimestamp": stamp(vmi["created"]),
            "labels": {"kubevirt.io/vm": vm["name"]},
            "ownerReferences": [
                {
                    "apiVersion": "kubevirt.io/v1",
                    "kind": "VirtualMachine",
                    "name": vm["name"],
                    "uid": vm["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "finalizers": ["kubevirt.io/virtualMachineControllerFinalize", "foregroundDeleteVirtualMachine"],
        }
        status = {"phase": phase, "conditions": conds}
        if phase not in ("Pending", "Scheduling"):
            meta["labels"]["kubevirt.io/nodeName"] = vmi["node"]
            status["nodeName"] = vmi["node"]
            status["activePods"] = {
                p["uid"]: p["node"] for p in vm["pods"] if p["vmi_uid"] == vmi["uid"]
            }
        if vmi["deleting"] is not None:
            meta["deletionTimestamp"] = stamp(vmi["deleting"]["at"])
            meta["deletionGracePeriodSeconds"] = vmi["grace"]
        return {
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstance",
            "metadata": meta,
            "spec": {
                "domain": {"firmware": {"uuid": vm["fw_uuid"]}, "devices": {}},
                "terminationGracePeriodSeconds": vmi["grace"],
            },
            "status": status,
        }

    def pod_object(self, vm, pod):
        meta = {
            "name": pod["name"],
            "namespace": vm["ns"],
            "uid": pod["uid"],
            "resourceVersion": self.next_rv(),
            "creationTimestamp": stamp(pod["created"]),
            "labels": {
                "kubevirt.io": "virt-launcher",
                "kubevirt.io/created-by": pod["vmi_uid"],
                "vm.kubevirt.io/name": vm["name"],
                "kubevirt.io/domain": vm["name"],
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubevirt.io/v1",
                    "kind": "VirtualMachineInstance",
                    "name": vm["name"],
                    "uid": pod["vmi_uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        if pod["deleting"] is not None:
            meta["deletionTimestamp"] = stamp(pod["deleting"])
            meta["deletionGracePeriodSeconds"] = 0
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"nodeName": pod["node"], "containers": [{"name": "compute"}]},
            "status": {"phase": pod["phase"]},
        }

    def node_object(self, name):
        n = self.nodes[name]
        ready = n["ready"]
        reason = {"True": "KubeletReady", "False": "KubeletNotReady"}.get(ready, "NodeStatusUnknown")
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": n.setdefault("uid", str(uuid.uuid4())),
                         "resourceVersion": self.next_rv()},
            "spec": {},
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": ready,
                        "reason": reason,
                        "message": "Kubelet stopped posting node status." if ready == "Unknown" else "",
                        "lastHeartbeatTime": stamp(now()),
                    }
                ],
                "nodeInfo": {"systemUUID": n.setdefault("system_uuid", str(uuid.uuid4()))},
            },
        }

    # --- subresources ----------------------------------------------------
    def stop(self, vm, body):
        vmi = vm["vmi"]
        grace = body.get("gracePeriod") if isinstance(body, dict) else None
        strategy = self.strategy(vm)
        live = vmi is not None and self.vmi_phase(vmi) not in ("Succeeded", "Failed")
        if strategy == "Halted":
            if vmi is None or grace is None:
                return 409, "VM is not running"
        elif strategy in ("Manual", "RerunOnFailure") and not live:
            if vmi is None:
                return 409, "VM is not running"
        if vm["running"] is not None:
            vm["running"] = False
        elif strategy in ("Always", "Once"):
            vm["runStrategy"] = "Halted"
        if vmi is not None:
            self.delete_vmi(vm, grace)
        return 202, None

    def delete_vmi(self, vm, grace, then=None):
        vmi = vm["vmi"]
        t = now()
        g = vmi["grace"] if grace is None else int(grace)
        vmi["grace"] = g
        done = t + (0.2 if g == 0 else g)
        if vmi["deleting"] is None:
            vmi["deleting"] = {"at": t, "done": done, "then": then}
        else:
            # A second request may only shorten the wait (a force stop).
            vmi["deleting"]["done"] = min(vmi["deleting"]["done"], done)
            vmi["deleting"]["then"] = then or vmi["deleting"].get("then")
        for pod in vm["pods"]:
            if pod["vmi_uid"] == vmi["uid"] and pod["deleting"] is None:
                pod["deleting"] = done + 0.1
        if self.vmi_phase(vmi) in ("Succeeded", "Failed") and self.node_ready(vmi["node"]):
            vmi["deleting"]["done"] = t

    def start(self, vm):
        strategy = self.strategy(vm)
        vmi = vm["vmi"]
        if strategy in ("Always", "Once") and vm["running"] is None:
            return 409, "%s does not support manual start requests" % strategy
        if vm["running"] is True:
            return 409, "VM is already running"
        if vmi is not None and vmi["deleting"] is None and self.vmi_phase(vmi) not in ("Succeeded", "Failed"):
            return 409, "VM is already running"
        if vm["running"] is not None:
            vm["running"] = True
        elif strategy == "Halted":
            vm["runStrategy"] = "Always"
        if vmi is None:
            self.make_vmi(vm)
        elif vmi["deleting"] is not None:
            vmi["deleting"]["then"] = "start"
        else:
            # A finished VMI is replaced.
            vm["vmi"] = None
            vm["pods"] = []
            self.make_vmi(vm)
        return 202, None

    def restart(self, vm, body):
        strategy = self.strategy(vm)
        grace = body.get("gracePeriodSeconds") if isinstance(body, dict) else None
        if strategy in ("Halted", "Once"):
            return 409, "%s does not support manual restart requests" % strategy
        vmi = vm["vmi"]
        if vmi is None:
            return 409, "VM is not running"
        if grace not in (None, 0):
            return 400, "For force restart, only gracePeriod=0 is supported for now"
        self.delete_vmi(vm, grace, then="start")
        return 202, None


WORLD = None


def status_body(code, reason, message, details=None):
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": details or {},
        "code": code,
    }


REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           405: "MethodNotAllowed", 409: "Conflict", 429: "TooManyRequests"}

DISCOVERY_KV = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "kubevirt.io/v1",
    "resources": [
        {"name": "virtualmachines", "singularName": "virtualmachine", "namespaced": True,
         "kind": "VirtualMachine", "shortNames": ["vm", "vms"],
         "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]},
        {"name": "virtualmachines/status", "singularName": "", "namespaced": True,
         "kind": "VirtualMachine", "verbs": ["get", "patch", "update"]},
        {"name": "virtualmachineinstances", "singularName": "virtualmachineinstance",
         "namespaced": True, "kind": "VirtualMachineInstance", "shortNames": ["vmi", "vmis"],
         "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]},
    ],
}
DISCOVERY_SUB = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "subresources.kubevirt.io/v1",
    "resources": [
        {"name": "virtualmachines/start", "singularName": "", "namespaced": True, "kind": "", "verbs": ["update"]},
        {"name": "virtualmachines/stop", "singularName": "", "namespaced": True, "kind": "", "verbs": ["update"]},
        {"name": "virtualmachines/restart", "singularName": "", "namespaced": True, "kind": "", "verbs": ["update"]},
    ],
}
DISCOVERY_CORE = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "shortNames": ["po"],
         "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]},
        {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node", "shortNames": ["no"],
         "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]},
        {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
         "shortNames": ["ns"], "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
    ],
}


def group(name, version="v1"):
    gv = {"groupVersion": "%s/%s" % (name, version), "version": version}
    return {"name": name, "versions": [gv], "preferredVersion": gv}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fencekit-kubevirt-peer"
    # Headers and body go out in separate writes: without TCP_NODELAY (Go's
    # default, so the API server's) Nagle and delayed ACKs add ~40 ms to
    # every answer.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet; the request log is in /fencekit/state
        pass

    def send_json(self, code, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        return code

    def fail(self, code, message, details=None, extra=None):
        return self.send_json(code, status_body(code, REASONS.get(code, "Unknown"), message, details), extra)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        if not raw:
            return raw, None
        try:
            return raw, json.loads(raw)
        except ValueError:
            return raw, "unparsable"

    def do_GET(self):
        self.handle_any("GET")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def handle_any(self, method):
        url = urlsplit(self.path)
        raw, body = self.read_body()
        if url.path.startswith("/fencekit/"):
            return self.control(method, url.path, body)
        t0 = now()
        entry = {"t": t0, "method": method, "path": url.path, "query": url.query,
                 "body": body if body != "unparsable" else raw.decode("latin-1")}
        with LOCK:
            WORLD.log.append(entry)
            hang = WORLD.hang
        if hang:
            entry["status"] = "hung"
            limit = t0 + 600
            while now() < limit:
                with LOCK:
                    if not WORLD.hang:
                        break
                time.sleep(0.05)
            self.close_connection = True
            return
        with LOCK:
            code = self.api(method, url, body)
            entry["status"] = code

    # --- the API -----------------------------------------------------------
    def auth(self, verb, resource, ns, group_name):
        h = self.headers.get("Authorization", "")
        if not h.startswith("Bearer "):
            return self.fail(401, "Unauthorized")
        tok = WORLD.tokens.get(h[len("Bearer "):].strip())
        if tok is None or tok["state"] != "valid":
            return self.fail(401, "Unauthorized")
        if resource and (resource in tok["forbid"] or "*" in tok["forbid"]):
            where = ' in the namespace "%s"' % ns if ns else " at the cluster scope"
            return self.fail(
                403,
                '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s"%s'
                % (resource, tok["user"], verb, resource, group_name, where),
                {"kind": resource.split("/")[0], "group": group_name},
            )
        return None

    def api(self, method, url, body):
        WORLD.tick()
        p = [s for s in url.path.split("/") if s]
        q = parse_qs(url.query)
        if WORLD.throttle > 0:
            WORLD.throttle -= 1
            return self.fail(429, "Too many requests, please try again later.",
                             {"retryAfterSeconds": WORLD.retry_after},
                             {"Retry-After": str(WORLD.retry_after)})
        # Discovery (any authenticated user).
        disc = {
            "version": {"major": "1", "minor": "30", "gitVersion": "v1.30.4", "platform": "linux/amd64",
                        "goVersion": "go1.22.5", "compiler": "gc", "buildDate": "2024-08-14T00:00:00Z",
                        "gitCommit": "0" * 40, "gitTreeState": "clean"},
            "api": {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": "127.0.0.1:%d" % WORLD.port}]},
            "api/v1": DISCOVERY_CORE,
            "apis": {"kind": "APIGroupList", "apiVersion": "v1",
                     "groups": [group("kubevirt.io"), group("subresources.kubevirt.io")]},
            "apis/kubevirt.io": {"kind": "APIGroup", "apiVersion": "v1", **group("kubevirt.io")},
            "apis/kubevirt.io/v1": DISCOVERY_KV,
            "apis/subresources.kubevirt.io": {"kind": "APIGroup", "apiVersion": "v1",
                                              **group("subresources.kubevirt.io")},
            "apis/subresources.kubevirt.io/v1": DISCOVERY_SUB,
        }
        key = "/".join(p)
        if key in disc:
            if method != "GET":
                return self.fail(405, "method not allowed")
            denied = self.auth("get", None, None, "")
            if denied:
                return denied
            return self.send_json(200, disc[key])
        # /apis/kubevirt.io/v1/namespaces/NS/(virtualmachines|virtualmachineinstances)[/NAME]
        if len(p) >= 6 and p[:3] == ["apis", "kubevirt.io", "v1"] and p[3] == "namespaces":
            ns, res = p[4], p[5]
            name = p[6] if len(p) > 6 else None
            if res not in ("virtualmachines", "virtualmachineinstances") or len(p) > 7:
                return self.fail(404, "the server could not find the requested resource")
            if method != "GET":
                return self.fail(405, "method not allowed")
            denied = self.auth("get" if name else "list", res, ns, "kubevirt.io")
            if denied:
                return denied
            kind = "VirtualMachine" if res == "virtualmachines" else "VirtualMachineInstance"
            if name is None:
                items = []
                for (vns, _), vm in sorted(WORLD.vms.items()):
                    if vns != ns:
                        continue
                    if res == "virtualmachines":
                        items.append(WORLD.vm_object(vm))
                    elif vm["vmi"] is not None:
                        items.append(WORLD.vmi_object(vm))
                return self.send_json(200, {"apiVersion": "kubevirt.io/v1", "kind": kind + "List",
                                            "metadata": {"resourceVersion": WORLD.next_rv()}, "items": items})
            vm = WORLD.vms.get((ns, name))
            lie = WORLD.lie(ns, name, "vm_as" if res == "virtualmachines" else "vmi_as")
            if lie is not None:
                vm = WORLD.vms[(ns, lie)]
            if vm is None or (res == "virtualmachineinstances" and vm["vmi"] is None):
                return self.fail(404, '%s.kubevirt.io "%s" not found' % (res, name),
                                 {"name": name, "group": "kubevirt.io", "kind": res})
            obj = WORLD.vm_object(vm) if res == "virtualmachines" else WORLD.vmi_object(vm)
            return self.send_json(200, obj)
        # Subresources.
        if (len(p) == 8 and p[:3] == ["apis", "subresources.kubevirt.io", "v1"] and p[3] == "namespaces"
                and p[5] == "virtualmachines"):
            ns, name, verb = p[4], p[6], p[7]
            if verb not in ("start", "stop", "restart"):
                return self.fail(404, "the server could not find the requested resource")
            if method != "PUT":
                return self.fail(405, "method not allowed")
            denied = self.auth("update", "virtualmachines/" + verb, ns, "subresources.kubevirt.io")
            if denied:
                return denied
            if body == "unparsable":
                return self.fail(400, "Can not unmarshal Request body to struct")
            vm = WORLD.vms.get((ns, name))
            if vm is None:
                return self.fail(404, 'virtualmachine.kubevirt.io "%s" not found' % name,
                                 {"name": name, "group": "kubevirt.io", "kind": "virtualmachine"})
            gateway = WORLD.gateway.get(verb, 0)
            if gateway > 0:
                WORLD.gateway[verb] = gateway - 1
            if verb == "start":
                code, why = WORLD.start(vm)
            elif verb == "stop":
                code, why = WORLD.stop(vm, body or {})
            else:
                code, why = WORLD.restart(vm, body or {})
            if why:
                return self.fail(code, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "%s": %s'
                                 % (name, why), {"name": name, "group": "kubevirt.io", "kind": "virtualmachine"})
            if gateway > 0:
                # Carried out, but the gateway in front gave up waiting.
                return self.fail(504, "Gateway Timeout")
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return 202
        # Pods.
        if len(p) == 5 and p[:2] == ["api", "v1"] and p[2] == "namespaces" and p[4] == "pods":
            ns = p[3]
            if method != "GET":
                return self.fail(405, "method not allowed")
            denied = self.auth("list", "pods", ns, "")
            if denied:
                return denied
            sel = {}
            for part in (q.get("labelSelector", [""])[0]).split(","):
                if "=" in part:
                    k, v = part.split("=", 1)
                    sel[k.rstrip("=").rstrip("!")] = v.lstrip("=")
            items = []
            liar = WORLD.lie(ns, sel.get("vm.kubevirt.io/name"), "pods_as")
            for (vns, vname), vm in sorted(WORLD.vms.items()):
                if vns != ns:
                    continue
                for pod in vm["pods"]:
                    o = WORLD.pod_object(vm, pod)
                    if liar is not None:
                        # A server that ignores the selector: another VM's pods.
                        if vname == liar:
                            items.append(o)
                    elif all(o["metadata"]["labels"].get(k) == v for k, v in sel.items()):
                        items.append(o)
            meta = {"resourceVersion": WORLD.next_rv()}
            if WORLD.page > 0:
                # Pages nobody asked for (no limit= was sent): continue=N is the offset.
                start = int(q.get("continue", ["0"])[0] or 0)
                if start + WORLD.page < len(items):
                    meta["continue"] = str(start + WORLD.page)
                items = items[start:start + WORLD.page]
            return self.send_json(200, {"apiVersion": "v1", "kind": "PodList",
                                        "metadata": meta, "items": items})
        # Nodes.
        if len(p) in (3, 4) and p[:3] == ["api", "v1", "nodes"]:
            if method != "GET":
                return self.fail(405, "method not allowed")
            name = p[3] if len(p) == 4 else None
            denied = self.auth("get" if name else "list", "nodes", None, "")
            if denied:
                return denied
            if name is None:
                return self.send_json(200, {"apiVersion": "v1", "kind": "NodeList", "metadata": {},
                                            "items": [WORLD.node_object(n) for n in sorted(WORLD.nodes)]})
            if name not in WORLD.nodes:
                return self.fail(404, 'nodes "%s" not found' % name, {"name": name, "kind": "nodes"})
            return self.send_json(200, WORLD.node_object(name))
        denied = self.auth("get", None, None, "")
        if denied:
            return denied
        return self.fail(404, "the server could not find the requested resource")

    # --- control -----------------------------------------------------------
    def control(self, method, path, body):
        with LOCK:
            WORLD.tick()
            if path == "/fencekit/state" and method == "GET":
                vms = {}
                for (ns, name), vm in WORLD.vms.items():
                    v = copy.deepcopy(vm)
                    v["vm_object"] = WORLD.vm_object(vm)
                    v["vmi_object"] = WORLD.vmi_object(vm) if vm["vmi"] else None
                    vms["%s/%s" % (ns, name)] = v
                return self.send_json(200, {"vms": vms, "nodes": WORLD.nodes, "log": WORLD.log,
                                            "now": now()})
            if path != "/fencekit/control" or method != "POST" or not isinstance(body, dict):
                return self.send_json(400, {"error": "POST /fencekit/control with a JSON op"})
            try:
                out = self.apply(body)
            except (KeyError, ValueError, TypeError) as e:
                return self.send_json(400, {"error": "%s: %s" % (type(e).__name__, e)})
            return self.send_json(200, out or {"ok": True})

    def apply(self, op):
        kind = op["op"]
        if kind == "reset":
            WORLD.reset()
            if "grace" in op:
                WORLD.default_grace = op["grace"]
            if "boot" in op:
                WORLD.boot = op["boot"]
        elif kind == "token":
            WORLD.tokens[op["token"]] = {"state": op.get("state", "valid"), "forbid": op.get("forbid", []),
                                         "user": op.get("user", "system:serviceaccount:fencing:fencer")}
        elif kind == "node":
            WORLD.nodes.setdefault(op["name"], {})["ready"] = op.get("ready", "True")
            if "system_uuid" in op:
                WORLD.nodes[op["name"]]["system_uuid"] = op["system_uuid"]
        elif kind == "vm":
            vm = WORLD.add_vm(op)
            return {"uid": vm["uid"], "firmware_uuid": vm["fw_uuid"],
                    "vmi_uid": vm["vmi"]["uid"] if vm["vmi"] else None}
        elif kind == "vmi":
            # Change the VMI of a VM: phase, paused, node.
            vm = WORLD.vms[(op["namespace"], op["name"])]
            if vm["vmi"] is None:
                WORLD.make_vmi(vm, settled=op.get("phase", "Running"))
            vmi = vm["vmi"]
            if "phase" in op:
                vmi["phase"] = op["phase"]
            if "paused" in op:
                vmi["paused"] = op["paused"]
        elif kind == "pod":
            vm = WORLD.vms[(op["namespace"], op["name"])]
            if op.get("add"):
                # A second launcher of the same VMI (a migration target, a stuck pod).
                extra = dict(vm["pods"][0], uid=str(uuid.uuid4()), phase=op.get("add_phase", "Running"),
                             deleting=None)
                extra["name"] = extra["name"] + "-b"
                vm["pods"].append(extra)
                return None
            for pod in vm["pods"]:
                if "phase" in op:
                    pod["phase"] = op["phase"]
                if op.get("terminating"):
                    pod["deleting"] = pod["deleting"] or now() + 3600
        elif kind == "node_lost":
            # The node stops reporting; what virt-controller made of its VMIs is op's phase.
            node = op["node"]
            WORLD.nodes.setdefault(node, {})["ready"] = op.get("ready", "Unknown")
            for vm in WORLD.vms.values():
                if vm["vmi"] is not None and vm["vmi"]["node"] == node and "vmi_phase" in op:
                    vm["vmi"]["phase"] = op["vmi_phase"]
        elif kind == "throttle":
            WORLD.throttle = int(op.get("count", 1))
            WORLD.retry_after = int(op.get("retry_after", 1))
        elif kind == "hang":
            WORLD.hang = bool(op.get("on", True))
        elif kind == "lie":
            # Reads about NAME answer another VM's objects (after `after` honest reads):
            # vm_as (the VM), vmi_as (the VMI), pods_as (the pod list, selector ignored).
            WORLD.lies[(op["namespace"], op["name"])] = {
                k: op[k] for k in ("vm_as", "vmi_as", "pods_as") if k in op}
            WORLD.lies[(op["namespace"], op["name"])]["after"] = int(op.get("after", 0))
        elif kind == "gateway":
            WORLD.gateway[op["verb"]] = int(op.get("count", 1))
        elif kind == "page":
            WORLD.page = int(op.get("size", 1))
        elif kind == "clear_log":
            WORLD.log = []
        else:
            raise ValueError("unknown op " + kind)
        return None


def main():
    global WORLD
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--grace", type=int, default=180, help="default terminationGracePeriodSeconds")
    ap.add_argument("--boot", type=float, default=1.0, help="seconds from a new VMI to Running")
    a = ap.parse_args()
    WORLD = World(a.grace, a.boot, a.port)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    # The handshake runs in the request thread (a client that never completes it
    # holds only its own thread).
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    print("kubevirt peer on https://127.0.0.1:%d" % a.port, file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
