#!/usr/bin/env python3
"""An HTTP proxy in front of moto's EC2/STS Query API (loopback only) that
produces what moto cannot: throttling, instances in a transition, an
endpoint that never answers. It also logs every request.

usage: ec2_proxy.py --listen 127.0.0.1:PORT [--target http://127.0.0.1:MOTO]
                    [--throttle N] [--throttle-action NAME]
                    [--state INSTANCE=STATE[:COUNT]]...
                    [--sign-sts KEYID:SECRET] [--log FILE]
                    [--refuse-param NAME] [--lose-answer ACTION] [--echo]
                    [--lie FROM=TO]

Without --target it is a black hole: it accepts connections, reads the
request and never answers.
--throttle N       the first N requests (of --throttle-action only, when
                   given) get HTTP 503 with EC2's RequestLimitExceeded error,
                   as EC2 answers a throttled call; moto never sees them.
--state I=S[:N]    DescribeInstances answers show instance I in state S
                   (pending, stopping, shutting-down, ...) for the next N
                   answers (every answer without :N).
--sign-sts ID:SEC  sign requests that carry no Authorization header (STS
                   AssumeRoleWithWebIdentity, which AWS takes unsigned) with
                   this key: moto with IAM authentication on wants every
                   request signed. Needs botocore (the peers' venv).
--log FILE         one JSON line per request: action, access key ID, whether
                   a session token came along, instance IDs, and the other
                   parameters (those whose name says token, secret or
                   password left out).
--refuse-param N   a request carrying the parameter N gets HTTP 400 with
                   EC2's UnknownParameter error naming N, as an EC2 (or a
                   region) that does not know N answers; moto never sees it.
--lose-answer A    requests of action A go to moto, then the connection is
                   closed without an answer (a lost answer: carried out, not
                   known to the client).
--echo             every request gets HTTP 401 with EC2's AuthFailure error
                   whose message quotes the request's Authorization and
                   X-Amz-Security-Token headers (a careless endpoint or debug
                   proxy): what a client prints of it must not carry them.
--lie FROM=TO      DescribeInstances answers name instance TO where moto
                   answered about FROM (an answer about another object).
Prints "ready PORT" on stdout once it listens."""
import argparse, http.client, json, re, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument('--listen', required=True)
ap.add_argument('--target')
ap.add_argument('--throttle', type=int, default=0)
ap.add_argument('--throttle-action')
ap.add_argument('--state', action='append', default=[])
ap.add_argument('--sign-sts')
ap.add_argument('--log')
ap.add_argument('--refuse-param')
ap.add_argument('--lose-answer')
ap.add_argument('--echo', action='store_true')
ap.add_argument('--lie')
args = ap.parse_args()

CODES = {'pending': 0, 'running': 16, 'shutting-down': 32, 'terminated': 48,
         'stopping': 64, 'stopped': 80}
lock = threading.Lock()
throttle_left = [args.throttle]
states = {}
for s in args.state:
    inst, rest = s.split('=', 1)
    name, _, count = rest.partition(':')
    states[inst] = [name, int(count) if count else -1]

THROTTLED = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
             b'<Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message>'
             b'</Error></Errors><RequestID>throttled-by-ec2_proxy</RequestID></Response>')


def unknown_parameter(name):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
            '<Code>UnknownParameter</Code><Message>The parameter %s is not recognized'
            '</Message></Error></Errors><RequestID>refused-by-ec2_proxy</RequestID>'
            '</Response>' % name).encode()


def log(entry):
    if args.log:
        with lock, open(args.log, 'a') as f:
            f.write(json.dumps(entry) + '\n')


def rewrite(body):
    """Shows the instances of --state in their state (bounded counts)."""
    text = body.decode('utf-8', 'replace')
    for inst, st in states.items():
        with lock:
            if st[1] == 0:
                continue
            pattern = re.compile(r'(<instanceId>' + re.escape(inst) +
                                 r'</instanceId>.*?<instanceState>)(.*?)(</instanceState>)', re.S)
            new = ('<code>%d</code><name>%s</name>' % (CODES.get(st[0], 0), st[0]))
            text, n = pattern.subn(lambda m: m.group(1) + new + m.group(3), text)
            if n and st[1] > 0:
                st[1] -= 1
    return text.encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.handle_one()

    def do_GET(self):
        self.handle_one()

    def handle_one(self):
        n = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(n) if n else b''
        form = urllib.parse.parse_qs(body.decode('utf-8', 'replace'))
        action = (form.get('Action') or [''])[0]
        auth = self.headers.get('Authorization') or ''
        m = re.search(r'Credential=([^/]+)/', auth)
        log({'action': action, 'key': m.group(1) if m else None,
             'token': 'X-Amz-Security-Token' in self.headers,
             'instances': [v[0] for k, v in form.items() if k.startswith('InstanceId')],
             'params': {k: v[0] for k, v in form.items()
                        if k not in ('Action', 'Version') and not k.startswith('InstanceId')
                        and not re.search('token|secret|password', k, re.I)},
             't': time.time()})
        if args.echo:
            quoted = ('You sent Authorization: %s; X-Amz-Security-Token: %s' % (
                auth, self.headers.get('X-Amz-Security-Token', '-')))
            quoted = quoted.replace('&', '&amp;').replace('<', '&lt;')
            return self.answer(401, ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors>'
                                     '<Error><Code>AuthFailure</Code><Message>%s</Message></Error>'
                                     '</Errors><RequestID>echo</RequestID></Response>'
                                     % quoted).encode(), 'text/xml')
        if not args.target:
            time.sleep(3600)
            return
        with lock:
            throttle = throttle_left[0] > 0 and action and (
                not args.throttle_action or action == args.throttle_action)
            if throttle:
                throttle_left[0] -= 1
        if throttle:
            return self.answer(503, THROTTLED, 'text/xml')
        if args.refuse_param and args.refuse_param in form:
            return self.answer(400, unknown_parameter(args.refuse_param), 'text/xml')
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ('host', 'content-length', 'connection')}
        # The Host the client signed goes on unchanged (SigV4 signs it).
        host_header = self.headers.get('Host') or target.netloc
        target = urllib.parse.urlsplit(args.target)
        if args.sign_sts and not auth:
            headers = sign(body, headers, host_header)
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        headers['Host'] = host_header
        conn.request(self.command, self.path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        if args.lose_answer and action == args.lose_answer:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if action == 'DescribeInstances' and r.status == 200 and states:
            data = rewrite(data)
        if action == 'DescribeInstances' and r.status == 200 and args.lie:
            frm, to = args.lie.split('=', 1)
            data = data.replace(('<instanceId>%s</instanceId>' % frm).encode(),
                                ('<instanceId>%s</instanceId>' % to).encode())
        self.answer(r.status, data, r.getheader('Content-Type') or 'text/xml')

    def answer(self, status, data, ctype):
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def sign(body, headers, host):
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    key, secret = args.sign_sts.split(':', 1)
    req = AWSRequest(method='POST', url='http://%s/' % host, data=body,
                     headers={'Content-Type': headers.get('Content-Type',
                              'application/x-www-form-urlencoded')})
    SigV4Auth(Credentials(key, secret), 'sts', 'us-east-1').add_auth(req)
    out = dict(headers)
    out.update({k: v for k, v in req.headers.items()})
    return out


host, port = args.listen.rsplit(':', 1)
server = ThreadingHTTPServer((host, int(port)), Handler)
server.daemon_threads = True
print('ready %d' % server.server_address[1], flush=True)
server.serve_forever()
