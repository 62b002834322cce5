#!/usr/bin/env python3
"""Serve Redfish trees captured from real BMCs with each vendor's behaviour.

An independent implementation (Python, standard library only), so that the
Rust client and fencekit's own lab cannot share a bug unnoticed. It serves the
trees in ../shared/vendors/ in place (read at start, never copied) and adds
what the captures cannot show: how each vendor family answers
ComputerSystem.Reset, no-op requests, requests during a power transition,
and reads during a transition. The facts, with their evidence, are in
shared/reference/vendors.md; this file names the row it follows.

    vendor_redfish.py SPEC.json

SPEC.json:
  {"trees": "/abs/shared/vendors", "cert": "cert.pem", "key": "key.pem",
   "user": "admin", "password": "...", "transition": 1.5,
   "instances": [{"port": 20001, "tree": "idrac9-r750", "profile": "idrac",
                  "system": "/redfish/v1/Systems/System.Embedded.1",
                  "power": "On", "scenario": null,
                  "log": "/tmp/x/20001.log", "state": "/tmp/x/20001.state"}]}

  profile:  idrac | ilo | xcc | smc | bmcweb | bmcweb204 | ami | ami-task
  scenario: null | "booting" | "shutting-down" (a transition that starts
            with the first request) | "stale" (the power flips, settled,
            right after the first read of the system: another actor)

Every instance listens on its "host" (default 127.0.0.1) and port (HTTPS). Each request is appended
to its log as one JSON line (method, path, status, ResetType), which is how
tests count POSTs; after every request the power state is written to the
state file as {"power": "On"|"Off", "phases": [[target, until_epoch], ...]}
(the settled state is the last phase's target once its time has passed).
Prints "ready" on stdout once every instance listens. Stops on SIGTERM.
"""

import base64
import http.server
import json
import os
import signal
import socketserver
import ssl
import sys
import threading
import time

# vendors.md: which families show PoweringOn/PoweringOff while a change is
# under way ("GET during a transition"); the others keep the old state.
SHOWS_TRANSITIONS = {"idrac", "ilo", "bmcweb", "bmcweb204"}
PROFILES = {"idrac", "ilo", "xcc", "smc", "bmcweb", "bmcweb204", "ami", "ami-task"}
STANDARD_TYPES = ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart",
                  "Nmi", "ForceOn", "PushPowerButton", "PowerCycle"]


def ext_error(code, message, infos):
    return {"error": {"code": code, "message": message, "@Message.ExtendedInfo": infos}}


# ---------------------------------------------------------------- answers --
# Each function returns (status, headers, body-or-None).

def success(profile):
    """vendors.md "success answer" column."""
    if profile == "ilo":
        # Captured iLO 5 transcript: 200 with an `error`-shaped Success body.
        return 200, {}, {"error": {"code": "iLO.0.10.ExtendedInfo",
                                   "message": "See @Message.ExtendedInfo for more information.",
                                   "@Message.ExtendedInfo": [{"MessageId": "Base.1.4.Success"}]}}
    if profile == "smc":
        # jgato random_docs, xcat-core PR#5910.
        return 200, {}, {"Success": {"code": "Base.v1_4_0.Success",
                                     "Message": "Successfully Completed Request."}}
    if profile == "bmcweb":
        # openbmc-test-automation: reset answers HTTP_OK with Base Success.
        return 200, {}, {"@Message.ExtendedInfo": [{
            "@odata.type": "#Message.v1_1_1.Message", "Message": "The request completed successfully.",
            "MessageArgs": [], "MessageId": "Base.1.16.0.Success", "MessageSeverity": "OK",
            "Resolution": "None"}]}
    # idrac, xcc, bmcweb204, ami: 204 No Content.
    return 204, {}, None


def already(profile, target_on):
    """The answer to a request that changes nothing (already in that state),
    or None when the family accepts it (vendors.md "On when on" column)."""
    if profile == "idrac":
        # dellemc-openmanage-ansible-modules#132 (PSU501); PSU502 assumed.
        mid, text = (("IDRAC.2.8.PSU501", "Server is already powered ON.") if target_on
                     else ("IDRAC.2.8.PSU502", "Server is already powered OFF."))
        return 409, {}, ext_error("Base.1.12.GeneralError",
                                  "A general error has occurred. See ExtendedInfo for more information",
                                  [{"Message": text, "MessageArgs": [], "MessageArgs@odata.count": 0,
                                    "MessageId": mid, "RelatedProperties": [],
                                    "RelatedProperties@odata.count": 0,
                                    "Resolution": "No response action is required.",
                                    "Severity": "Informational"}])
    if profile == "ilo":
        return ilo_refusal("Power is on" if target_on else "Power is off")
    return None


