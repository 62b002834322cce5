#!/usr/bin/env python3
"""fencekit's Intel AMT peer: the WS-Management service of an AMT management
engine as fence_amt_ws (fence-agents 4.12.1) talks to it, written from DMTF
DSP0226 (WS-Management: Get, Invoke, faults), DSP1027 (power state management
profile: PowerState values, RequestPowerStateChange return values) and Intel's
AMT SDK reference (the port, the admin user, HTTP Digest, the service's Name
selector, ChangeBootOrder's boot sources). Upstream's agent needs pywsman,
which Debian 12 lacks, so this peer is checked by fencekit only.

The exchange (POST /wsman, application/soap+xml, SOAP 1.2)
  HTTP Digest (RFC 7616, MD5 or SHA-256 with --algorithm, qop=auth): a request
  without an answer, or a wrong one, is 401 with a challenge; nothing is done.
  A nonce is good for --nonce-uses requests; after that the answer is 401 with
  stale=true (the request refused, not carried out).
  Get  CIM_AssociatedPowerManagementService  -> PowerState (2 on, 8 off, ...)
  Invoke CIM_PowerManagementService RequestPowerStateChange (selector Name,
  ManagedElement CIM_ComputerSystem Name=ManagedSystem) -> ReturnValue:
      0 accepted (the state moves --transition-ms later), 2 the transition is
      not possible in the present state (on when on, off when off, reset when
      off), 1 a state the service does not support (anything but 2, 5, 8, 10).
  Invoke CIM_BootConfigSetting ChangeBootOrder -> ReturnValue 0 for the five
      Intel(r) AMT boot sources, 1 otherwise.
  Anything else: a SOAP fault (wsa:ActionNotSupported, w:InvalidSelectors).

Test control, no authentication (a loopback test peer):
  GET  /fencekit/state              JSON {"power": 2, "boot": null, "calls": [...]}
  POST /fencekit/power?value=N      set the reported PowerState (4: sleeping)
  POST /fencekit/silent?count=N     the next N /wsman requests are read and never answered
  POST /fencekit/stale              the next authorized request gets 401 stale=true
  POST /fencekit/reset
Run: amt_ws.py --port P [--bind ADDR] [--password W] [--algorithm MD5|SHA-256]
               [--transition-ms MS] [--info FILE]
"""
import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

SOAP = "http://www.w3.org/2003/05/soap-envelope"
CIM = "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/"
REALM = "Digest:A3829B3827DE4D33D4449B366831FD01"


class World:
    def __init__(self, transition_ms):
        self.lock = threading.Lock()
        self.transition_ms = transition_ms
        self.reset()

    def reset(self):
        with self.lock:
            self.power = 2
            self.boot = None
            self.calls = []
            self.silent = 0
            self.force_stale = False
            self.nonces = {}
            self.gen = 0

    def later(self, value):
        def move():
            time.sleep(self.transition_ms / 1000.0)
            with self.lock:
                self.power = value
        threading.Thread(target=move, daemon=True).start()


def h(alg, text):
    f = hashlib.sha256 if alg == "SHA-256" else hashlib.md5
    return f(text.encode()).hexdigest()


def params(header):
    out = {}
    for m in re.finditer(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]+))', header):
        out[m.group(1).lower()] = m.group(2) if m.group(2) is not None else m.group(3)
    return out


def body_of(cls, inner):
    return ('<?xml version="1.0" encoding="UTF-8"?><a:Envelope xmlns:a="%s" '
            'xmlns:b="http://schemas.xmlsoap.org/ws/2004/08/addressing"><a:Header>'
            '<b:RelatesTo>x</b:RelatesTo></a:Header><a:Body><g:%s xmlns:g="%s%s">%s</g:%s>'
            '</a:Body></a:Envelope>' % (SOAP, cls, CIM, cls, inner, cls))


def fault(code, text):
    return ('<?xml version="1.0" encoding="UTF-8"?><a:Envelope xmlns:a="%s"><a:Body><a:Fault>'
            '<a:Code><a:Value>a:Sender</a:Value><a:Subcode><a:Value>%s</a:Value></a:Subcode></a:Code>'
            '<a:Reason><a:Text xml:lang="en-US">%s</a:Text></a:Reason></a:Fault></a:Body></a:Envelope>'
            % (SOAP, code, text))


