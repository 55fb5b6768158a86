#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver for the tracing tests: decodes each ExportTraceServiceRequest
(protobuf or JSON, gzip or not) with opentelemetry-proto's own types, and answers GET /spans
with every span received so far as JSON. Prints "PORT n" once it listens on 127.0.0.1."""
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

spans = []
requests = []
lock = threading.Lock()


def value_text(value):
    kind = value.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "array_value":
        return ",".join(value_text(v) for v in value.array_value.values)
    return str(getattr(value, kind)).lower() if kind == "bool_value" else str(getattr(value, kind))


def attributes(items):
    return {item.key: value_text(item.value) for item in items}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                self.rfile.readline()
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def do_POST(self):
        body = self.read_body()
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        with lock:
            requests.append({"path": self.path, "contentType": self.headers.get("Content-Type", ""),
                             "bytes": len(body)})
        message = trace_service_pb2.ExportTraceServiceRequest()
        if "json" in self.headers.get("Content-Type", ""):
            json_format.Parse(body, message)
        else:
            message.ParseFromString(body)
        received = []
        for resource_spans in message.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append({
                        "traceID": span.trace_id.hex(),
                        "spanID": span.span_id.hex(),
                        "parentSpanID": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "attributes": attributes(span.attributes),
                        "links": [{"traceID": link.trace_id.hex(), "spanID": link.span_id.hex()}
                                  for link in span.links],
                        "service": resource.get("service.name", ""),
                        "statusCode": span.status.code,
                    })
        with lock:
            spans.extend(received)
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        with lock:
            text = json.dumps({"spans": spans, "requests": requests}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT", server.server_address[1], flush=True)
server.serve_forever()