def ilo_refusal(reason):
    # Captured iLO 5 transcript and goldyfruit/ansible-ilo#1: the reason is
    # only in MessageArgs; there is no Message.
    return 400, {}, ext_error("iLO.0.10.ExtendedInfo", "See @Message.ExtendedInfo for more information.",
                              [{"MessageArgs": [reason],
                                "MessageId": "iLO.2.16.InvalidOperationForSystemState"}])


def not_in_list(profile, value):
    """A ResetType the system does not publish."""
    if profile in ("bmcweb", "bmcweb204"):
        # ibm-openbmc/bmcweb PR#157 (quirks.md 18).
        return 400, {}, ext_error("Base.1.16.0.ActionParameterNotSupported",
                                  "The parameter %s for the action ComputerSystem.Reset is not supported on the target resource." % value,
                                  [{"@odata.type": "#Message.v1_1_1.Message",
                                    "Message": "The parameter %s for the action ComputerSystem.Reset is not supported on the target resource." % value,
                                    "MessageArgs": [value, "ComputerSystem.Reset"],
                                    "MessageId": "Base.1.16.0.ActionParameterNotSupported",
                                    "MessageSeverity": "Warning",
                                    "Resolution": "Remove the parameter supplied and resubmit the request if the operation failed."}])
    if profile == "ilo":
        return 400, {}, ext_error("iLO.0.10.ExtendedInfo", "See @Message.ExtendedInfo for more information.",
                                  [{"MessageArgs": [value, "ResetType"],
                                    "MessageId": "Base.1.4.ActionParameterValueNotInList"}])
    # quadsproject/badfish#10 (iDRAC text); the others: the Base registry.
    text = ("Unable to complete the operation because the value %s entered for the property "
            "ResetType is not in the list of acceptable values." % value)
    return 400, {}, ext_error("Base.1.12.GeneralError",
                              "A general error has occurred. See ExtendedInfo for more information.",
                              [{"Message": text, "MessageArgs": [value, "ResetType"],
                                "MessageId": "Base.1.12.ActionParameterValueNotInList",
                                "Severity": "Warning"}])


def unauthorized(profile):
    body = ext_error("Base.1.12.GeneralError",
                     "A general error has occurred. See ExtendedInfo for more information.",
                     [{"Message": "There is no valid session established with the implementation.",
                       "MessageId": "Base.1.12.NoValidSession", "Severity": "Critical"}])
    return 401, {"WWW-Authenticate": 'Basic realm="%s"' % profile}, body


def not_found(path):
    return 404, {}, ext_error("Base.1.12.GeneralError",
                              "A general error has occurred. See ExtendedInfo for more information.",
                              [{"Message": "The requested resource of type %s was not found." % path,
                                "MessageId": "Base.1.12.ResourceMissingAtURI", "MessageArgs": [path]}])


# ------------------------------------------------------------------ model --

class Node:
    """The power of the fenced system: a settled state and queued phases."""

    def __init__(self, spec, transition):
        self.lock = threading.Lock()
        self.profile = spec["profile"]
        self.power = spec.get("power", "On") == "On"
        self.phases = []  # [(target_on, until)]
        self.t = float(transition)
        self.scenario = spec.get("scenario")
        self.started = False
        self.flipped = False
        self.tasks = {}
        self.next_task = 1

    def settle(self):
        now = time.time()
        while self.phases and self.phases[0][1] <= now:
            self.power = self.phases.pop(0)[0]

    def moving(self):
        self.settle()
        return bool(self.phases)

    def heading(self):
        return self.phases[-1][0] if self.phases else self.power

    def shown(self):
        """PowerState as the family reports it (vendors.md "GET during a transition")."""
        self.settle()
        if self.phases and self.profile in SHOWS_TRANSITIONS:
            return "PoweringOn" if self.phases[0][0] else "PoweringOff"
        return "On" if self.power else "Off"

    def begin(self):
        """Starts the scenario's transition with the first request."""
        if self.started:
            return
        self.started = True
        now = time.time()
        if self.scenario == "booting":
            self.power = False
            self.phases = [(True, now + self.t)]
        elif self.scenario == "shutting-down":
            self.power = True
            self.phases = [(False, now + self.t)]

    def go(self, phases):
        now = time.time()
        out, at = [], now
        for target, length in phases:
            at += length
            out.append((target, at))
        self.phases = out

    def snapshot(self):
        return {"power": "On" if self.power else "Off",
                "phases": [["On" if t else "Off", u] for t, u in self.phases]}

    def reset(self, rt):
        """Applies an accepted ResetType; returns the answer (vendors.md table)."""
        p = self.profile
        self.settle()
        moving = bool(self.phases)
        if moving and p == "ilo":
            # quirks.md 15, kubevirtbmc PR#220: refused during a transition.
            return ilo_refusal("Power transition in progress. Retry later")
        heading = self.heading()
        if rt in ("On", "ForceOn"):
            plan = [(True, self.t)]
            target = True
        elif rt in ("ForceOff", "Off"):
            plan = [(False, self.t)]
            target = False
        elif rt == "GracefulShutdown":
            plan = [(False, 3 * self.t)]
            target = False
        elif rt == "PushPowerButton":
            target = not heading
            plan = [(target, self.t)]
        elif rt in ("ForceRestart", "GracefulRestart", "PowerCycle"):
            if not moving and not self.power:
                refusal = already(p, False)
                if refusal:
                    return refusal  # iLO "Power is off"; iDRAC 409 (assumed)
                plan = [(True, self.t)]
            else:
                plan = [(False, self.t), (True, self.t)]
            target = None
        elif rt == "Nmi":
            return success(p)
        else:
            return not_in_list(p, rt)
        if target is not None and not moving and target == self.power:
            refusal = already(p, target)
            if refusal:
                return refusal
            plan = []  # accepted, nothing changes
        elif target is not None and moving and target == heading:
            plan = None  # already heading there
        if plan is not None:
            self.go(plan)
        if p == "ami-task":
            n = self.next_task
            self.next_task += 1
            self.tasks[n] = True
            uri = "/redfish/v1/TaskService/Tasks/%d" % n
            return 202, {"Location": uri}, task_body(uri, n, "Running")
        return success(p)

    def task(self, n):
        if n not in self.tasks:
            return None
        uri = "/redfish/v1/TaskService/Tasks/%d" % n
        # DSP0266 asynchronous operations: 202 while running, then the Task.
        if self.moving():
            return 202, {"Location": uri}, task_body(uri, n, "Running")
        return 200, {}, task_body(uri, n, "Completed")


