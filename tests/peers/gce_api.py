#!/usr/bin/env python3
"""Google Compute Engine (v1), Google's OAuth 2.0 token endpoint and the
metadata server, as fencekit's tests need them (written from Google's
references: Compute Engine API v1 instances.get/list/aggregatedList/
start/stop/reset with requestId and noGracefulShutdown, zoneOperations.get/
list, Instance.status, the error answers; the token endpoint's JWT bearer
grant (RFC 7523) with a service-account key's RS256 assertion; the metadata
server's /computeMetadata/v1 with Metadata-Flavor: Google).

One process serves:
  --port P        plain HTTP (the metadata server, and what the proxy relays)
  --tls-port Q    the same over HTTPS (--cert/--key), for clients pointed at it
  --proxy-port R  an HTTP proxy: CONNECT tunnels are terminated with the same
                  certificate (its names include compute.googleapis.com and
                  oauth2.googleapis.com) and relayed to P; so upstream's
                  libraries reach this peer with their built-in URLs.

Tests drive it through POST /_peer/control (JSON {"op": ...}) and read
GET /_peer/state. Transitions take --transition seconds (or an instance's
own "transition"); an instance can stay in one ("stuck"), a guest can hang
so that a graceful stop never ends ("hung"), an accepted operation can fail
("fail_next"), answers can be throttled, lost after the work is done
("lose": the connection closes without an answer), the request dropped
before anything is done ("drop_before"), or an answer never sent ("hang").
Each power fault counts down per verb ({"stop": n}) or per verb and
instance ({"stop:NAME": n}). An operation records the requestId it was
started with as its clientOperationId, and zoneOperations.list (which needs
compute.zoneOperations.list) honours a filter on it, in AIP-160's form
(clientOperationId = "R") and the older regular-expression one
(clientOperationId eq R).
"""
import argparse, base64, json, re, ssl, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

import hvpeer

LOCK = threading.RLock()
S = {
    "accounts": {},     # client_email -> {"public_pem", "perms"}
    "tokens": {},       # access token -> {"principal", "exp"}
    "instances": {},    # "project/zone/name" -> instance
    "ops": {},          # "project/zone/name" -> op
    "requests": {},     # requestId -> op key
    "faults": {"throttle": 0, "throttle_tokens": 0, "lose": {}, "drop_before": {}, "hang": 0.0, "conflict": 0,
               "retry_after": 1, "token_life": 3599, "forbid": []},
    "metadata": {"project": "", "instance": None, "perms": ["*"]},
    "next_id": 4000000000000000000,
    "log": [],
}
ARGS = None
ON = {"RUNNING"}


def now():
    return time.time()


def key(p, z, n):
    return f"{p}/{z}/{n}"


def base(host):
    return f"https://{host}/compute/v1"


def advance(inst):
    if inst.get("until") and now() >= inst["until"] and not inst.get("stuck"):
        inst["status"] = inst.pop("target")
        inst["until"] = None


def finish(op):
    """An operation whose time has come: DONE (its effect, or its error)."""
    if op["status"] != "DONE" and now() >= op["done_at"]:
        op["status"] = "DONE"
        op["progress"] = 100
        op["endTime"] = time.strftime("%Y-%m-%dT%H:%M:%S.000-07:00")
        if op.pop("_fail", None):
            op["error"] = {"errors": [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED",
                                       "message": "The zone does not have enough resources available to fulfill the request."}]}
            op["httpErrorStatusCode"] = 503
            op["httpErrorMessage"] = "SERVICE UNAVAILABLE"
            inst = S["instances"].get(op["_inst"])
            if inst is not None and op.get("_undo"):
                inst["status"], inst["until"] = op["_undo"], None
                inst.pop("target", None)


def new_instance(c):
    with LOCK:
        S["next_id"] += 7919
        iid = str(c.get("id") or S["next_id"])
    return {"project": c["project"], "zone": c["zone"], "name": c["name"], "id": iid,
            "status": c.get("status", "RUNNING"), "until": None, "stuck": c.get("stuck", False),
            "hung": c.get("hung", False), "transition": c.get("transition")}


def inst_json(inst, host):
    zone = f"{base(host)}/projects/{inst['project']}/zones/{inst['zone']}"
    return {"kind": "compute#instance", "id": inst["id"], "name": inst["name"], "zone": zone,
            "status": inst["status"], "machineType": f"{zone}/machineTypes/e2-standard-2",
            "selfLink": f"{zone}/instances/{inst['name']}", "cpuPlatform": "Intel Broadwell",
            "creationTimestamp": "2026-01-01T00:00:00.000-07:00"}


