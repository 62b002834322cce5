#!/usr/bin/env python3
"""fencekit's Cisco UCS Manager peer: the XML API (POST /nuova, text/xml)
that fence_cisco_ucs speaks, written from Cisco's UCS Manager XML API
reference, for upstream fence_cisco_ucs 4.12.1 (pycurl) and fencekit.

Methods (each a root element; every answer carries response="yes"):
  <aaaLogin inName inPassword/>      -> <aaaLogin outCookie outRefreshPeriod="600" .../>
                                        a wrong user or password: errorCode="551"
                                        errorDescr="Authentication failed", no cookie
  <aaaLogout inCookie/>              -> <aaaLogout outStatus="success"/>
  <configResolveDn cookie dn inHierarchical/>
                                     -> <configResolveDn dn><outConfig>OBJECT</outConfig>
                                        (empty outConfig for an unknown dn)
  <configResolveClass cookie classId inHierarchical/>  (lsServer, computeBlade,
                                        computeRackUnit, lsPower)
  <configConfMo cookie dn inHierarchical><inConfig><lsPower dn state status="modified"/>
  <configConfMos cookie inHierarchical><inConfigs><pair key=DN><lsPower .../></pair>...
     state: up | admin-up (power on), down | admin-down (power off)
  An unknown, expired or absent cookie: errorCode="552" errorDescr="Authorization required".
  XML that does not parse: errorCode="101" (malformed request).

Objects: lsServer (dn org-root[/org-X]/ls-NAME, name, descr, pnDn, assocState, uuid,
type="instance"), lsPower (dn .../ls-NAME/power, state), computeBlade
(sys/chassis-C/blade-S) and computeRackUnit (sys/rack-unit-N): dn, operPower
(on | off), presence (equipped | missing | mismatch), uuid, serial, assignedToDn.
A power change takes --power-ms (default 100 ms) to show in operPower.

The inventory: org-root: node1 (blade-1, on), node2 (blade-2, on), node3
(rack-unit-1, off), stuck (blade-3, on; its power never changes), gone
(blade-4, presence missing), unassoc (no server); org-root/org-Finance: fin1
(blade-5, on). Users: admin / ucs-secret.

Test control (no authentication; a loopback test peer):
  GET  /fencekit/servers | /fencekit/calls | /fencekit/sessions (open, last cookie)
  POST /fencekit/expire[?count=N&method=M]   the next N requests (of method M) with a
                                 valid cookie find it expired (552; the cookie is gone);
                                 without count: every cookie given so far stops working
  POST /fencekit/drop?count=N    configConfMo(s) carried out, the answer lost
  POST /fencekit/hang?count=N    requests never answered (the connection held)
  POST /fencekit/slow?ms=N       every answer N ms late
  POST /fencekit/reset

Run: ucs_api.py --port P --cert C --key K [--bind ADDR] [--info FILE] [--log FILE]
Prints one JSON line (url, host, port, user, password, cert, pid) when it serves.
"""
import argparse
import copy
import os
import secrets
import threading
import time
import xml.etree.ElementTree as ET
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import quoteattr

import hvpeer

USERS = {"admin": "ucs-secret"}
# name, org path, server dn, operPower, presence, uuid, serial
PROFILES = [
    ("node1", "org-root", "sys/chassis-1/blade-1", "on", "equipped",
     "1b4e28ba-2fa1-11d2-883f-0016d3cca401", "FCH1001A1"),
    ("node2", "org-root", "sys/chassis-1/blade-2", "on", "equipped",
     "1b4e28ba-2fa1-11d2-883f-0016d3cca402", "FCH1001A2"),
    ("node3", "org-root", "sys/rack-unit-1", "off", "equipped",
     "1b4e28ba-2fa1-11d2-883f-0016d3cca403", "WZP1001R1"),
    ("stuck", "org-root", "sys/chassis-1/blade-3", "on", "equipped",
     "1b4e28ba-2fa1-11d2-883f-0016d3cca404", "FCH1001A3"),
    ("gone", "org-root", "sys/chassis-1/blade-4", "off", "missing",
     "1b4e28ba-2fa1-11d2-883f-0016d3cca405", "FCH1001A4"),
    ("unassoc", "org-root", None, None, None, "1b4e28ba-2fa1-11d2-883f-0016d3cca406", None),
    ("fin1", "org-root/org-Finance", "sys/chassis-2/blade-5", "on", "equipped",
     "1b4e28ba-2fa1-11d2-883f-0016d3cca407", "FCH1002A5"),
]
STUCK = {"sys/chassis-1/blade-3"}