def task_body(uri, n, state):
    return {"@odata.id": uri, "@odata.type": "#Task.v1_4_3.Task", "Id": str(n),
            "Name": "ComputerSystem.Reset", "TaskState": state,
            "TaskStatus": "OK", "TaskMonitor": uri}


# ---------------------------------------------------------------- service --

class Instance:
    def __init__(self, spec, cfg):
        self.spec = spec
        self.profile = spec["profile"]
        if self.profile not in PROFILES:
            raise SystemExit("unknown profile %s" % self.profile)
        self.user = cfg["user"]
        self.password = cfg["password"]
        self.node = Node(spec, cfg.get("transition", 1.5))
        self.log_path = spec["log"]
        self.state_path = spec["state"]
        self.fold = self.profile == "ilo"  # iLO matches URIs case-insensitively
        self.docs = {}
        root = os.path.join(cfg["trees"], spec["tree"])
        for d, _, files in os.walk(root):
            if "index.json" in files:
                uri = "/" + os.path.relpath(d, root).replace(os.sep, "/")
                with open(os.path.join(d, "index.json"), encoding="utf-8") as f:
                    self.docs[self.key(uri)] = json.load(f)
        self.system = self.key(spec["system"])
        sysdoc = self.docs[self.system]
        reset = sysdoc.get("Actions", {}).get("#ComputerSystem.Reset", {})
        self.reset_target = self.key(reset.get("target", spec["system"] + "/Actions/ComputerSystem.Reset"))
        allowed = reset.get("ResetType@Redfish.AllowableValues")
        if not allowed and reset.get("@Redfish.ActionInfo"):
            info = self.docs.get(self.key(reset["@Redfish.ActionInfo"]), {})
            for prm in info.get("Parameters", []):
                if prm.get("Name") == "ResetType":
                    allowed = prm.get("AllowableValues")
        self.allowed = allowed or STANDARD_TYPES
        rootdoc = self.docs.get(self.key("/redfish/v1"), {})
        sess = (rootdoc.get("Links", {}).get("Sessions", {}).get("@odata.id")
                or rootdoc.get("SessionService", {}).get("@odata.id", "/redfish/v1/SessionService") + "/Sessions")
        self.sessions_path = self.key(sess)
        self.tokens = {}
        self.next_session = 1
        self.lock = threading.Lock()

    def key(self, path):
        p = path.split("?", 1)[0].split("#", 1)[0].rstrip("/") or "/"
        return p.lower() if self.fold else p

    def authorized(self, headers):
        tok = headers.get("X-Auth-Token")
        if tok is not None:
            return tok in self.tokens
        h = headers.get("Authorization", "")
        if not h.lower().startswith("basic "):
            return False
        try:
            user, _, pw = base64.b64decode(h[6:].strip()).decode("utf-8").partition(":")
        except Exception:  # noqa: BLE001 - any garbage is "not authorized"
            return False
        return user == self.user and pw == self.password

    def handle(self, method, path, headers, body):
        """Returns (status, headers, body, reset_type)."""
        k = self.key(path)
        node = self.node
        with node.lock:
            node.begin()
            if method == "GET" and k in (self.key("/redfish/v1"), self.key("/redfish")):
                return (200, {}, self.docs.get(self.key("/redfish/v1"), {}), None)
            if method == "POST" and k == self.sessions_path:
                return self.login(body) + (None,)
            if not self.authorized(headers):
                return unauthorized(self.profile) + (None,)
            if method == "GET" and k == self.system:
                doc = dict(self.docs[self.system])
                doc["PowerState"] = node.shown()
                if node.scenario == "stale" and not node.flipped:
                    # Another actor changes the power right after this read.
                    node.flipped = True
                    node.power = not node.power
                    node.phases = []
                return (200, {}, doc, None)
            if method == "POST" and k == self.reset_target:
                try:
                    rt = json.loads(body.decode("utf-8")).get("ResetType")
                except Exception:  # noqa: BLE001
                    rt = None
                if not isinstance(rt, str):
                    return (400, {}, ext_error("Base.1.12.GeneralError", "ResetType is missing.",
                                               [{"MessageId": "Base.1.12.ActionParameterMissing",
                                                 "MessageArgs": ["ComputerSystem.Reset", "ResetType"]}]), rt)
                if rt not in self.allowed:
                    return not_in_list(self.profile, rt) + (rt,)
                return node.reset(rt) + (rt,)
            if method == "GET" and k.startswith(self.key("/redfish/v1/TaskService/Tasks/")):
                try:
                    ans = node.task(int(k.rsplit("/", 1)[1]))
                except ValueError:
                    ans = None
                return (ans or not_found(path)) + (None,)
            if method == "DELETE" and k.startswith(self.sessions_path + "/"):
                sid = k.rsplit("/", 1)[1]
                for tok, s in list(self.tokens.items()):
                    if s == sid:
                        del self.tokens[tok]
                        return (204, {}, None, None)
                return not_found(path) + (None,)
            if method == "GET" and k in self.docs:
                return (200, {}, self.docs[k], None)
            if k in self.docs:
                return (405, {"Allow": "GET"}, ext_error("Base.1.12.GeneralError", "Method not allowed.",
                                                         [{"MessageId": "Base.1.12.OperationNotAllowed"}]), None)
            return not_found(path) + (None,)

    def login(self, body):
        try:
            creds = json.loads(body.decode("utf-8"))
            ok = creds.get("UserName") == self.user and creds.get("Password") == self.password
        except Exception:  # noqa: BLE001
            ok = False
        if not ok:
            return unauthorized(self.profile)
        sid = str(self.next_session)
        self.next_session += 1
        tok = base64.b16encode(os.urandom(16)).decode().lower()
        self.tokens[tok] = sid
        uri = self.sessions_path + "/" + sid
        return 201, {"X-Auth-Token": tok, "Location": uri}, {
            "@odata.id": uri, "@odata.type": "#Session.v1_0_0.Session", "Id": sid,
            "Name": "User Session", "UserName": self.user}

    def record(self, method, path, status, rt):
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"t": round(time.time(), 3), "method": method, "path": path,
                                    "status": status, "reset": rt}) + "\n")
            with self.node.lock:
                snap = self.node.snapshot()
            tmp = self.state_path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(snap, f)
            os.replace(tmp, self.state_path)


