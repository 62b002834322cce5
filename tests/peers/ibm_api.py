#!/usr/bin/env python3
"""IBM Cloud's IAM token endpoint, the VPC API (instances), the Power Cloud
API (pvm-instances of a workspace) and the VPC instance metadata service,
as fencekit's tests need them (written from IBM's API references: IAM
"Create an IAM access token for an API key" (grant_type
urn:ibm:params:oauth:grant-type:apikey, expires_in, errorCode BXNIM…);
VPC "Retrieve an instance", "List all instances" (limit/start, next.href),
"Create an instance action" (type start/stop/reboot, force; 201 with the
action), instance statuses and the errors[] body; Power Cloud
"Get a PVM instance", "Get all the PVM instances", "Perform an action on a
PVM instance" (immediate-shutdown, start, stop, hard-reboot, soft-reboot),
the CRN header, status and health; the metadata service's PUT
/instance_identity/v1/token and GET /metadata/v1/instance).

One process serves:
  --port P        plain HTTP (the metadata service, and what the proxy relays)
  --tls-port Q    the same over HTTPS (--cert/--key), for clients pointed at it
  --proxy-port R  an HTTP proxy: CONNECT tunnels are terminated with the same
                  certificate (its names include IBM's real hosts) and relayed to
                  P; so upstream's agents reach this peer with their built-in URLs.

Tests drive it through POST /_peer/control (JSON {"op": ...}) and read GET
/_peer/state. Power transitions take --transition seconds (or an instance's
own "transition"); an instance can stay in one ("stuck"), an accepted action
can fail afterwards ("fail_next"), answers can be throttled, refused (403,
409), lost before or after the work, or never sent ("hang").
"""
import argparse, json, socket, ssl, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

import hvpeer

LOCK = threading.RLock()
S = {
    "keys": {},        # api key -> {"principal", "roles": ["read", "act"]}
    "tokens": {},      # access token -> {"principal", "exp", "uses"}
    "vpc": {},         # instance id -> instance
    "ws": {},          # workspace id -> {"crn"}
    "pvm": {},         # pvm instance id -> instance (with "ws")
    "imds": None,      # the VPC instance the metadata service describes
    "faults": {"throttle": 0, "throttle_tokens": 0, "retry_after": 1, "token_life": 3600,
               "token_uses": 0, "hang": 0.0, "conflict": 0, "lose": {}, "drop": {}},
    "log": [],
}
ARGS = None
VPC_FINAL = {"stop": "stopped", "start": "running", "reboot": "running"}
VPC_MID = {"stop": "stopping", "start": "starting", "reboot": "restarting"}
PVM_FINAL = {"immediate-shutdown": "SHUTOFF", "stop": "SHUTOFF", "start": "ACTIVE",
             "hard-reboot": "ACTIVE", "soft-reboot": "ACTIVE"}


def now():
    return time.time()


def advance(m, final_key):
    p = m.get("pending")
    if not p or (m.get("stuck") and not p.get("fail")):
        return
    if now() >= p["ends"]:
        m[final_key] = p["before"] if p.get("fail") else p["final"]
        if p.get("fail") and "health" in m:
            m["health"] = p.get("health_before", m["health"])
        m["pending"] = None


def vpc_json(m, host):
    advance(m, "status")
    return {"id": m["id"], "name": m["name"], "status": m["status"],
            "crn": f"crn:v1:bluemix:public:is:{m['zone']}:a/acc0001::instance:{m['id']}",
            "href": f"https://{host}/v1/instances/{m['id']}",
            "zone": {"name": m["zone"]}, "vpc": {"id": "r006-vpc-1", "name": "ha-vpc"},
            "profile": {"name": "bx2-2x8"}, "resource_type": "instance", "status_reasons": []}


def pvm_json(m):
    advance(m, "status")
    return {"pvmInstanceID": m["id"], "serverName": m["name"], "status": m["status"],
            "health": {"status": m["health"], "lastUpdate": "2026-12-01T00:00:00Z"},
            "crn": f"{S['ws'][m['ws']]['crn']}pvm-instance:{m['id']}", "procType": "shared",
            "processors": 0.5, "memory": 4, "sysType": "s922", "networks": []}


