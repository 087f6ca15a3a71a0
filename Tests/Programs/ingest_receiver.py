"""A stand-in for Pyroscope's ingest endpoint, for the end-to-end push test: serves POST /ingest on
127.0.0.1 (any free port, printed as `port N` on stdout), keeps each request as DIR/N.query (the raw
query), DIR/N.headers and DIR/N.pprof (the body), answers 200, and stops after SECONDS.

Usage: python3 ingest_receiver.py DIR SECONDS
"""
import http.server
import os
import sys
import threading

directory, seconds = sys.argv[1], float(sys.argv[2])
counter = [0]
lock = threading.Lock()


class Ingest(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        path, _, query = self.path.partition("?")
        if path != "/ingest":
            self.send_error(404, "only /ingest")
            return
        with lock:
            counter[0] += 1
            number = counter[0]
        base = os.path.join(directory, str(number))
        with open(base + ".headers", "w") as f:
            f.write("".join(f"{name.lower()}: {value}\n" for name, value in self.headers.items()))
        with open(base + ".pprof", "wb") as f:
            f.write(body)
        with open(base + ".query", "w") as f:  # written last: a test that sees it sees the rest
            f.write(query)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ingest)
print(f"port {server.server_address[1]}", flush=True)
threading.Timer(seconds, server.shutdown).start()
server.serve_forever()