def op_json(op):
    return {k: v for k, v in op.items() if not k.startswith("_") and k != "done_at"}


def gerror(code, reason, message, status):
    return {"error": {"code": code, "message": message,
                      "errors": [{"message": message, "domain": "global", "reason": reason}],
                      "status": status}}


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
        if body is not None and not isinstance(body, bytes):
            self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def route(self, method):
        u = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        path = u.path
        host = self.headers.get("Host", f"127.0.0.1:{ARGS.tls_port}")
        raw = self.body()
        if path.startswith("/_peer/"):
            return self.control(method, path, raw)
        with LOCK:
            S["log"].append({"method": method, "path": path, "query": u.query, "host": host, "t": now()})
        if path == "/" or path.startswith("/computeMetadata/"):
            return self.metadata(path, q)
        if path in ("/token", "/oauth2/v4/token"):
            return self.token(raw)
        if path.startswith("/compute/v1/projects/"):
            return self.compute(method, path.split("/")[4:], q, host)
        self.reply(404, gerror(404, "notFound", f"no route {path}", "NOT_FOUND"))

    # ---- control -------------------------------------------------------
    def control(self, method, path, raw):
        with LOCK:
            if path == "/_peer/state":
                for i in S["instances"].values():
                    advance(i)
                for o in S["ops"].values():
                    finish(o)
                return self.reply(200, {"instances": S["instances"], "ops": {k: op_json(o) for k, o in S["ops"].items()},
                                        "log": S["log"], "faults": S["faults"]})
            try:
                c = json.loads(raw or b"{}")
                op = c.pop("op")
                r = {}
                if op == "account":
                    S["accounts"][c["email"]] = {"public_pem": c["public_pem"], "perms": c.get("perms", ["*"])}
                elif op == "instance":
                    i = new_instance(c)
                    S["instances"][key(i["project"], i["zone"], i["name"])] = i
                    r = {"id": i["id"]}
                elif op == "instances":  # many at once: {"project","zone","prefix","count","status"}
                    for n in range(c["count"]):
                        i = new_instance({**c, "name": f"{c['prefix']}{n:04d}"})
                        S["instances"][key(i["project"], i["zone"], i["name"])] = i
                elif op == "set":
                    i = S["instances"][key(c["project"], c["zone"], c["name"])]
                    for k, v in c.get("fields", {}).items():
                        i[k] = v
                elif op == "fault":
                    S["faults"].update(c.get("set", {}))
                elif op == "expire_tokens":
                    for t in S["tokens"].values():
                        t["exp"] = now() - 1
                elif op == "metadata":
                    S["metadata"].update(c)
                elif op == "clear_log":
                    S["log"].clear()
                else:
                    raise KeyError(op)
                return self.reply(200, r)
            except Exception as e:  # a test's mistake: say it
                return self.reply(400, {"error": repr(e)})

    # ---- the metadata server -------------------------------------------
    def metadata(self, path, q):
        flavor = [("Metadata-Flavor", "Google")]
        if self.headers.get("Metadata-Flavor", "") != "Google":
            return self.reply(403, b"Missing Metadata-Flavor:Google header.", flavor)
        m = S["metadata"]
        with LOCK:
            inst = S["instances"].get(m["instance"]) if m["instance"] else None
        rel = path[len("/computeMetadata/v1/"):] if path.startswith("/computeMetadata/v1/") else ""
        if path == "/" or rel == "":
            return self.reply(200, b"computeMetadata/\n", flavor)
        if rel == "instance/service-accounts/default/token":
            if not inst:
                return self.reply(404, b"Not Found", flavor)
            tok = "ya29.m" + uuid.uuid4().hex
            with LOCK:
                life = S["faults"]["token_life"]
                S["tokens"][tok] = {"principal": "metadata", "exp": now() + life}
            return self.reply(200, {"access_token": tok, "expires_in": life, "token_type": "Bearer"}, flavor)
        if rel.startswith("instance/service-accounts/default"):
            return self.reply(200, {"email": "default@developer.gserviceaccount.com", "scopes": [
                "https://www.googleapis.com/auth/cloud-platform"], "aliases": ["default"]}, flavor)
        values = {"project/project-id": m.get("project") or (inst or {}).get("project")}
        if inst:
            values.update({"instance/id": inst["id"], "instance/name": inst["name"],
                           "instance/zone": f"projects/123456789012/zones/{inst['zone']}",
                           "instance/image": "projects/rhel-sap-cloud/global/images/rhel-9-sap-ha"})
        v = values.get(rel)
        if v is None:
            return self.reply(404, b"Not Found", flavor)
        self.send_response(200)
        self.send_header("Metadata-Flavor", "Google")
        self.send_header("Content-Type", "application/text")
        self.send_header("Content-Length", str(len(v.encode())))
        self.end_headers()
        self.wfile.write(v.encode())

    # ---- the token endpoint --------------------------------------------
    def token(self, raw):
        with LOCK:
            if S["faults"]["throttle_tokens"] > 0:
                S["faults"]["throttle_tokens"] -= 1
                return self.reply(429, {"error": "rate_limit_exceeded"}, [("Retry-After", "1")])
        f = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        bad = lambda code, desc, status=400: self.reply(status, {"error": code, "error_description": desc})
        if f.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return bad("unsupported_grant_type", "Invalid grant_type: " + f.get("grant_type", ""))
        why, email = check_assertion(f.get("assertion", ""))
        if why:
            return bad("invalid_grant", why)
        tok = "ya29.c." + uuid.uuid4().hex
        with LOCK:
            life = S["faults"]["token_life"]
            S["tokens"][tok] = {"principal": email, "exp": now() + life}
        self.reply(200, {"access_token": tok, "expires_in": life, "token_type": "Bearer"})

    def principal(self):
        a = self.headers.get("Authorization", "")
        if not a.startswith("Bearer "):
            return None
        t = S["tokens"].get(a[7:])
        if not t or t["exp"] <= now():
            return None
        return t["principal"]

    def allowed(self, principal, perm):
        if perm in S["faults"]["forbid"]:
            return False
        perms = S["metadata"]["perms"] if principal == "metadata" else S["accounts"].get(principal, {}).get("perms", [])
        return "*" in perms or perm in perms

    # ---- Compute Engine -------------------------------------------------
    def compute(self, method, parts, q, host):
        if S["faults"]["hang"]:
            time.sleep(S["faults"]["hang"])
            return self.reply(503, gerror(503, "backendError", "late", "UNAVAILABLE"))
        with LOCK:
            p = self.principal()
            r = S["faults"].get("revoke_after")
            if p is not None and r:
                # After this many authorized requests, every token held is
                # revoked (once): the next request is refused with 401.
                S["faults"]["revoke_after"] = r - 1
                if r == 1:
                    for t in S["tokens"].values():
                        t["exp"] = now() - 1
                    p = None
            if p is None:
                return self.reply(401, gerror(401, "authError",
                    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
                    "UNAUTHENTICATED"), [("WWW-Authenticate", 'Bearer realm="https://accounts.google.com/"')])
            if S["faults"]["throttle"] > 0:
                S["faults"]["throttle"] -= 1
                return self.reply(429, gerror(429, "rateLimitExceeded",
                    "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com'.",
                    "RESOURCE_EXHAUSTED"), [("Retry-After", str(S["faults"]["retry_after"]))])
            project = parts[0]
            if len(parts) == 3 and parts[1:] == ["aggregated", "instances"]:
                if not self.allowed(p, "compute.instances.list"):
                    return self.forbid("compute.instances.list", project)
                m = re.search(r'name\s*=\s*"?([a-z0-9-]+)"?', q.get("filter", ""))
                items = {}
                for i in S["instances"].values():
                    if i["project"] == project and (not m or i["name"] == m.group(1)):
                        advance(i)
                        items.setdefault(f"zones/{i['zone']}", {"instances": []})["instances"].append(inst_json(i, host))
                return self.reply(200, {"kind": "compute#instanceAggregatedList", "items": items})
            if len(parts) < 4 or parts[1] != "zones":
                return self.reply(404, gerror(404, "notFound", "no such collection", "NOT_FOUND"))
            zone = parts[2]
            if parts[3] == "operations":
                return self.operations(p, project, zone, parts[4:], q, host)
            if parts[3] != "instances":
                return self.reply(404, gerror(404, "notFound", "no such collection", "NOT_FOUND"))
            if len(parts) == 4:
                return self.list(p, project, zone, q, host)
            name = parts[4]
            inst = S["instances"].get(key(project, zone, name))
            link = f"projects/{project}/zones/{zone}/instances/{name}"
            if len(parts) == 5 and method == "GET":
                if not self.allowed(p, "compute.instances.get"):
                    return self.forbid("compute.instances.get", link)
                if not inst:
                    return self.reply(404, gerror(404, "notFound", f"The resource '{link}' was not found", "NOT_FOUND"))
                advance(inst)
                return self.reply(200, inst_json(inst, host))
            if len(parts) == 6 and method == "POST" and parts[5] in ("start", "stop", "reset"):
                return self.power(p, parts[5], project, zone, name, inst, link, q, host)
        self.reply(405, gerror(405, "httpMethodNotAllowed", "Method not allowed", "METHOD_NOT_ALLOWED"))

    def hang_up(self):
        """Closes the connection without an answer."""
        self.close_connection = True
        self.wfile.flush()
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    def fault_due(self, fault, verb, name):
        """Counts down `fault` for this verb (on this instance): whether it applies now."""
        d = S["faults"][fault]
        which = next((k for k in (f"{verb}:{name}", verb) if d.get(k, 0) > 0), None)
        if which:
            d[which] -= 1
        return which is not None

    def forbid(self, perm, what):
        return self.reply(403, gerror(403, "forbidden", f"Required '{perm}' permission for '{what}'", "PERMISSION_DENIED"))

    def list(self, p, project, zone, q, host):
        if not self.allowed(p, "compute.instances.list"):
            return self.forbid("compute.instances.list", f"projects/{project}/zones/{zone}")
        n = min(int(q.get("maxResults", 500)), 500)
        names = sorted(k for k, i in S["instances"].items() if i["project"] == project and i["zone"] == zone)
        start = int(q.get("pageToken", "0") or 0)
        page = names[start:start + n]
        out = {"kind": "compute#instanceList", "id": f"projects/{project}/zones/{zone}/instances",
               "selfLink": f"{base(host)}/projects/{project}/zones/{zone}/instances"}
        if page:
            for k in page:
                advance(S["instances"][k])
            out["items"] = [inst_json(S["instances"][k], host) for k in page]
        if start + n < len(names):
            out["nextPageToken"] = str(start + n)
        self.reply(200, out)

    def operations(self, p, project, zone, rest, q, host):
        perm = "compute.zoneOperations.list" if not rest else "compute.zoneOperations.get"
        if not self.allowed(p, perm):
            return self.forbid(perm, f"projects/{project}/zones/{zone}")
        if not rest:  # list, with upstream's filter (targetLink, operationType, status) and clientOperationId
            f = q.get("filter", "")
            tl = re.search(r'targetLink = "([^"]+)"', f)
            ot = re.search(r'operationType = "([^"]+)"', f)
            st = re.search(r'status = "([^"]+)"', f)
            co = re.search(r'clientOperationId\s*(?:=\s*"([^"]*)"|=\s*([^\s")]+)|\s+eq\s+([^\s")]+))', f)
            co = co and next(g for g in co.groups() if g is not None)
            items = []
            for o in S["ops"].values():
                finish(o)
                if o["_zone"] != zone or o["_project"] != project:
                    continue
                if co is not None and o.get("clientOperationId") != co:
                    continue
                if tl and not o["targetLink"].endswith(tl.group(1).split("/compute/v1/", 1)[-1].split("/v1/", 1)[-1]):
                    continue
                if ot and o["operationType"] != ot.group(1):
                    continue
                if st and o["status"] != st.group(1):
                    continue
                items.append(op_json(o))
            items = items[: int(q.get("maxResults", 500))]
            return self.reply(200, {"kind": "compute#operationList", "items": items} if items else {"kind": "compute#operationList"})
        o = S["ops"].get(key(project, zone, rest[0]))
        if not o:
            return self.reply(404, gerror(404, "notFound", f"The resource 'projects/{project}/zones/{zone}/operations/{rest[0]}' was not found", "NOT_FOUND"))
        finish(o)
        self.reply(200, op_json(o))

    def power(self, p, verb, project, zone, name, inst, link, q, host):
        perm = f"compute.instances.{verb}"
        if not self.allowed(p, perm):
            return self.forbid(perm, link)
        if not inst:
            return self.reply(404, gerror(404, "notFound", f"The resource '{link}' was not found", "NOT_FOUND"))
        if self.fault_due("drop_before", verb, name):
            # Lost on the way in: nothing is done, no answer comes.
            return self.hang_up()
        rid = q.get("requestId")
        if rid and rid in S["requests"]:
            o = S["ops"][S["requests"][rid]]
            finish(o)
            return self.reply(200, op_json(o))
        if S["faults"]["conflict"] > 0:
            S["faults"]["conflict"] -= 1
            return self.reply(409, gerror(409, "resourceInUseByAnotherResource",
                f"The instance '{link}' is in use by another operation.", "ABORTED"))
        advance(inst)
        t = inst.get("transition") or ARGS.transition
        before = inst["status"]
        undo = None
        if verb == "reset":
            if before != "RUNNING":
                return self.reply(400, gerror(400, "resourceNotReady", f"The resource '{link}' is not ready", "FAILED_PRECONDITION"))
            done_at = now() + t
        elif verb == "stop":
            if before in ("TERMINATED", "STOPPED"):
                done_at = now()
            else:
                graceful = q.get("noGracefulShutdown") != "true"
                inst["status"], inst["target"] = "STOPPING", "TERMINATED"
                long = graceful and inst.get("hung")
                inst["until"] = now() + (3600 if long else t)
                done_at = inst["until"]
                undo = before
        else:  # start
            if before in ("SUSPENDED", "SUSPENDING"):
                return self.reply(400, gerror(400, "resourceNotReady", f"The instance '{link}' is suspended: resume it", "FAILED_PRECONDITION"))
            if before in ("RUNNING", "STAGING", "PROVISIONING"):
                done_at = now()
            else:
                inst["status"], inst["target"] = "STAGING", "RUNNING"
                inst["until"] = now() + t
                done_at = inst["until"]
                undo = before
        opname = f"operation-{int(now() * 1000)}-{uuid.uuid4().hex[:12]}"
        zurl = f"{base(host)}/projects/{project}/zones/{zone}"
        o = {"kind": "compute#operation", "id": str(S["next_id"] + len(S["ops"]) + 1), "name": opname,
             "zone": zurl, "operationType": verb, "targetLink": f"{zurl}/instances/{name}",
             "targetId": inst["id"], "status": "RUNNING", "user": p, "progress": 0,
             "insertTime": time.strftime("%Y-%m-%dT%H:%M:%S.000-07:00"), "selfLink": f"{zurl}/operations/{opname}",
             "done_at": done_at, "_zone": zone, "_project": project, "_inst": key(project, zone, name),
             "_undo": undo}
        if S["faults"].get("fail_next"):
            S["faults"]["fail_next"] = False
            o["_fail"] = True
        if rid:
            # Output only: the requestId the operation was started with.
            o["clientOperationId"] = rid
            S["requests"][rid] = key(project, zone, opname)
        S["ops"][key(project, zone, opname)] = o
        if self.fault_due("lose", verb, name):
            # Carried out, and the answer lost: the connection just closes.
            return self.hang_up()
        self.reply(200, op_json(o))