def make_handler(inst):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "vendor-redfish"

        def log_message(self, *a):  # quiet: the JSON log is the record
            pass

        def serve(self, method):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n > 0 else b""
            status, headers, doc, rt = inst.handle(method, self.path, self.headers, body)
            # Recorded before the answer leaves: a client that exits on it
            # finds its request in the log.
            inst.record(method, self.path, status, rt)
            data = b"" if doc is None else json.dumps(doc).encode("utf-8")
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if doc is not None:
                self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("OData-Version", "4.0")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if data:
                self.wfile.write(data)

        def do_GET(self):
            self.serve("GET")

        def do_POST(self):
            self.serve("POST")

        def do_DELETE(self):
            self.serve("DELETE")

        def do_PATCH(self):
            self.serve("PATCH")

    return Handler


class TlsServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, handler, ctx):
        self.ctx = ctx
        super().__init__(addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        # The handshake happens in the handler's thread, on its first read,
        # so one slow client cannot hold the others up.
        return self.ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request, client_address):
        pass  # a client that hangs up is not news


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cfg = json.load(f)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cfg["cert"], cfg["key"])
    servers = []
    for spec in cfg["instances"]:
        inst = Instance(spec, cfg)
        srv = TlsServer((spec.get("host", "127.0.0.1"), spec["port"]), make_handler(inst), ctx)
        open(spec["log"], "a").close()
        with open(spec["state"], "w", encoding="utf-8") as f:
            json.dump(inst.node.snapshot(), f)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print("ready", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