def vpc_err(code, message):
    return {"errors": [{"code": code, "message": message,
                        "more_info": "https://cloud.ibm.com/docs/vpc?topic=vpc-rias-error-messages"}],
            "trace": str(uuid.uuid4())}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def cut(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def route(self, method):
        u = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        path = u.path
        host = self.headers.get("Host", "127.0.0.1")
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if path.startswith("/_peer/"):
            return self.control(path, raw)
        with LOCK:
            S["log"].append({"method": method, "path": path, "query": u.query, "host": host,
                             "t": now(), "body": raw.decode(errors="replace") if path != "/identity/token" else "",
                             "crn": self.headers.get("CRN"), "ua": self.headers.get("User-Agent")})
        if path == "/identity/token":
            return self.token(raw)
        if path.startswith("/instance_identity/") or path.startswith("/metadata/"):
            return self.metadata(method, path)
        if path.startswith("/v1/") or path.startswith("/pcloud/v1/"):
            hang = S["faults"]["hang"]
            if hang:
                time.sleep(hang)
            with LOCK:
                if S["faults"]["throttle"] > 0:
                    S["faults"]["throttle"] -= 1
                    return self.reply(429, vpc_err("rate_limit_exceeded", "Too many requests"),
                                      [("Retry-After", str(S["faults"]["retry_after"]))])
                p = self.principal(path.startswith("/v1/"))
                if p is None:
                    return
                if path.startswith("/v1/"):
                    return self.vpc(method, path.split("/")[2:], q, raw, host, p)
                return self.pvm(method, path.split("/")[3:], raw, p)
        self.reply(404, vpc_err("not_found", f"no route {path}"))

    # ---- control ----------------------------------------------------------
    def control(self, path, raw):
        with LOCK:
            if path == "/_peer/state":
                for m in S["vpc"].values():
                    advance(m, "status")
                for m in S["pvm"].values():
                    advance(m, "status")
                return self.reply(200, {k: S[k] for k in ("vpc", "pvm", "ws", "log", "faults", "tokens")})
            try:
                c = json.loads(raw or b"{}")
                op = c.pop("op")
                if op == "key":
                    S["keys"][c["key"]] = {"principal": c.get("principal", "iam-ServiceId-" + uuid.uuid4().hex[:8]),
                                           "roles": c.get("roles", ["read", "act"])}
                elif op == "vpc":
                    iid = c.get("id", "0717_" + str(uuid.uuid4()))
                    S["vpc"][iid] = {"id": iid, "name": c["name"], "status": c.get("status", "running"),
                                     "zone": c.get("zone", "us-south-1"), "stuck": c.get("stuck", False),
                                     "transition": c.get("transition"), "fail_next": c.get("fail_next", False),
                                     "pending": None, "actions": []}
                    return self.reply(200, {"id": iid})
                elif op == "ws":
                    S["ws"][c["id"]] = {"crn": c["crn"]}
                elif op == "pvm":
                    iid = c.get("id", str(uuid.uuid4()))
                    S["pvm"][iid] = {"id": iid, "ws": c["ws"], "name": c["name"], "status": c.get("status", "ACTIVE"),
                                     "health": c.get("health", "OK"), "stuck": c.get("stuck", False),
                                     "transition": c.get("transition"), "fail_next": c.get("fail_next", False),
                                     "pending": None, "actions": []}
                    return self.reply(200, {"id": iid})
                elif op == "set":
                    m = S[c["kind"]][c["id"]]
                    m.update(c["fields"])
                elif op == "fault":
                    S["faults"].update(c.get("set", {}))
                elif op == "expire_tokens":
                    for t in S["tokens"].values():
                        t["exp"] = now() - 1
                elif op == "imds":
                    S["imds"] = c.get("id")
                elif op == "clear_log":
                    S["log"].clear()
                else:
                    raise KeyError(op)
                return self.reply(200, {})
            except Exception as e:
                return self.reply(400, {"error": repr(e)})

    # ---- IAM ----------------------------------------------------------------
    def token(self, raw):
        f = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        with LOCK:
            if S["faults"]["throttle_tokens"] > 0:
                S["faults"]["throttle_tokens"] -= 1
                return self.reply(429, {"errorCode": "BXNIM0436E", "errorMessage": "Too many requests"},
                                  [("Retry-After", "1")])
            if f.get("grant_type") != "urn:ibm:params:oauth:grant-type:apikey":
                return self.reply(400, {"errorCode": "BXNIM0109E",
                                        "errorMessage": "Property missing or empty. Property name: 'grant_type'."})
            k = S["keys"].get(f.get("apikey", ""))
            if not k:
                return self.reply(400, {"errorCode": "BXNIM0415E", "errorMessage": "Provided API key could not be found.",
                                        "context": {"requestId": str(uuid.uuid4())}})
            tok = "eyJraWQiOiJ0ZXN0In0." + uuid.uuid4().hex + ".sig"
            life = S["faults"]["token_life"]
            S["tokens"][tok] = {"principal": k["principal"], "exp": now() + life,
                                "uses": S["faults"]["token_uses"] or None}
        self.reply(200, {"access_token": tok, "refresh_token": "not_supported", "token_type": "Bearer",
                         "expires_in": life, "expiration": int(now() + life), "scope": "ibm openid"})

    def principal(self, vpc):
        a = self.headers.get("Authorization", "")
        t = S["tokens"].get(a[7:]) if a.startswith("Bearer ") else None
        expired = t is not None and (t["exp"] <= now() or t["uses"] == 0)
        if t is None or expired:
            msg = "Expired token" if expired else "Invalid token"
            if vpc:
                self.reply(401, vpc_err("not_authorized", msg))
            else:
                self.reply(401, {"description": f"{msg}: the request is not authorized", "error": "Unauthorized"})
            return None
        if t["uses"] is not None:
            t["uses"] -= 1
        k = next(v for v in S["keys"].values() if v["principal"] == t["principal"])
        return k

    # ---- VPC ----------------------------------------------------------------
    def vpc(self, method, parts, q, raw, host, key):
        if "version" not in q:
            return self.reply(400, vpc_err("missing_version", "The version parameter is required."))
        if "read" not in key["roles"]:
            return self.reply(403, vpc_err("forbidden", "You are not authorized to perform this action."))
        if parts == ["instances"] and method == "GET":
            ids = sorted(S["vpc"])
            limit = int(q.get("limit", "50"))
            start = int(q.get("start", "0"))
            page = ids[start:start + limit]
            body = {"instances": [vpc_json(S["vpc"][i], host) for i in page], "limit": limit,
                    "total_count": len(ids), "first": {"href": f"https://{host}/v1/instances?limit={limit}"}}
            if start + limit < len(ids):
                body["next"] = {"href": f"https://{host}/v1/instances?limit={limit}&start={start + limit}&version={q['version']}&generation=2"}
            return self.reply(200, body)
        if len(parts) < 2 or parts[0] != "instances":
            return self.reply(404, vpc_err("not_found", "Not found"))
        m = S["vpc"].get(parts[1])
        if not m:
            return self.reply(404, vpc_err("not_found", f"Instance not found"))
        if len(parts) == 2 and method == "GET":
            return self.reply(200, vpc_json(m, host))
        if len(parts) == 3 and parts[2] == "actions" and method == "POST":
            if "act" not in key["roles"]:
                return self.reply(403, vpc_err("forbidden", "You are not authorized to perform this action: is.instance.instance.operate"))
            body = json.loads(raw or b"{}")
            kind = body.get("type")
            if kind not in VPC_FINAL:
                return self.reply(400, vpc_err("bad_field", "type must be start, stop or reboot"))
            m["actions"].append(body)
            if self.lost(kind, before=True):
                return
            if S["faults"]["conflict"] > 0:
                S["faults"]["conflict"] -= 1
                return self.reply(409, vpc_err("instance_action_conflict", "The instance has a pending action."))
            advance(m, "status")
            final = VPC_FINAL[kind]
            already = m["status"] == final and kind != "reboot"
            t = m["transition"] if m["transition"] is not None else ARGS.transition
            if not already:
                before = m["status"] if not m["pending"] else m["pending"]["before"]
                m["pending"] = {"final": final, "ends": now() + t, "before": before, "fail": m["fail_next"]}
                m["fail_next"] = False
                m["status"] = VPC_MID[kind]
            if self.lost(kind, before=False):
                return
            return self.reply(201, {"id": "0717-" + uuid.uuid4().hex[:12], "type": kind,
                                    "force": bool(body.get("force")), "status": "pending",
                                    "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                    "href": f"https://{host}/v1/instances/{m['id']}/actions/x"})
        self.reply(405, vpc_err("method_not_allowed", "Method not allowed"))

    def lost(self, kind, before):
        """A lost request (before: nothing done) or a lost answer (after: done)."""
        which = "lose" if before else "drop"
        n = S["faults"][which].get(kind, 0)
        if n > 0:
            S["faults"][which][kind] = n - 1
            self.cut()
            return True
        return False

    # ---- Power VS -------------------------------------------------------------
    def pvm(self, method, parts, raw, key):
        # cloud-instances/WS[/pvm-instances[/ID[/action]]]
        if len(parts) < 2 or parts[0] != "cloud-instances":
            return self.reply(404, {"description": "not found", "error": "not found"})
        ws = S["ws"].get(parts[1])
        crn = self.headers.get("CRN")
        if not crn:
            return self.reply(400, {"description": "missing CRN header", "error": "bad request"})
        if not ws or ws["crn"] != crn:
            return self.reply(403, {"description": f"user does not have access to cloud instance {parts[1]}",
                                    "error": "forbidden"})
        if "read" not in key["roles"]:
            return self.reply(403, {"description": "user is not authorized for this action", "error": "forbidden"})
        if len(parts) == 2 and method == "GET":
            return self.reply(200, {"cloudInstanceID": parts[1], "enabled": True, "region": "us-south",
                                    "tenantID": "acc0001", "pvmInstances": []})
        if parts[2:] == ["pvm-instances"] and method == "GET":
            items = [pvm_json(m) for m in S["pvm"].values() if m["ws"] == parts[1]]
            return self.reply(200, {"pvmInstances": items})
        if len(parts) < 4 or parts[2] != "pvm-instances":
            return self.reply(404, {"description": "not found", "error": "not found"})
        m = S["pvm"].get(parts[3])
        if not m or m["ws"] != parts[1]:
            return self.reply(404, {"description": f"pvm-instance {parts[3]} does not exist", "error": "pvm-instance not found"})
        if len(parts) == 4 and method == "GET":
            return self.reply(200, pvm_json(m))
        if len(parts) == 5 and parts[4] == "action" and method == "POST":
            if "act" not in key["roles"]:
                return self.reply(403, {"description": "user is not authorized to operate the instance", "error": "forbidden"})
            body = json.loads(raw or b"{}")
            kind = body.get("action")
            if kind not in PVM_FINAL:
                return self.reply(400, {"description": "unknown action", "error": "bad request"})
            m["actions"].append(body)
            if self.lost(kind, before=True):
                return
            if S["faults"]["conflict"] > 0:
                S["faults"]["conflict"] -= 1
                return self.reply(409, {"description": "another action is in progress", "error": "conflict"})
            advance(m, "status")
            final = PVM_FINAL[kind]
            t = m["transition"] if m["transition"] is not None else ARGS.transition
            if m["status"] != final or kind.endswith("reboot"):
                before = m["status"] if not m["pending"] else m["pending"]["before"]
                m["pending"] = {"final": final, "ends": now() + t, "before": before, "fail": m["fail_next"]}
                m["fail_next"] = False
            if self.lost(kind, before=False):
                return
            return self.reply(200, {})
        self.reply(405, {"description": "method not allowed", "error": "method not allowed"})

    # ---- the VPC instance metadata service ------------------------------------
    def metadata(self, method, path):
        if path.startswith("/instance_identity/v1/token") and method == "PUT":
            if self.headers.get("Metadata-Flavor") != "ibm":
                return self.reply(400, vpc_err("missing_header", "Metadata-Flavor: ibm is required"))
            tok = "md." + uuid.uuid4().hex
            with LOCK:
                S["tokens"]["md:" + tok] = {"principal": "metadata", "exp": now() + 300, "uses": None}
            return self.reply(200, {"access_token": tok, "created_at": "2026-12-01T00:00:00Z", "expires_in": 300})
        if path.startswith("/metadata/v1/instance") and method == "GET":
            a = self.headers.get("Authorization", "")
            with LOCK:
                if "md:" + a[7:] not in S["tokens"]:
                    return self.reply(401, vpc_err("not_authorized", "Invalid token"))
                m = S["vpc"].get(S["imds"] or "")
                if not m:
                    return self.reply(404, vpc_err("not_found", "no instance"))
                return self.reply(200, {"id": m["id"], "name": m["name"], "zone": {"name": m["zone"]}})
        self.reply(404, vpc_err("not_found", "no route"))


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--tls-port", type=int, required=True)
    p.add_argument("--proxy-port", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--transition", type=float, default=0.5)
    ARGS = p.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    ThreadingHTTPServer.daemon_threads = True
    plain = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    tls = ThreadingHTTPServer(("127.0.0.1", ARGS.tls_port), Handler)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    threading.Thread(target=hvpeer.serve_proxy, args=(ARGS.proxy_port, ctx, ARGS.port), daemon=True).start()
    print(f"ibm peer: http {ARGS.port} https {ARGS.tls_port} proxy {ARGS.proxy_port}", flush=True)
    tls.serve_forever()


if __name__ == "__main__":
    main()