def check_assertion(assertion):
    try:
        h, c, s = assertion.split(".")
        pad = lambda x: x + "=" * (-len(x) % 4)
        header = json.loads(base64.urlsafe_b64decode(pad(h)))
        claims = json.loads(base64.urlsafe_b64decode(pad(c)))
        sig = base64.urlsafe_b64decode(pad(s))
    except Exception:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.", None
    email = claims.get("iss", "")
    with LOCK:
        acct = S["accounts"].get(email)
    if not acct or header.get("alg") != "RS256":
        return "Invalid JWT Signature.", None
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding
    try:
        serialization.load_pem_public_key(acct["public_pem"].encode()).verify(
            sig, f"{h}.{c}".encode(), padding.PKCS1v15(), hashes.SHA256())
    except Exception:
        return "Invalid JWT Signature.", None
    if not str(claims.get("aud", "")).endswith("/token"):
        return "Invalid JWT: Failed audience check.", None
    if "https://www.googleapis.com/auth/cloud-platform" not in str(claims.get("scope", "")).split():
        return "Invalid OAuth scope or ID token audience provided.", None
    if not (claims.get("iat", 0) - 300 <= now() < claims.get("exp", 0)):
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.", None
    return None, email


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
    ThreadingHTTPServer.request_queue_size = 128
    plain = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    tls = ThreadingHTTPServer(("127.0.0.1", ARGS.tls_port), Handler)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    threading.Thread(target=hvpeer.serve_proxy, args=(ARGS.proxy_port, ctx, ARGS.port),
                     daemon=True).start()
    print(f"gce peer: http {ARGS.port} https {ARGS.tls_port} proxy {ARGS.proxy_port}", flush=True)
    tls.serve_forever()


if __name__ == "__main__":
    main()
