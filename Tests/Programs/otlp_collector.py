"""A stand-in for an OpenTelemetry collector's OTLP/HTTP receiver, for the OTLP push tests: serves
POST to any path ending in /v1/traces or /v1development/profiles on 127.0.0.1 (any free port,
printed as `port N` on stdout), gunzips a body sent with `Content-Encoding: gzip`, decodes it with
the official protobuf definitions (the opentelemetry-proto package from PyPI, installed by
Scripts/setup.sh), keeps DIR/N.headers and DIR/N.json (what it decoded, written last), answers 200
with an empty response message, and stops after SECONDS.

Usage: python3 otlp_collector.py DIR SECONDS
       python3 otlp_collector.py --decode traces|profiles FILE   (prints the JSON of one body)

The JSON: {"signal", "path", "content_encoding" ("" for none), "resource": {key: value}, "scope", "problems": [...], and
"spans": [{trace_id, span_id, parent_span_id (hex, "" for none), name, kind, start, end,
attributes}] or "profiles": [{sample_type "type/unit", period_type, period, time_unix_nano,
duration_nano, total, stacks {"root;...;leaf": value}, threads {"tid name": value}}]}.
"problems" lists what the specification's rules forbid (a table's entry 0 not its zero value, an
index out of its table).
"""
import gzip
import http.server
import json
import os
import sys
import threading

from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.profiles.v1development import profiles_pb2


def any_value(value):
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def attributes(key_values):
    return {kv.key: any_value(kv.value) for kv in key_values}


def decode_traces(body):
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    result = {"signal": "traces", "problems": [], "spans": []}
    for resource_spans in request.resource_spans:
        result["resource"] = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            result["scope"] = scope_spans.scope.name
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8 or span.parent_span_id and len(span.parent_span_id) != 8:
                    result["problems"].append(f"span {span.name}: ids of the wrong length")
                result["spans"].append({
                    "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(), "name": span.name, "kind": span.kind,
                    "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                    "attributes": attributes(span.attributes)})
    return result


def decode_profiles(body):
    request = profiles_service_pb2.ExportProfilesServiceRequest()
    request.ParseFromString(body)
    dictionary = request.dictionary
    problems = []
    strings = dictionary.string_table
    if not strings or strings[0] != "":
        problems.append("string_table[0] is not the empty string")
    for name, message_type in (("mapping_table", profiles_pb2.Mapping), ("location_table", profiles_pb2.Location),
                               ("function_table", profiles_pb2.Function), ("link_table", profiles_pb2.Link),
                               ("attribute_table", profiles_pb2.KeyValueAndUnit), ("stack_table", profiles_pb2.Stack)):
        table = getattr(dictionary, name)
        if not table or table[0] != message_type():
            problems.append(f"{name}[0] is not its zero value")

    def string(index):
        if not 0 <= index < len(strings):
            problems.append(f"string index {index} out of the table")
            return "?"
        return strings[index]

    def frames(stack_index):
        """The stack's function names, root first (a location's lines are innermost first)."""
        names = []
        for location_index in dictionary.stack_table[stack_index].location_indices:
            location = dictionary.location_table[location_index]
            for line in location.lines:
                names.append(string(dictionary.function_table[line.function_index].name_strindex))
        return list(reversed(names))

    result = {"signal": "profiles", "problems": problems, "profiles": []}
    for resource_profiles in request.resource_profiles:
        result["resource"] = attributes(resource_profiles.resource.attributes)
        for scope_profiles in resource_profiles.scope_profiles:
            result["scope"] = scope_profiles.scope.name
            for profile in scope_profiles.profiles:
                stacks, threads, total = {}, {}, 0
                for sample in profile.samples:
                    value = sum(sample.values)
                    total += value
                    key = ";".join(frames(sample.stack_index))
                    stacks[key] = stacks.get(key, 0) + value
                    thread = {}
                    for index in sample.attribute_indices:
                        attribute = dictionary.attribute_table[index]
                        thread[string(attribute.key_strindex)] = any_value(attribute.value)
                    thread_key = f"{thread.get('thread.id')} {thread.get('thread.name')}"
                    threads[thread_key] = threads.get(thread_key, 0) + value
                result["profiles"].append({
                    "sample_type": f"{string(profile.sample_type.type_strindex)}/{string(profile.sample_type.unit_strindex)}",
                    "period_type": f"{string(profile.period_type.type_strindex)}/{string(profile.period_type.unit_strindex)}",
                    "period": profile.period, "time_unix_nano": profile.time_unix_nano,
                    "duration_nano": profile.duration_nano, "profile_id": profile.profile_id.hex(),
                    "total": total, "stacks": stacks, "threads": threads})
    return result


# By the path's ending: a signal's own endpoint variable may name any path.
SIGNALS = {"/v1/traces": (decode_traces, trace_service_pb2.ExportTraceServiceResponse),
           "/v1development/profiles": (decode_profiles, profiles_service_pb2.ExportProfilesServiceResponse)}


def serve(directory, seconds):
    counter = [0]
    lock = threading.Lock()

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            signal = next((SIGNALS[ending] for ending in SIGNALS if self.path.endswith(ending)), None)
            if signal is None:
                self.send_error(404, "only paths ending in /v1/traces and /v1development/profiles")
                return
            decode, response_type = signal
            encoding = self.headers.get("Content-Encoding", "")
            with lock:
                counter[0] += 1
                number = counter[0]
            base = os.path.join(directory, str(number))
            try:
                decoded = decode(gzip.decompress(body) if encoding == "gzip" else body)
            except Exception as error:  # a body gzip or the official definitions cannot read
                decoded = {"signal": "unreadable", "problems": [repr(error)]}
            decoded["path"] = self.path
            decoded["content_encoding"] = encoding
            with open(base + ".headers", "w") as f:
                f.write("".join(f"{name.lower()}: {value}\n" for name, value in self.headers.items()))
            with open(base + ".json", "w") as f:  # written last: a test that sees it sees the rest
                json.dump(decoded, f)
            response = response_type().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(response)))
            self.end_headers()
            self.wfile.write(response)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    print(f"port {server.server_address[1]}", flush=True)
    threading.Timer(seconds, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "--decode":
        with open(sys.argv[3], "rb") as f:
            print(json.dumps({"traces": decode_traces, "profiles": decode_profiles}[sys.argv[2]](f.read())))
    else:
        serve(sys.argv[1], float(sys.argv[2]))