class World:
    def __init__(self, power_ms):
        self.lock = threading.Lock()
        self.power_ms = power_ms
        self.reset()

    def reset(self):
        self.profiles = {}
        self.servers = {}
        for name, org, pn, power, presence, uuid, serial in PROFILES:
            dn = "%s/ls-%s" % (org, name)
            self.profiles[dn] = {
                "dn": dn, "name": name, "descr": "profile %s" % name, "pnDn": pn or "",
                "assocState": "associated" if pn else "unassociated", "uuid": uuid,
                "type": "instance", "power": "up" if power == "on" else "down",
            }
            if pn:
                self.servers[pn] = {
                    "dn": pn, "operPower": power, "presence": presence, "uuid": uuid,
                    "serial": serial, "assignedToDn": dn, "pending": None,
                    "class": "computeRackUnit" if "rack-unit" in pn else "computeBlade",
                }
        self.cookies = {}
        self.calls = {}
        self.drop = 0
        self.hang = 0
        self.slow_ms = 0
        self.logouts = 0
        self.expire = 0
        self.expire_method = None
        self.last_cookie = None

    def settle(self):
        now = time.time()
        for s in self.servers.values():
            p = s["pending"]
            if p and p[1] <= now:
                s["operPower"] = p[0]
                s["pending"] = None

    def view(self):
        self.settle()
        return [dict(s) for s in self.servers.values()]


def attrs(d, keys):
    """The attributes in UCS Manager's order: sorted by name."""
    return " ".join("%s=%s" % (k, quoteattr(str(d[k]))) for k in sorted(keys) if d.get(k) is not None)


def ls_server_xml(p):
    return "<lsServer %s/>" % attrs(p, ["dn", "name", "descr", "pnDn", "assocState", "uuid", "type"])


def ls_power_xml(p):
    return '<lsPower childAction="deleteNonPresent" dn=%s state=%s/>' % (
        quoteattr(p["dn"] + "/power"), quoteattr(p["power"]))


def server_xml(s):
    return "<%s %s/>" % (s["class"], attrs(s, ["dn", "operPower", "presence", "uuid", "serial",
                                                "assignedToDn"]))


