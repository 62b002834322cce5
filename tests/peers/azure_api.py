#!/usr/bin/env python3
"""Azure Resource Manager, Microsoft Entra ID's token endpoint and the
instance metadata service, as fencekit's tests need them (written from
Microsoft's REST API references: Compute "Virtual Machines" Get/List/
PowerOff/Start/Restart/Deallocate and "Instance View", long-running
operations with Azure-AsyncOperation and Location, ARM error answers and
throttling; the v2.0 token endpoint's client_credentials grant with a
client secret or a client assertion (RS256 JWT naming the certificate by
x5t, or a federated token); IMDS /metadata/identity/oauth2/token and
/metadata/instance; Azure Stack Hub's /metadata/endpoints).

One process serves:
  --port P        plain HTTP (IMDS, and what the proxy relays)
  --tls-port Q    the same over HTTPS (--cert/--key), for clients pointed at it
  --proxy-port R  an HTTP proxy: CONNECT tunnels are terminated with the same
                  certificate (its names include Azure's real hosts) and relayed
                  to P, absolute-form requests (IMDS over HTTP_PROXY) too; so
                  upstream's SDKs reach this peer with their built-in URLs.

Tests drive it through POST /_peer/control (JSON {"op": ...}) and read
GET /_peer/state (VMs, operations, the request log). Power transitions take
--transition seconds (or a VM's own "transition"); a VM can stay in one
("stuck"), an accepted operation can fail ("fail_next"), answers can be
throttled, dropped after the work is done, or never sent.
"""
import argparse, base64, hashlib, json, socket, ssl, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

import hvpeer

LOCK = threading.RLock()
S = {
    "clients": {},      # client_id -> {"tenant", "secret", "cert_der", "object_id"}
    "federated": {},    # federated token text -> client_id
    "identity": None,   # the VM's managed identity: {"object_id", "user": {client_id: object_id}}
    "tokens": {},       # access token -> {"principal", "exp"}
    "roles": {},        # principal object id -> [actions] ("*" allowed)
    "vms": {},          # "sub/rg/name" (lower) -> vm
    "ops": {},          # id -> op
    "faults": {"throttle": 0, "throttle_tokens": 0, "drop": {}, "lose": {}, "hang": 0.0,
               "conflict": 0, "retry_after": 1, "token_life": 3599, "page_size": 50},
    "imds_vm": None,    # key of the VM the metadata service describes
    "log": [],
}
ARGS = None


def now():
    return time.time()


def key(sub, rg, name):
    return f"{sub}/{rg}/{name}".lower()


def new_vm(spec):
    vm = {"name": spec["name"], "rg": spec.get("rg", "rg-ha"), "sub": spec["sub"],
          "vmId": spec.get("vmId", str(uuid.uuid4())), "location": spec.get("location", "westeurope"),
          "power": spec.get("power", "running"), "stuck": spec.get("stuck", False),
          "transition": spec.get("transition"), "fail_next": spec.get("fail_next", {}),
          "pending": None, "nics": spec.get("nics", []), "computerName": spec.get("computerName", spec["name"]),
          "powerOffs": 0, "starts": 0, "skipShutdown": [], "posts": {}}
    return vm


INTERMEDIATE = {"powerOff": "stopping", "start": "starting", "restart": "starting",
                "deallocate": "deallocating"}
FINAL = {"powerOff": "stopped", "start": "running", "restart": "running", "deallocate": "deallocated"}


def advance(vm):
    """Applies a transition whose time has come."""
    p = vm["pending"]
    if not p or vm["stuck"] and not p.get("fail"):
        return
    if now() >= p["ends"]:
        op = S["ops"][p["op"]]
        if p.get("fail"):
            vm["power"] = p["before"]
            op["status"] = "Failed"
            op["error"] = {"code": p["fail"][0], "message": p["fail"][1]}
        else:
            vm["power"] = FINAL[p["kind"]]
            op["status"] = "Succeeded"
        op["endTime"] = now()
        vm["pending"] = None


