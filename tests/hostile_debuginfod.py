#!/usr/bin/env python3
"""hostile_debuginfod.py MODE FIFO: a debuginfod server that misbehaves, on
127.0.0.1 (a free port, written to FIFO: the test's handshake). Every
/buildid/... request gets, by MODE:
  stall  nothing: the connection is held open, silent (at most 300 s)
  cut    "200 OK" with Content-Length 1000000, 4096 bytes, then the close
  404    "404 Not Found", as a server without the file
The process ends after 600 s whatever happens (tests/debuginfod.bats kills it
sooner). Requests are logged to stderr, one line each."""
import http.server
import os
import signal
import sys
import threading

mode, fifo = sys.argv[1], sys.argv[2]
signal.alarm(600)
release = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if mode == "stall":
            sys.stderr.write("stall GET %s\n" % self.path)
            sys.stderr.flush()
            release.wait(300)
            return
        if mode == "cut":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            self.wfile.write(b"\x7fELF" + b"\0" * 4092)
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (mode, fmt % args))


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(fifo, "w") as f:
    f.write("%d\n" % srv.server_address[1])
srv.serve_forever()
