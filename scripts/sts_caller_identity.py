#!/usr/bin/env python3
"""Answers STS GetCallerIdentity on loopback, for library suites that ask
AWS's STS for the account id before they talk to DynamoDB (moto's
AWS-verified resource-policy tests put that id in their policy documents).
It answers every request with Ferrodyn's one account, 000000000000, and is
part of the test harness only: Ferrodyn itself has no STS.

usage: scripts/sts_caller_identity.py PORT     (runs until killed)
"""
import http.server
import sys
import uuid

ACCOUNT = "000000000000"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = (
            '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
            "<GetCallerIdentityResult>"
            f"<Arn>arn:aws:iam::{ACCOUNT}:root</Arn><UserId>{ACCOUNT}</UserId>"
            f"<Account>{ACCOUNT}</Account>"
            "</GetCallerIdentityResult>"
            f"<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>"
            "</GetCallerIdentityResponse>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
