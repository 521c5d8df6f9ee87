#!/usr/bin/env python3
"""A release download host for the act harness: serves DIR over HTTPS on 127.0.0.1 with the
certificate CERT/KEY (signed by a certificate authority made for one run and trusted only by
that run's curl, through CURL_CA_BUNDLE). Prints the port, then serves until killed.

    release-server.py DIR CERT KEY
"""
import functools
import http.server
import ssl
import sys


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("release-server: " + (fmt % args) + "\n")


def main():
    root, cert, key = sys.argv[1:4]
    handler = functools.partial(Quiet, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
