#!/usr/bin/env python3
"""A stub of the EC2 instance metadata service, version 2, on loopback.

usage: imds_stub.py --listen 127.0.0.1:PORT --instance-id I
                    [--role NAME --key ID --secret S [--token T]] [--log FILE]

PUT /latest/api/token (with X-aws-ec2-metadata-token-ttl-seconds) returns a
session token; every GET must carry it (X-aws-ec2-metadata-token), or gets
401, as IMDSv2 with tokens required answers. GETs: meta-data/instance-id,
meta-data/iam/security-credentials/ (the role's name) and .../ROLE (its
keys as JSON). Requests in proxy form ("GET http://169.254.169.254/...",
what a client sends through HTTP_PROXY) are served the same way, so that
upstream fence_aws, which asks 169.254.169.254 itself, can be pointed here.
--log FILE gets one line per request (method, path, whether a token came).
Prints "ready PORT" on stdout once it listens."""
import argparse, json, secrets, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument('--listen', required=True)
ap.add_argument('--instance-id', required=True)
ap.add_argument('--role')
ap.add_argument('--key')
ap.add_argument('--secret')
ap.add_argument('--token', default='')
ap.add_argument('--log')
args = ap.parse_args()
TOKEN = 'stub-' + secrets.token_hex(16)


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *a):
        pass

    def answer(self, status, text, ctype='text/plain'):
        data = text.encode()
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def note(self, path):
        if args.log:
            with open(args.log, 'a') as f:
                f.write('%s %s token=%s\n' % (
                    self.command, path,
                    self.headers.get('X-aws-ec2-metadata-token') == TOKEN))

    def do_PUT(self):
        path = urllib.parse.urlsplit(self.path).path
        self.note(path)
        n = int(self.headers.get('Content-Length') or 0)
        if n:
            self.rfile.read(n)
        if path != '/latest/api/token':
            return self.answer(404, 'not found')
        if not self.headers.get('X-aws-ec2-metadata-token-ttl-seconds'):
            return self.answer(400, 'missing ttl')
        self.answer(200, TOKEN)

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        self.note(path)
        if self.headers.get('X-aws-ec2-metadata-token') != TOKEN:
            return self.answer(401, 'unauthorized')
        base = '/latest/meta-data/iam/security-credentials/'
        if path == '/latest/meta-data/instance-id':
            return self.answer(200, args.instance_id)
        if path == base and args.role:
            return self.answer(200, args.role + '\n')
        if args.role and path == base + args.role:
            return self.answer(200, json.dumps({
                'Code': 'Success', 'Type': 'AWS-HMAC', 'AccessKeyId': args.key,
                'SecretAccessKey': args.secret, 'Token': args.token,
                'Expiration': '2099-01-01T00:00:00Z'}), 'application/json')
        self.answer(404, 'not found')


host, port = args.listen.rsplit(':', 1)
server = ThreadingHTTPServer((host, int(port)), Handler)
server.daemon_threads = True
print('ready %d' % server.server_address[1], flush=True)
server.serve_forever()