def make_handler(world, opts):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, code, text, ctype="application/soap+xml; charset=UTF-8", extra=()):
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def challenge(self, stale=False):
            with world.lock:
                world.gen += 1
                nonce = hashlib.md5(os.urandom(16)).hexdigest()
                world.nonces[nonce] = 0
            v = 'Digest realm="%s", nonce="%s", qop="auth", algorithm=%s%s' % (
                REALM, nonce, opts.algorithm, ', stale="true"' if stale else "")
            self.reply(401, "<html>401 Unauthorized</html>", "text/html", [("WWW-Authenticate", v)])

        def authorized(self):
            a = self.headers.get("Authorization", "")
            if not a.startswith("Digest "):
                return "none"
            p = params(a[7:])
            nonce = p.get("nonce", "")
            alg = opts.algorithm
            ha1 = h(alg, "%s:%s:%s" % (p.get("username", ""), REALM, opts.password))
            ha2 = h(alg, "POST:%s" % p.get("uri", ""))
            want = h(alg, ":".join([ha1, nonce, p.get("nc", ""), p.get("cnonce", ""), "auth", ha2]))
            if p.get("username") != "admin" or p.get("response") != want or p.get("uri") != "/wsman":
                return "bad"
            with world.lock:
                if nonce not in world.nonces:
                    return "bad"
                world.nonces[nonce] += 1
                if world.force_stale or world.nonces[nonce] > opts.nonce_uses:
                    world.force_stale = False
                    del world.nonces[nonce]
                    return "stale"
            return "ok"

        def do_GET(self):
            u = urlsplit(self.path)
            if u.path == "/fencekit/state":
                with world.lock:
                    s = {"power": world.power, "boot": world.boot, "calls": list(world.calls)}
                return self.reply(200, json.dumps(s), "application/json")
            self.reply(404, "not found", "text/plain")

        def do_POST(self):
            u = urlsplit(self.path)
            q = dict(parse_qsl(u.query))
            n = int(self.headers.get("Content-Length", "0") or 0)
            body = self.rfile.read(n).decode("utf-8", "replace")
            if u.path.startswith("/fencekit/"):
                with world.lock:
                    if u.path == "/fencekit/power":
                        world.power = int(q["value"])
                    elif u.path == "/fencekit/silent":
                        world.silent = int(q.get("count", "1"))
                    elif u.path == "/fencekit/stale":
                        world.force_stale = True
                    elif u.path != "/fencekit/reset":
                        return self.reply(404, "no such control\n", "text/plain")
                if u.path == "/fencekit/reset":
                    world.reset()
                return self.reply(200, "ok\n", "text/plain")
            if u.path != "/wsman":
                return self.reply(404, "not found", "text/plain")
            with world.lock:
                if world.silent > 0:
                    world.silent -= 1
                    silent = True
                else:
                    silent = False
            if silent:
                time.sleep(3600)
                return
            auth = self.authorized()
            if auth in ("none", "bad"):
                return self.challenge()
            if auth == "stale":
                with world.lock:
                    world.calls.append("stale")
                return self.challenge(stale=True)
            self.wsman(body)

        def wsman(self, body):
            action = re.search(r"<[\w:]*Action[^>]*>([^<]*)<", body)
            uri = re.search(r"<[\w:]*ResourceURI[^>]*>([^<]*)<", body)
            action = action.group(1).strip() if action else ""
            uri = uri.group(1).strip() if uri else ""
            if action.endswith("/transfer/Get") and uri == CIM + "CIM_AssociatedPowerManagementService":
                with world.lock:
                    world.calls.append("Get")
                    p = world.power
                return self.reply(200, body_of(
                    "CIM_AssociatedPowerManagementService",
                    "<g:AvailableRequestedPowerStates>2</g:AvailableRequestedPowerStates>"
                    "<g:PowerState>%d</g:PowerState><g:RequestedPowerState>2</g:RequestedPowerState>" % p))
            pms = CIM + "CIM_PowerManagementService"
            if action == pms + "/RequestPowerStateChange" and uri == pms:
                sel = "Intel(r) AMT Power Management Service" in body
                ref = ("CIM_ComputerSystem</" in body and ">ManagedSystem<" in body)
                m = re.search(r"<[\w:]*PowerState>(\d+)<", body)
                if not (sel and ref and m):
                    return self.reply(400, fault("w:InvalidSelectors", "bad selectors or reference"))
                want = int(m.group(1))
                with world.lock:
                    world.calls.append("RequestPowerStateChange %d" % want)
                    now = world.power
                    on = now in (2, 3, 4, 7)
                if want not in (2, 5, 8, 10):
                    rv = 1
                elif (want == 2 and on) or (want in (5, 8, 10) and not on):
                    rv = 2
                else:
                    rv = 0
                    world.later(8 if want == 8 else 2)
                return self.reply(200, body_of("CIM_PowerManagementService",
                                               "<g:ReturnValue>%d</g:ReturnValue>" % rv).replace(
                    "g:CIM_PowerManagementService", "g:RequestPowerStateChange_OUTPUT"))
            bcs = CIM + "CIM_BootConfigSetting"
            if action == bcs + "/ChangeBootOrder" and uri == bcs:
                m = re.search(r'Name="InstanceID">(Intel\(r\) AMT: Force [^<]+)<', body)
                with world.lock:
                    world.calls.append("ChangeBootOrder")
                    if m:
                        world.boot = m.group(1)
                rv = 0 if m else 1
                return self.reply(200, body_of("CIM_BootConfigSetting",
                                               "<g:ReturnValue>%d</g:ReturnValue>" % rv).replace(
                    "g:CIM_BootConfigSetting", "g:ChangeBootOrder_OUTPUT"))
            self.reply(400, fault("b:ActionNotSupported", "the action is not supported"))

    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--password", default="amt-Secret1")
    ap.add_argument("--algorithm", default="MD5", choices=["MD5", "SHA-256"])
    ap.add_argument("--transition-ms", type=int, default=300)
    ap.add_argument("--nonce-uses", type=int, default=1000)
    ap.add_argument("--info")
    opts = ap.parse_args()
    world = World(opts.transition_ms)
    srv = ThreadingHTTPServer((opts.bind, opts.port), make_handler(world, opts))
    srv.daemon_threads = True
    if opts.info:
        with open(opts.info, "w") as f:
            f.write(json.dumps({"port": opts.port}))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