def start_op(vm, kind, host):
    old = vm["pending"]
    if old:
        o = S["ops"][old["op"]]
        o["status"] = "Canceled"
        o["error"] = {"code": "OperationPreempted",
                      "message": "Operation execution has been preempted by a more recent operation."}
    opid = str(uuid.uuid4())
    before = vm["power"] if not old else old["before"]
    S["ops"][opid] = {"name": opid, "status": "InProgress", "startTime": now(), "vm": key(vm["sub"], vm["rg"], vm["name"]),
                      "kind": kind}
    already = vm["power"] == FINAL[kind] and not old
    t = vm["transition"] if vm["transition"] is not None else ARGS.transition
    fail = vm["fail_next"].pop(kind, None)
    vm["pending"] = {"op": opid, "kind": kind, "ends": now() + (0 if already else t),
                     "before": before, "fail": fail}
    if not already:
        vm["power"] = INTERMEDIATE[kind]
    advance(vm)
    base = f"https://{host}/subscriptions/{vm['sub']}/providers/Microsoft.Compute/locations/{vm['location']}"
    return opid, f"{base}/operations/{opid}?api-version=2024-07-01", f"{base}/operations/{opid}?monitor=true&api-version=2024-07-01"


def vm_json(vm, view=True):
    advance(vm)
    rid = (f"/subscriptions/{vm['sub']}/resourceGroups/{vm['rg']}/providers/"
           f"Microsoft.Compute/virtualMachines/{vm['name']}")
    props = {"vmId": vm["vmId"], "provisioningState": "Succeeded",
             "hardwareProfile": {"vmSize": "Standard_D2s_v5"},
             "osProfile": {"computerName": vm["computerName"], "adminUsername": "azureuser"},
             "networkProfile": {"networkInterfaces": [{"id": n} for n in vm["nics"]]}}
    if view:
        statuses = [{"code": "ProvisioningState/succeeded", "level": "Info",
                     "displayStatus": "Provisioning succeeded", "time": "2026-01-01T00:00:00Z"}]
        if vm["power"] != "none":
            statuses.append({"code": f"PowerState/{vm['power']}", "level": "Info",
                             "displayStatus": f"VM {vm['power']}"})
        props["instanceView"] = {"computerName": vm["computerName"], "statuses": statuses}
    return {"name": vm["name"], "id": rid, "type": "Microsoft.Compute/virtualMachines",
            "location": vm["location"], "properties": props}