class H(hvpeer.Handler):
    def send_xml(self, body):
        raw = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        w = self.server.world
        path = urlsplit(self.path).path
        with w.lock:
            if path == "/fencekit/servers":
                return self.plain(200, w.view())
            if path == "/fencekit/calls":
                return self.plain(200, dict(w.calls, logouts=w.logouts))
            if path == "/fencekit/sessions":
                return self.plain(200, {"open": len(w.cookies), "last": w.last_cookie})
        self.plain(404, {"error": "no such control"})

    def control(self, path, q):
        w = self.server.world
        n = int(q.get("count", ["1"])[0])
        with w.lock:
            if path == "/fencekit/reset":
                w.reset()
            elif path == "/fencekit/expire":
                if "count" in q:
                    w.expire, w.expire_method = n, q.get("method", [None])[0]
                else:
                    w.cookies.clear()
            elif path == "/fencekit/drop":
                w.drop = n
            elif path == "/fencekit/hang":
                w.hang = n
            elif path == "/fencekit/slow":
                w.slow_ms = int(q.get("ms", ["0"])[0])
            else:
                return self.plain(404, {"error": "no such control"})
        self.plain(200, {"ok": True})

    def do_POST(self):
        u = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if u.path.startswith("/fencekit/"):
            return self.control(u.path, parse_qs(u.query))
        if u.path != "/nuova":
            return self.plain(404, {"error": "not found"})
        w = self.server.world
        with w.lock:
            hang = w.hang > 0
            if hang:
                w.hang -= 1
            slow = w.slow_ms
        if hang:
            time.sleep(60)
            self.close_connection = True
            return
        if slow:
            time.sleep(slow / 1000.0)
        answer = self.nuova(body)
        if answer is None:
            # Carried out, the answer lost: the connection closes unanswered.
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        self.send_xml(answer)

    def nuova(self, body):
        w = self.server.world
        try:
            root = ET.fromstring(body)
        except ET.ParseError:
            return '<error response="yes" errorCode="101" errorDescr="malformed request"/>'
        m = root.tag
        a = root.attrib
        with w.lock:
            w.calls[m] = w.calls.get(m, 0) + 1
            w.settle()

            def err(code, descr):
                extra = " dn=%s" % quoteattr(a["dn"]) if "dn" in a else ""
                return '<%s%s cookie="" response="yes" errorCode="%s" invocationResult="unidentified-fail" errorDescr="%s"/>' % (
                    m, extra, code, descr)

            if m == "aaaLogin":
                if USERS.get(a.get("inName")) != a.get("inPassword"):
                    return err(551, "Authentication failed")
                cookie = "%d/%s" % (int(time.time()), secrets.token_hex(16))
                w.cookies[cookie] = a.get("inName")
                w.last_cookie = cookie
                return ('<aaaLogin cookie="" response="yes" outCookie="%s" outRefreshPeriod="600" '
                        'outPriv="admin" outDomains="" outChannel="noencssl" outEvtChannel="noencssl" '
                        'outSessionId="web_1" outVersion="4.2(3b)" outName="%s"/>' % (cookie, a.get("inName")))
            if m == "aaaLogout":
                if w.cookies.pop(a.get("inCookie"), None) is None:
                    return err(552, "Authorization required")
                w.logouts += 1
                return '<aaaLogout cookie="" response="yes" outStatus="success"/>'
            cookie = a.get("cookie")
            if cookie in w.cookies and w.expire > 0 and w.expire_method in (None, m):
                w.expire -= 1
                del w.cookies[cookie]
                w.calls["expired"] = w.calls.get("expired", 0) + 1
            if cookie not in w.cookies:
                return err(552, "Authorization required")
            if m == "configResolveDn":
                dn = a.get("dn", "")
                obj = ""
                if dn in w.profiles:
                    obj = ls_server_xml(w.profiles[dn])
                elif dn.endswith("/power") and dn[:-6] in w.profiles:
                    obj = ls_power_xml(w.profiles[dn[:-6]])
                elif dn in w.servers:
                    obj = server_xml(w.servers[dn])
                return '<configResolveDn dn=%s cookie=%s response="yes"><outConfig>%s</outConfig></configResolveDn>' % (
                    quoteattr(dn), quoteattr(cookie), obj)
            if m == "configResolveClass":
                cls = a.get("classId")
                if cls == "lsServer":
                    objs = [ls_server_xml(p) for p in w.profiles.values()]
                elif cls == "lsPower":
                    objs = [ls_power_xml(p) for p in w.profiles.values()]
                elif cls in ("computeBlade", "computeRackUnit"):
                    objs = [server_xml(s) for s in w.servers.values() if s["class"] == cls]
                else:
                    return err(103, "class %s not found" % cls)
                return '<configResolveClass cookie=%s response="yes" classId=%s><outConfigs>%s</outConfigs></configResolveClass>' % (
                    quoteattr(cookie), quoteattr(cls), "".join(objs))
            if m in ("configConfMo", "configConfMos"):
                if m == "configConfMo":
                    pairs = [(a.get("dn", ""), root.find("inConfig/lsPower"))]
                else:
                    pairs = [(p.get("key", ""), p.find("lsPower"))
                             for p in root.findall("inConfigs/pair")]
                out = []
                for dn, el in pairs:
                    if el is None or not dn.endswith("/power") or dn[:-6] not in w.profiles:
                        return err(103, "object %s does not exist" % dn)
                    state = el.get("state")
                    if state not in ("up", "admin-up", "down", "admin-down"):
                        return err(103, "invalid power state %s" % state)
                    p = w.profiles[dn[:-6]]
                    p["power"] = state
                    s = w.servers.get(p["pnDn"])
                    if s and s["dn"] not in STUCK and s["presence"] == "equipped":
                        want = "on" if state.endswith("up") else "off"
                        s["pending"] = (want, time.time() + w.power_ms / 1000.0)
                        if w.power_ms == 0:
                            s["operPower"], s["pending"] = want, None
                    out.append(ls_power_xml(p))
                if w.drop > 0:
                    w.drop -= 1
                    return None
                if m == "configConfMo":
                    return '<configConfMo dn=%s cookie=%s response="yes"><outConfig>%s</outConfig></configConfMo>' % (
                        quoteattr(a.get("dn", "")), quoteattr(cookie), out[0])
                return '<configConfMos cookie=%s response="yes"><outConfigs>%s</outConfigs></configConfMos>' % (
                    quoteattr(cookie), "".join('<pair key=%s>%s</pair>' % (quoteattr(k), o)
                                               for (k, _), o in zip(pairs, out)))
            return err(102, "unknown method %s" % m)


def main():
    ap = argparse.ArgumentParser()
    hvpeer.server_args(ap, port=None)
    ap.add_argument("--power-ms", type=int, default=100)
    a = ap.parse_args()
    world = World(a.power_ms)
    info = lambda port: {"url": "https://%s:%d/nuova" % (a.bind, port), "host": a.bind, "port": port,
                         "user": "admin", "password": USERS["admin"], "cert": os.path.abspath(a.cert),
                         "pid": os.getpid()}
    hvpeer.serve(H, world, a, info)


if __name__ == "__main__":
    main()