def arm_error(code, message):
    return {"error": {"code": code, "message": message}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer, sent at once (no delayed-ACK stalls on loopback).
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
            self.send_header("Content-Type", "application/json; charset=utf-8")
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

    def do_PUT(self):
        self.route("PUT")

    def route(self, method):
        u = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        path = u.path
        host = self.headers.get("Host", f"127.0.0.1:{ARGS.tls_port}")
        raw = self.body()
        if path.startswith("/_peer/"):
            return self.control(method, path, raw)
        with LOCK:
            S["log"].append({"method": method, "path": path, "query": u.query, "host": host, "t": now(),
                             "auth": bool(self.headers.get("Authorization"))})
        if path.startswith("/metadata/identity/") or path.startswith("/metadata/instance"):
            return self.imds(path, q)
        if path == "/metadata/endpoints":
            return self.reply(200, {"galleryEndpoint": f"https://{host}/gallery",
                                    "graphEndpoint": "https://graph.stack.test",
                                    "portalEndpoint": f"https://{host}/portal",
                                    "authentication": {"loginEndpoint": f"https://{host}/adfs",
                                                       "audiences": ["https://management.stack.test"]}})
        parts = path.strip("/").split("/")
        if len(parts) >= 3 and parts[-3:] == ["oauth2", "v2.0", "token"] or path.endswith("/oauth2/v2.0/token"):
            return self.token(parts[0], raw, host)
        if path.endswith("/.well-known/openid-configuration"):
            t = parts[0]
            return self.reply(200, {"token_endpoint": f"https://{host}/{t}/oauth2/v2.0/token",
                                    "authorization_endpoint": f"https://{host}/{t}/oauth2/v2.0/authorize",
                                    "issuer": f"https://{host}/{t}/v2.0",
                                    "device_authorization_endpoint": f"https://{host}/{t}/oauth2/v2.0/devicecode",
                                    "tenant_region_scope": "EU", "jwks_uri": f"https://{host}/{t}/discovery/v2.0/keys"})
        if path.startswith("/common/discovery/instance"):
            return self.reply(200, {"tenant_discovery_endpoint": f"https://{host}/common/v2.0/.well-known/openid-configuration",
                                    "metadata": []})
        if parts and parts[0] == "subscriptions":
            return self.arm(method, parts, q, host)
        self.reply(404, arm_error("NotFound", f"no route {path}"))

    # ---- control -------------------------------------------------------
    def control(self, method, path, raw):
        with LOCK:
            if path == "/_peer/state":
                for vm in S["vms"].values():
                    advance(vm)
                return self.reply(200, {"vms": S["vms"], "ops": S["ops"], "log": S["log"], "faults": S["faults"]})
            try:
                c = json.loads(raw or b"{}")
                op = c.pop("op")
                r = {}
                if op == "client":
                    cl = {"tenant": c["tenant"], "secret": c.get("secret"), "object_id": c.get("object_id", str(uuid.uuid4()))}
                    if c.get("cert_pem"):
                        from cryptography import x509
                        cl["cert_der"] = x509.load_pem_x509_certificate(c["cert_pem"].encode()).public_bytes(
                            __import__("cryptography.hazmat.primitives.serialization", fromlist=["Encoding"]).Encoding.DER)
                    S["clients"][c["client_id"]] = cl
                    S["roles"][cl["object_id"]] = c.get("actions", ["*"])
                    r = {"object_id": cl["object_id"]}
                elif op == "federated":
                    S["federated"][c["token"]] = c["client_id"]
                elif op == "identity":
                    oid = c.get("object_id", str(uuid.uuid4()))
                    S["identity"] = {"object_id": oid, "user": c.get("user", {})}
                    S["roles"][oid] = c.get("actions", ["*"])
                    for uoid in c.get("user", {}).values():
                        S["roles"][uoid] = c.get("actions", ["*"])
                    r = {"object_id": oid}
                elif op == "vm":
                    vm = new_vm(c)
                    S["vms"][key(vm["sub"], vm["rg"], vm["name"])] = vm
                    r = {"vmId": vm["vmId"]}
                elif op == "set":
                    vm = S["vms"][key(c["sub"], c["rg"], c["name"])]
                    for k, v in c.get("fields", {}).items():
                        vm[k] = v
                elif op == "fault":
                    S["faults"].update(c.get("set", {}))
                elif op == "expire_tokens":
                    for t in S["tokens"].values():
                        t["exp"] = now() - 1
                elif op == "imds_vm":
                    S["imds_vm"] = key(c["sub"], c["rg"], c["name"]) if c.get("name") else None
                elif op == "roles":
                    S["roles"][c["principal"]] = c["actions"]
                elif op == "clear_log":
                    S["log"].clear()
                else:
                    raise KeyError(op)
                return self.reply(200, r)
            except Exception as e:  # a test's mistake: say it
                return self.reply(400, {"error": repr(e)})

    # ---- Entra ID ------------------------------------------------------
    def token(self, tenant, raw, host):
        with LOCK:
            if S["faults"]["throttle_tokens"] > 0:
                S["faults"]["throttle_tokens"] -= 1
                return self.reply(429, {"error": "temporarily_unavailable"}, [("Retry-After", "1")])
        f = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        bad = lambda code, desc, status=400: self.reply(status, {
            "error": code, "error_description": f"{desc}\r\nTrace ID: {uuid.uuid4()}\r\nTimestamp: 2026-12-01",
            "error_codes": [int(desc[6:desc.index(':')])] if desc.startswith("AADSTS") else []})
        if f.get("grant_type") != "client_credentials":
            return bad("unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
        cid = f.get("client_id", "")
        with LOCK:
            cl = S["clients"].get(cid)
            assertion = f.get("client_assertion")
            fed_client = S["federated"].get(assertion) if assertion else None
            if fed_client:
                if fed_client != cid:
                    return bad("invalid_client", "AADSTS700213: No matching federated identity record found.", 401)
                principal = cl["object_id"] if cl else cid
            else:
                if not cl or cl["tenant"] != tenant:
                    return bad("unauthorized_client", f"AADSTS700016: Application with identifier '{cid}' was not found in the directory '{tenant}'.")
                if "client_secret" in f:
                    if f["client_secret"] != cl.get("secret"):
                        return bad("invalid_client", f"AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '{cid}'.", 401)
                elif assertion:
                    why = check_assertion(assertion, cl, cid, tenant)
                    if why:
                        return bad("invalid_client", why, 401)
                else:
                    return bad("invalid_client", "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.", 401)
                principal = cl["object_id"]
            tok = "eyJ0eXAiOiJKV1QifQ." + base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=") + ".sig"
            life = S["faults"]["token_life"]
            S["tokens"][tok] = {"principal": principal, "exp": now() + life}
        self.reply(200, {"token_type": "Bearer", "expires_in": life, "ext_expires_in": life, "access_token": tok})

    # ---- the instance metadata service ----------------------------------
    def imds(self, path, q):
        if self.headers.get("Metadata", "").lower() != "true":
            return self.reply(400, {"error": "invalid_request", "error_description": "Required metadata header not specified"})
        with LOCK:
            if path.startswith("/metadata/identity/oauth2/token"):
                ident = S["identity"]
                if not ident:
                    return self.reply(400, {"error": "invalid_request", "error_description": "Identity not found"})
                principal = ident["object_id"]
                if q.get("client_id"):
                    principal = ident["user"].get(q["client_id"])
                    if not principal:
                        return self.reply(400, {"error": "invalid_request", "error_description": "Identity not found"})
                tok = "imds." + uuid.uuid4().hex
                life = S["faults"]["token_life"]
                S["tokens"][tok] = {"principal": principal, "exp": now() + life}
                return self.reply(200, {"access_token": tok, "client_id": q.get("client_id", "system"),
                                        "expires_in": str(life), "expires_on": str(int(now() + life)),
                                        "ext_expires_in": str(life), "not_before": str(int(now())),
                                        "resource": q.get("resource", ""), "token_type": "Bearer"})
            vm = S["vms"].get(S["imds_vm"] or "")
            if not vm:
                return self.reply(404, {"error": "not found"})
            compute = {"vmId": vm["vmId"], "name": vm["name"], "resourceGroupName": vm["rg"],
                       "subscriptionId": vm["sub"], "location": vm["location"],
                       "resourceId": vm_json(vm, False)["id"], "azEnvironment": "AzurePublicCloud"}
        if path.startswith("/metadata/instance/compute"):
            return self.reply(200, compute)
        self.reply(200, {"compute": compute, "network": {"interface": []}})

    # ---- Resource Manager ----------------------------------------------
    def principal(self):
        a = self.headers.get("Authorization", "")
        if not a.startswith("Bearer "):
            self.reply(401, arm_error("AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing."),
                       [("WWW-Authenticate", 'Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token"')])
            return None
        t = S["tokens"].get(a[7:])
        if not t:
            self.reply(401, arm_error("InvalidAuthenticationToken", "The access token is invalid."),
                       [("WWW-Authenticate", 'Bearer error="invalid_token"')])
            return None
        if t["exp"] <= now():
            self.reply(401, arm_error("ExpiredAuthenticationToken",
                                      "The access token expiry UTC time is earlier than current UTC time."),
                       [("WWW-Authenticate", 'Bearer error="invalid_token", error_description="The access token has expired."')])
            return None
        return t["principal"]

    def allowed(self, principal, action, scope):
        acts = S["roles"].get(principal, [])
        if "*" in acts or action in acts:
            return True
        self.reply(403, arm_error("AuthorizationFailed",
                                  f"The client '{principal}' with object id '{principal}' does not have authorization to perform action '{action}' over scope '{scope}' or the scope is invalid."))
        return False

    def arm(self, method, parts, q, host):
        hang = S["faults"]["hang"]
        if hang:
            time.sleep(hang)
        with LOCK:
            if S["faults"]["throttle"] > 0:
                S["faults"]["throttle"] -= 1
                return self.reply(429, arm_error("TooManyRequests", "The request is being throttled."),
                                  [("Retry-After", "1")])
            principal = self.principal()
            if principal is None:
                return
            if "api-version" not in q:
                return self.reply(400, arm_error("MissingApiVersionParameter",
                                                 "The api-version query parameter (?api-version=) is required for all requests."))
            # /subscriptions/S/providers/Microsoft.Compute/locations/L/operations/ID
            if len(parts) == 8 and parts[2] == "providers" and parts[6] == "operations":
                if not self.allowed(principal, "Microsoft.Compute/locations/operations/read", "/".join(parts)):
                    return
                op = S["ops"].get(parts[7])
                if not op:
                    return self.reply(404, arm_error("NotFound", "The operation was not found."))
                advance(S["vms"][op["vm"]])
                if q.get("monitor") == "true":
                    if op["status"] == "InProgress":
                        return self.reply(202, None, [("Location", f"https://{host}{self.path}"),
                                                      ("Retry-After", str(S["faults"]["retry_after"]))])
                    if op["status"] == "Succeeded":
                        return self.reply(200, None)
                    return self.reply(500 if op["status"] == "Failed" else 409, {"error": op.get("error")})
                body = {k: op[k] for k in ("name", "status", "startTime") if k in op}
                if "error" in op:
                    body["error"] = op["error"]
                return self.reply(200, body, [("Retry-After", str(S["faults"]["retry_after"]))])
            # /subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines[/VM[/ACTION]]
            if len(parts) < 7 or parts[2].lower() != "resourcegroups" or parts[6].lower() != "virtualmachines":
                return self.reply(404, arm_error("InvalidResourceType", "The resource type could not be found."))
            sub, rg = parts[1], parts[3]
            scope = "/" + "/".join(parts[:7])
            if len(parts) == 7:
                if not self.allowed(principal, "Microsoft.Compute/virtualMachines/read", scope):
                    return
                vms = [v for v in S["vms"].values() if v["sub"].lower() == sub.lower() and v["rg"].lower() == rg.lower()]
                if not vms and not any(v["rg"].lower() == rg.lower() for v in S["vms"].values()):
                    return self.reply(404, arm_error("ResourceGroupNotFound", f"Resource group '{rg}' could not be found."))
                vms.sort(key=lambda v: v["name"])
                n = S["faults"]["page_size"]
                skip = int(q.get("$skiptoken", "0"))
                page = vms[skip:skip + n]
                body = {"value": [vm_json(v, False) for v in page]}
                if skip + n < len(vms):
                    body["nextLink"] = (f"https://{host}/subscriptions/{sub}/resourceGroups/{rg}/providers/"
                                        f"Microsoft.Compute/virtualMachines?api-version={q['api-version']}&$skiptoken={skip + n}")
                return self.reply(200, body)
            vm = S["vms"].get(key(sub, rg, parts[7]))
            if not vm:
                return self.reply(404, arm_error("ResourceNotFound",
                                                 f"The Resource 'Microsoft.Compute/virtualMachines/{parts[7]}' under resource group '{rg}' was not found."))
            if len(parts) == 8 and method == "GET":
                if not self.allowed(principal, "Microsoft.Compute/virtualMachines/read", scope + "/" + parts[7]):
                    return
                return self.reply(200, vm_json(vm, q.get("$expand") == "instanceView"))
            if len(parts) == 9 and parts[8] == "instanceView" and method == "GET":
                if not self.allowed(principal, "Microsoft.Compute/virtualMachines/instanceView/read", scope):
                    return
                return self.reply(200, vm_json(vm)["properties"]["instanceView"])
            if len(parts) == 9 and method == "POST" and parts[8] in FINAL:
                kind = parts[8]
                if not self.allowed(principal, f"Microsoft.Compute/virtualMachines/{kind}/action", scope + "/" + parts[7]):
                    return
                vm["posts"][kind] = vm["posts"].get(kind, 0) + 1
                lose = S["faults"]["lose"].get(kind, 0)
                if lose > 0:
                    # Lost on the way: nothing done, and no answer.
                    S["faults"]["lose"][kind] = lose - 1
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if S["faults"]["conflict"] > 0:
                    S["faults"]["conflict"] -= 1
                    return self.reply(409, arm_error("OperationNotAllowed",
                                                     f"Operation '{kind}' is not allowed on VM '{vm['name']}' since the VM is marked for an update in progress."))
                if kind == "powerOff":
                    vm["powerOffs"] += 1
                    vm["skipShutdown"].append(q.get("skipShutdown", "false"))
                if kind == "start":
                    vm["starts"] += 1
                opid, async_url, loc_url = start_op(vm, kind, host)
                drop = S["faults"]["drop"].get(kind, 0)
                if drop > 0:
                    S["faults"]["drop"][kind] = drop - 1
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                return self.reply(202, None, [("Azure-AsyncOperation", async_url), ("Location", loc_url),
                                              ("Retry-After", str(S["faults"]["retry_after"]))])
            self.reply(405, arm_error("MethodNotAllowed", "The method is not allowed."))


def check_assertion(assertion, cl, cid, tenant):
    try:
        h, c, s = assertion.split(".")
        pad = lambda x: x + "=" * (-len(x) % 4)
        header = json.loads(base64.urlsafe_b64decode(pad(h)))
        claims = json.loads(base64.urlsafe_b64decode(pad(c)))
        sig = base64.urlsafe_b64decode(pad(s))
    except Exception:
        return "AADSTS50027: JWT token is invalid or malformed."
    der = cl.get("cert_der")
    if not der:
        return "AADSTS700027: The certificate with identifier used to sign the client assertion is not registered on application."
    x5t = base64.urlsafe_b64encode(hashlib.sha1(der).digest()).decode().rstrip("=")
    if header.get("x5t") != x5t or header.get("alg") != "RS256":
        return "AADSTS700027: The certificate with identifier used to sign the client assertion is not registered on application."
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    try:
        x509.load_der_x509_certificate(der).public_key().verify(sig, f"{h}.{c}".encode(), padding.PKCS1v15(), hashes.SHA256())
    except Exception:
        return "AADSTS7000274: Key was found, but the client assertion signature could not be verified."
    if claims.get("iss") != cid or claims.get("sub") != cid:
        return "AADSTS700021: Client assertion application identifier doesn't match 'client_id' parameter."
    if not str(claims.get("aud", "")).endswith(f"/{tenant}/oauth2/v2.0/token"):
        return "AADSTS700212: No matching federated identity record found for presented assertion audience."
    if claims.get("exp", 0) <= now():
        return "AADSTS700024: Client assertion is not within its valid time range."
    return None


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
    threading.Thread(target=hvpeer.serve_proxy, args=(ARGS.proxy_port, ctx, ARGS.port),
                     daemon=True).start()
    print(f"azure peer: http {ARGS.port} https {ARGS.tls_port} proxy {ARGS.proxy_port}", flush=True)
    tls.serve_forever()


if __name__ == "__main__":
    main()
